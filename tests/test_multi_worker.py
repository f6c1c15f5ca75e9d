"""MultiWorkerMirroredStrategy with two worker processes on localhost (TF_CONFIG): ``model.fit``
(tf-keras, TF_USE_LEGACY_KERAS=1) on the sharded source of every format of the registry, as
docs/distributed.md writes it. Each worker decodes only its share (every element its pipeline
decodes is labelled: disjoint, together the whole epoch, each once), the workers train together
(equal weights afterwards), and the time each worker takes for its share and for the whole is
printed. Keras 3 (TensorFlow 2.21's default tf.keras): its model.fit still fails under this
strategy, which the docs say, and the custom loop they offer instead trains. The docs' example
itself runs on two workers."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys

import pytest
from formats_testing import FORMATS
from gulp_testing import make_gulp_dir
from ingest_testing import REPO_ROOT, cli_env

WORKER = str(REPO_ROOT / "tests" / "multi_worker_testing.py")


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


# Elements of each format's dataset (the each_format fixture): a multiple of 8 (two workers,
# STEPS = 4 steps each).
FORMAT_SIZE = 48


def launch(args, tmp_path, name, env=None, num_workers=2):
    """Runs ``python ARGS`` as each of num_workers workers of one cluster on localhost; returns
    their logs (stdout and stderr) once all have exited 0."""
    ports = free_ports(num_workers)
    cluster = {"worker": [f"localhost:{p}" for p in ports]}
    procs = []
    for i in range(num_workers):
        worker_env = cli_env()
        worker_env.pop("TF_USE_LEGACY_KERAS", None)
        worker_env.update(env or {})
        worker_env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                              "task": {"type": "worker", "index": i}})
        worker_env["CUDA_VISIBLE_DEVICES"] = ""
        procs.append(subprocess.Popen([sys.executable] + [str(a) for a in args(i)],
                                      env=worker_env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, cwd=str(tmp_path)))
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=240)[0].decode(errors="replace"))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for i, (p, log) in enumerate(zip(procs, logs)):
        assert p.returncode == 0, f"{name} worker {i}:\n{log[-4000:]}"
    return logs


def run_workers(mode, fmt, path, num_elements, tmp_path, env=None):
    outs = [tmp_path / f"{fmt}_{i}.json" for i in range(2)]
    launch(lambda i: [WORKER, mode, fmt, path, num_elements, outs[i]], tmp_path, fmt, env)
    return [json.loads(o.read_text()) for o in outs]


def check_shares_and_training(results, all_keys):
    """What each worker decoded while training: its share, once; the shares disjoint and together
    the whole epoch. And the workers trained together: the all-reduced steps leave the same
    weights on both."""
    assert sorted((r["num_shards"], r["index"]) for r in results) == [(2, 0), (2, 1)]
    shares = [set(r["keys"]) for r in results]
    for r, s in zip(results, shares):
        assert len(r["keys"]) == len(s), "an element decoded twice"
        assert r["share"] == len(s) == len(all_keys) // 2  # the share read alone: the same size
        assert r["whole"] == len(all_keys)
    assert not shares[0] & shares[1]  # disjoint
    assert shares[0] | shares[1] == set(all_keys)  # complete
    for r in results:
        assert len(r["losses"]) >= 1 and all(l == l for l in r["losses"]), r["losses"]
    assert results[0]["weights"] == pytest.approx(results[1]["weights"])


def check_auto_shard_warning(results):
    # experimental_distribute_dataset on the unsharded source: warned, once, with the fix.
    for r in results:
        assert len(r["auto_shard_warnings"]) == 1, r["auto_shard_warnings"]
        assert "distribute_datasets_from_function" in r["auto_shard_warnings"][0]


def report_times(fmt, results):
    # The times are reported, not asserted: two workers and a reader of everything share the
    # machine's cores with whatever else runs, so one sample can go either way. That a shard never
    # reads the rest is pinned by tests/test_sharding.py (a damaged element outside the share is
    # never touched); bench/bench_scaleout.py measures the time.
    print(f"\n{fmt}: " + "; ".join(
        f"worker {r['index']} ({r['mode']}, Keras {r['keras']}): trained in "
        f"{r['train_seconds']:.2f} s; its {r['share']} elements read alone in {r['seconds']:.3f} s,"
        f" the whole {r['whole']} in {r['whole_seconds']:.3f} s "
        f"(ratio {r['seconds'] / r['whole_seconds']:.2f})"
        for r in results))


def test_model_fit_two_workers(each_format, tmp_path):
    fmt, written = each_format
    results = run_workers("fit", fmt.name, written.path, len(written.keys), tmp_path,
                          env={"TF_USE_LEGACY_KERAS": "1"})
    assert all(r["keras"].startswith("tf_keras 2.") for r in results), results[0]["keras"]
    check_shares_and_training(results, written.keys)
    check_auto_shard_warning(results)
    report_times(fmt.name, results)


@pytest.mark.parametrize("element_delay", [0, 0.05], ids=["as-fast-as-it-goes", "slow-machine"])
def test_keras3_fit_fails_and_custom_loop_trains(tmp_path, element_delay):
    """Keras 3 (tf.keras without TF_USE_LEGACY_KERAS): model.fit fails under this strategy as
    docs/distributed.md says (when a Keras release fixes it, this fails: update the docs), and the
    custom loop the docs offer instead trains on the sharded source. The slow-machine case makes
    every element take 50 ms: the failed fit's iterator then is still decoding while the custom
    loop trains (on slow machines it was, and its late labels looked like elements decoded twice)."""
    written = FORMATS["gulp"].write(tmp_path, FORMAT_SIZE)
    path, all_keys = written.path, written.keys
    results = run_workers("custom-loop", "gulp", path, len(all_keys), tmp_path,
                          env={"TF_GULP_TEST_ELEMENT_DELAY": str(element_delay)})
    assert all(r["keras"].startswith("keras 3.") for r in results), results[0]["keras"]
    documented = "ValueError: Attempt to convert a value (PerReplica"
    assert documented in (REPO_ROOT / "docs" / "distributed.md").read_text()
    for r in results:
        error = r["keras3_fit_error"]
        assert error, "Keras 3's model.fit trained: update docs/distributed.md"
        assert error.startswith(documented), error
        assert "unsupported type (<class 'tensorflow.python.distribute.values.PerReplica'>)" in (
            error)
    check_shares_and_training(results, all_keys)
    report_times("gulp", results)
    print("keys labelled by the failed fit's iterator, after it failed and after the custom loop: "
          + "; ".join(f"{r['fit_keys_after_failure']} -> {r['fit_keys_after_training']}"
                      for r in results))


def docs_fit_example() -> str:
    """The model.fit example of docs/distributed.md (the Python block that runs model.fit under
    MultiWorkerMirroredStrategy)."""
    page = (REPO_ROOT / "docs" / "distributed.md").read_text()
    examples = [b for b in re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
                if "MultiWorkerMirroredStrategy()" in b and "model.fit(" in b]
    assert len(examples) == 1, "docs/distributed.md: one model.fit example expected"
    return examples[0]


def test_docs_fit_example_on_two_workers(tmp_path):
    """The docs' example as a user runs it (tests/test_docs_examples.py runs it in one process,
    a cluster of one): two workers, TF_USE_LEGACY_KERAS=1, its /data/ paths on small data."""
    root = tmp_path / "data"
    make_gulp_dir(root / "kinetics_gulp", num_videos=16, frames_per_video=8, height=24, width=32,
                  videos_per_chunk=4)
    script = tmp_path / "train.py"
    script.write_text(docs_fit_example().replace("/data/", f"{root}/"))
    logs = launch(lambda i: [script], tmp_path, "docs example", env={"TF_USE_LEGACY_KERAS": "1"})
    for log in logs:
        # tf-keras prints one line per epoch when its output is not a terminal.
        epochs = re.findall(r"^Epoch (\d+)/(\d+)$", log, re.M)
        assert epochs and epochs[-1][0] == epochs[-1][1], log[-3000:]
        assert re.search(r"loss: [0-9.]+", log), log[-3000:]
