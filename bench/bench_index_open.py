"""Opening a large gulp directory: time and memory of tf_gulp.GulpDataset against gulpio2's GulpDirectory.

The same directories (N one-frame items of a tiny JPEG, 1,000 items per chunk, written straight as
``data_K.gulp`` + ``meta_K.gmeta``: an ingest of a million items would take hours on two shared
cores) are opened by both, interleaved, each run in a fresh process so that its resident memory is
its own. Per run and side:

- tf_gulp: ``GulpDataset(path, decode=False)`` (the constructor: the index parsed to build the
  dataset), the first element of its first iterator, then the first element of a second pipeline
  built on the same dataset object (``ds.map(...).batch(2)``); RSS grown over the three;
- gulpio2: ``GulpDirectory(path)`` and its first item; RSS grown.

Results (medians over the runs, and each ratio from one run) go to a JSON file
(``--out``, default bench/results/index_open.json); docs/benchmarks.md shows them. Timings are
meaningful only on a quiet machine: the JSON records the load average at the start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_info  # noqa: E402  # pylint: disable=wrong-import-position

_ITEMS_PER_CHUNK = 1000


def _tiny_jpeg() -> bytes:
    import numpy as np
    import simplejpeg

    image = np.full((8, 8, 3), 128, np.uint8)
    return simplejpeg.encode_jpeg(image, quality=75)


def make_directory(path: str, items: int) -> str:
    """A gulp directory of `items` one-frame items (kept between runs: a marker names its size)."""
    marker = os.path.join(path, ".bench_items")
    if os.path.exists(marker) and open(marker, encoding="utf-8").read() == str(items):
        return path
    os.makedirs(path, exist_ok=True)
    jpeg = _tiny_jpeg()
    pad = -len(jpeg) % 4
    frame = jpeg + b"\0" * pad
    for chunk, start in enumerate(range(0, items, _ITEMS_PER_CHUNK)):
        count = min(_ITEMS_PER_CHUNK, items - start)
        with open(os.path.join(path, f"data_{chunk}.gulp"), "wb") as f:
            f.write(frame * count)
        entries = ",".join(
            f'"{start + k}": {{"frame_info": [[{k * len(frame)}, {pad}, {len(frame)}]], '
            f'"meta_data": [{{"label": {(start + k) % 400}}}]}}'
            for k in range(count))
        with open(os.path.join(path, f"meta_{chunk}.gmeta"), "w", encoding="utf-8") as f:
            f.write("{" + entries + "}")
    with open(marker, "w", encoding="utf-8") as f:
        f.write(str(items))
    return path


_RSS = textwrap.dedent("""
    def rss():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
""")

_OURS = _RSS + textwrap.dedent("""
    import json, sys, time
    import tensorflow as tf
    import tf_gulp
    tf_gulp.GulpDataset  # the op library loaded before the baseline
    tf_gulp.ops.library.load_ops()
    base = rss()
    t0 = time.perf_counter()
    ds = tf_gulp.GulpDataset(sys.argv[1], decode=False)
    t1 = time.perf_counter()
    next(iter(ds))
    t2 = time.perf_counter()
    next(iter(ds.map(lambda e: e["id"]).batch(2)))
    t3 = time.perf_counter()
    print(json.dumps({"construct_s": t1 - t0, "first_iterator_s": t2 - t1,
                      "second_pipeline_s": t3 - t2, "open_s": t2 - t0,
                      "rss_bytes": rss() - base}))
""")

_GULPIO2 = _RSS + textwrap.dedent("""
    import json, sys, time
    from gulpio2 import GulpDirectory
    base = rss()
    t0 = time.perf_counter()
    d = GulpDirectory(sys.argv[1])
    t1 = time.perf_counter()
    d["0"]
    t2 = time.perf_counter()
    print(json.dumps({"construct_s": t1 - t0, "first_item_s": t2 - t1, "open_s": t2 - t0,
                      "rss_bytes": rss() - base}))
""")


def _run(code: str, path: str) -> Dict[str, float]:
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         check=False, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(path: str, items: int, runs: int) -> Dict[str, Any]:
    ours: List[Dict[str, float]] = []
    peer: List[Dict[str, float]] = []
    for _ in range(runs):  # interleaved: both see the same machine state
        ours.append(_run(_OURS, path))
        peer.append(_run(_GULPIO2, path))

    def median(rows: List[Dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    result: Dict[str, Any] = {"items": items, "runs": runs}
    for key in ("construct_s", "first_iterator_s", "second_pipeline_s", "open_s", "rss_bytes"):
        result[f"tf_gulp_{key}"] = median(ours, key)
    for key in ("construct_s", "first_item_s", "open_s", "rss_bytes"):
        result[f"gulpio2_{key}"] = median(peer, key)
    result["tf_gulp_rss_bytes_per_item"] = result["tf_gulp_rss_bytes"] / items
    result["gulpio2_rss_bytes_per_item"] = result["gulpio2_rss_bytes"] / items
    result["open_time_ratio_median"] = statistics.median(
        o["open_s"] / p["open_s"] for o, p in zip(ours, peer))
    result["rss_ratio_median"] = statistics.median(
        o["rss_bytes"] / p["rss_bytes"] for o, p in zip(ours, peer) if p["rss_bytes"] > 0)
    result["all_rounds"] = [{"tf_gulp": o, "gulpio2": p} for o, p in zip(ours, peer)]
    return result


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--data", default="/tmp/tf_gulp_bench_index")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "results", "index_open.json"))
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them
    report: Dict[str, Any] = {"benchmark": "index_open", "date": run_info.now(),
                              "command": run_info.command(argv), "machine": machine,
                              "peer": "gulpio2.GulpDirectory", "rounds": args.runs,
                              "results": []}
    for items in args.items:
        path = make_directory(os.path.join(args.data, str(items)), items)
        row = measure(path, items, args.runs)
        report["results"].append(row)
        print(json.dumps(row), flush=True)
    run_info.write_report(args.out, report, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
