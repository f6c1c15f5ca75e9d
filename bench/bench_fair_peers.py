"""Peers read as their users run them: tf_gulp against gulpio2 and HFAiLab's ffrecord on all cores.

gulpio2 and ffrecord are read in PyTorch by a ``DataLoader`` with worker processes; comparing
tf_gulp on all cores with them in one process flatters tf_gulp. In one run, interleaved round by
round (the order rotates), on the same data, this measures:

* gulp (items: decoded frames): ``GulpDataset`` consumed inside the TensorFlow runtime
  (``ds.reduce`` in a ``tf.function`` traced once, as a training step consumes it: no Python
  per element), the same with tf.data's autotuning off (nothing in this pipeline is autotuned;
  see "Epoch ends" in docs/benchmarks.md) and, apart, iterated from Python (one eager
  ``GetNext`` per clip); gulpio2 in one process; gulpio2 inside
  ``torch.utils.data.DataLoader(num_workers=cores)`` delivering batches of clips to this process;
  gulpio2 bare in one process per core (each its share of the videos, no DataLoader: the upper
  bound of any way of running it); the decode bound (decode_bound.py: libjpeg-turbo decoding the
  same frames from memory into clips, one thread per core), through simplejpeg's build of
  libjpeg-turbo and again through the build the op library links (its reader's own cost is the
  distance to the second; the distance between the two is the library build's);
* FFRecord, 4 KiB records in random batches of 64, checksums on (items: records):
  ``FFRecordDataset`` (the same three ways as ``GulpDataset``); the reference ``ffrecord.FileReader`` in one process, inside a
  ``DataLoader(num_workers=cores)`` (a batch sampler, each worker its own reader), and bare in one
  process per core.

Each reader's CPU time per item counts all its processes (workers included, from /proc). The
reference ffrecord is built from its source beside the project and passed as ``--reference DIR``
(or ``TF_GULP_FFRECORD_REFERENCE``); PyTorch's CPU wheel is installed beside the project too.
Neither is a dependency of tf_gulp. Writes bench/results/fair_peers.json; bench/figures.py renders
it into docs/benchmarks.md.

    PYTHONPATH=. python bench/bench_fair_peers.py --rounds 5 --reference ../ffrecord-build

``--cases ffrecord`` runs only the FFRecord comparison (``--batch``, ``--record-bytes``,
``--records`` set its data).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import iterator_timing  # noqa: E402
import run_info  # noqa: E402

CORES = len(os.sched_getaffinity(0))


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


class Reader:
    """One way of reading the data: `run()` reads it all once and returns the items read;
    `pids()` the other processes whose CPU counts for it (read before and after a run)."""

    def __init__(self, name: str, run: Callable[[], int],
                 pids: Callable[[], Sequence[int]] = lambda: ()):
        self.name, self.run, self.pids = name, run, pids


class PerCore:
    """`CORES` forked processes, each running `work(share)` on its share when told to: the bare
    reading of a peer on all cores, without start-up in the timing."""

    def __init__(self, shares: Sequence[Any], work: Callable[[Any], int]):
        ctx = multiprocessing.get_context("fork")
        self.go = [ctx.Queue() for _ in shares]
        self.done = ctx.Queue()
        self.procs = [ctx.Process(target=self._loop, args=(work, share, q), daemon=True)
                      for share, q in zip(shares, self.go)]
        for p in self.procs:
            p.start()

    def _loop(self, work, share, go) -> None:
        while go.get():
            self.done.put(work(share))

    def run(self) -> int:
        for q in self.go:
            q.put(True)
        return sum(self.done.get() for _ in self.go)

    def pids(self) -> List[int]:
        return [p.pid for p in self.procs]

    def close(self) -> None:
        for q in self.go:
            q.put(False)
        for p in self.procs:
            p.join()


def in_runtime(ds, items: Callable[[Any], Any]) -> Callable[[], int]:
    """Reads `ds` once inside the TensorFlow runtime per call, counting the leading dimension of
    `items(element)`: a `ds.reduce` in a `tf.function` traced at the first (untimed) call, as a
    training loop traces its step once. (A bare `ds.reduce(..., lambda ...)` traces its function
    again at every call, a cost, Python's garbage collector included, that no training step
    pays.)"""
    import tensorflow as tf

    @tf.function
    def count():
        return ds.reduce(tf.constant(0, tf.int64),
                         lambda n, e: n + tf.shape(items(e), out_type=tf.int64)[0])

    return lambda: int(count())


def without_autotune(ds):
    """`ds` with tf.data's autotuning off: its model thread (TensorFlow 2.21) can hold the end of
    an iterator until its next optimisation, up to about one epoch's length (docs/benchmarks.md,
    "Epoch ends")."""
    import tensorflow as tf

    options = tf.data.Options()
    options.autotune.enabled = False
    return ds.with_options(options)


def dataset_readers(name: str, ds, items: Callable[[Any], Any]) -> List[Reader]:
    """One of our datasets' three rows: consumed inside the runtime (as a training step consumes
    it), the same with autotune off, and iterated from Python (its own row, so its per-element
    eager cost stays visible); each counts the leading dimension of `items(element)`."""

    def python_loop() -> int:
        return sum(int(items(e).shape[0]) for e in iterator_timing.iterate(ds))

    return [Reader(name, in_runtime(ds, items)),
            Reader(f"{name}, autotune off", in_runtime(without_autotune(ds), items)),
            Reader(f"{name}, iterated from Python", python_loop)]


def peer_readers(name: str, one: Callable[[], int], loader: Callable[[], int],
                 loader_pids: Callable[[], Sequence[int]], per_core: PerCore) -> List[Reader]:
    """A peer's three rows: one process, a torch DataLoader of CORES workers (`loader_pids`: its
    workers, known after its first run), and CORES bare processes."""
    return [Reader(f"{name}, 1 process", one),
            Reader(f"{name}, DataLoader ({CORES} workers)", loader, loader_pids),
            Reader(f"{name}, {CORES} processes (bare)", per_core.run, per_core.pids)]


# ------------------------------------------------------------------------------------------------
# gulp


def gulp_readers(gulp_dir: str, closers: List[Callable[[], None]]) -> List[Reader]:
    import gulpio2
    import torch
    import tf_gulp
    from bench_gulp_read import load_jpegs
    from decode_bound import OpTurboJpeg, bound_reader, op_turbojpeg_path

    # Counting frames is the least a consumer can do, as `len(frames)` is in the gulpio2 rows.
    ours = dataset_readers("GulpDataset", tf_gulp.GulpDataset(gulp_dir), lambda e: e["frames"])
    gd = gulpio2.GulpDirectory(gulp_dir)
    ids = [key for chunk in gd for key in chunk.meta_dict]

    def gulpio2_one() -> int:
        n = 0
        for chunk in gd:
            for frames, _meta in chunk.iter_all():
                n += len(frames)
        return n

    class Clips(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(ids)

        def __getitem__(self, i: int):
            frames, _meta = gd[ids[i]]
            return torch.from_numpy(np.stack(frames))

    loader = torch.utils.data.DataLoader(Clips(), batch_size=4, shuffle=True, num_workers=CORES,
                                         persistent_workers=True, prefetch_factor=2)
    loader_state: Dict[str, Any] = {}

    def gulpio2_loader() -> int:
        n = sum(int(b.shape[0] * b.shape[1]) for b in loader)
        loader_state["pids"] = [w.pid for w in loader._iterator._workers]
        return n

    def read_share(share: Sequence[str]) -> int:
        n = 0
        for key in share:
            frames, _meta = gd[key]
            n += len(frames)
        return n

    per_core = PerCore([ids[i::CORES] for i in range(CORES)], read_share)
    closers.append(per_core.close)

    clips = [frames for _key, _label, frames in load_jpegs(gulp_dir)]
    bound = bound_reader(clips, CORES, closers)
    op_library = OpTurboJpeg(op_turbojpeg_path())
    op_library_bound = bound_reader(clips, CORES, closers, op_library.decode_clip)
    closers.append(op_library.close)  # after the pool's shutdown, appended just before

    peers = peer_readers("gulpio2", gulpio2_one, gulpio2_loader,
                         lambda: loader_state.get("pids", []), per_core)
    return ours + peers + [
        Reader(f"libjpeg-turbo bound, {CORES} threads", bound),
        Reader(f"libjpeg-turbo bound through the op's library "
               f"({os.path.basename(op_library.path)}), {CORES} threads", op_library_bound)]


# ------------------------------------------------------------------------------------------------
# FFRecord


def ffrecord_readers(path: str, reference, batch: int, seed: int,
                     closers: List[Callable[[], None]]) -> List[Reader]:
    import torch
    import tf_gulp

    ds = tf_gulp.FFRecordDataset(path, batch_size=batch, shuffle=True, seed=seed,
                                 drop_remainder=True)

    one = reference.FileReader(path, True)
    n = one.n
    order = np.random.default_rng(seed).permutation(n)[: n - n % batch].tolist()
    batches = [order[i:i + batch] for i in range(0, len(order), batch)]

    def reference_one() -> int:
        return sum(len(one.read(b)) for b in batches)

    class Batches(torch.utils.data.Dataset):
        """`ds[indices]` is one batch, read by this worker's own reader (opened in the worker:
        the reference's libaio context does not survive a fork)."""

        reader = None

        def __len__(self) -> int:
            return n

        def __getitem__(self, indices):
            if Batches.reader is None:
                Batches.reader = reference.FileReader(path, True)
            return torch.from_numpy(np.stack(Batches.reader.read(indices)))

    sampler = torch.utils.data.BatchSampler(torch.utils.data.RandomSampler(range(n)), batch,
                                            drop_last=True)
    loader = torch.utils.data.DataLoader(Batches(), sampler=sampler, batch_size=None,
                                         num_workers=CORES, persistent_workers=True)
    loader_state: Dict[str, Any] = {}

    def reference_loader() -> int:
        total = sum(int(b.shape[0]) for b in loader)
        loader_state["pids"] = [w.pid for w in loader._iterator._workers]
        return total

    def read_share(share: Sequence[Sequence[int]]) -> int:
        reader = reference.FileReader(path, True)  # in this process, after the fork
        return sum(len(reader.read(b)) for b in share)

    per_core = PerCore([batches[i::CORES] for i in range(CORES)], read_share)
    closers.append(per_core.close)
    return dataset_readers("FFRecordDataset", ds, lambda b: b) + peer_readers(
        "reference", reference_one, reference_loader, lambda: loader_state.get("pids", []),
        per_core)


def write_ffrecord(path: str, records: int, size: int) -> None:
    from tf_gulp.ffrecord import FileWriter

    if os.path.exists(path) and os.path.getsize(path) > records * size:
        return
    rng = np.random.default_rng(size)
    with FileWriter(path, records) as w:
        for _ in range(records):
            w.write_one(rng.bytes(size))


# ------------------------------------------------------------------------------------------------


def measure(readers: List[Reader], rounds: int) -> Dict[str, Dict[str, Any]]:
    """Every reader once untimed, then `rounds` rounds in rotating order. A run iterated from
    Python leaves its finished iterator to `iterator_timing`; it is destroyed after the clock
    stops and before the next run starts (its `tf_data_model` thread and read-ahead threads would
    otherwise live on beside the next readers), and how long that took is each run's
    `teardown_seconds`."""
    for r in readers:
        r.run()
        iterator_timing.teardown_seconds()
    out: Dict[str, Dict[str, Any]] = {r.name: {"runs": []} for r in readers}
    for k in range(rounds):
        for r in readers[k % len(readers):] + readers[:k % len(readers)]:
            pids = list(r.pids())
            cpu0 = own_cpu_seconds() + sum(proc_cpu_seconds(p) for p in pids)
            start = time.perf_counter()
            items = r.run()
            wall = time.perf_counter() - start
            cpu = own_cpu_seconds() + sum(proc_cpu_seconds(p) for p in r.pids()) - cpu0
            teardown = iterator_timing.teardown_seconds()
            out[r.name]["runs"].append({"seconds": wall, "cpu_seconds": cpu, "items": items,
                                        "teardown_seconds": teardown})
            print(f"  round {k + 1}: {r.name}: {items / wall:.0f} items/s", flush=True)
    return out


def summarize(title: str, unit: str, baseline: str, results: Dict[str, Dict[str, Any]]
              ) -> Dict[str, Any]:
    rows = []
    for name, r in results.items():
        items = r["runs"][0]["items"]
        seconds = statistics.median(x["seconds"] for x in r["runs"])
        cpu = statistics.median(x["cpu_seconds"] for x in r["runs"])
        rows.append({"reader": name, "items": items, "median_seconds": seconds,
                     "items_per_s": items / seconds, "cores_used": cpu / seconds,
                     "cpu_us_per_item": 1e6 * cpu / items, "runs": r["runs"]})
    base = next(r for r in rows if r["reader"] == baseline)["items_per_s"]
    for r in rows:
        r["x_baseline"] = r["items_per_s"] / base
    return {"title": title, "unit": unit, "baseline": baseline, "rows": rows}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--videos", type=int, default=600)
    p.add_argument("--records", type=int, default=262144)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--record-bytes", type=int, default=4096, help="size of each FFRecord record")
    p.add_argument("--cases", nargs="+", choices=("gulp", "ffrecord"), default=["gulp", "ffrecord"],
                   help="which comparisons to run (default: both)")
    p.add_argument("--workdir", default=os.path.join("bench", "results", "data"))
    p.add_argument("--reference", default=os.environ.get("TF_GULP_FFRECORD_REFERENCE"))
    p.add_argument("--output", default=os.path.join("bench", "results", "fair_peers.json"))
    args = p.parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them
    if not args.reference:
        p.error("--reference DIR: HFAiLab's ffrecord built from its source beside the project")
    sys.path.insert(0, args.reference)
    import ffrecord as reference

    from bench_gulp_read import build_gulp

    os.makedirs(args.workdir, exist_ok=True)
    closers: List[Callable[[], None]] = []
    cases = []
    try:
        if "gulp" in args.cases:
            gulp_dir = build_gulp(argparse.Namespace(videos=args.videos, frames=16, height=240,
                                                     width=320, seed=0, workdir=args.workdir))
            print("gulp:", flush=True)
            gulp = measure(gulp_readers(gulp_dir, closers), args.rounds)
            cases.append(summarize(f"Gulp, {args.videos} videos x 16 frames 320x240, decoded",
                                   "frames", "gulpio2, 1 process", gulp))
        if "ffrecord" in args.cases:
            size = args.record_bytes
            ffr = os.path.join(args.workdir, f"fair_{args.records}x{size}.ffr")
            write_ffrecord(ffr, args.records, size)
            print("ffrecord:", flush=True)
            ffrec = measure(ffrecord_readers(ffr, reference, args.batch, 1, closers), args.rounds)
            shown = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} bytes"
            cases.append(summarize(f"FFRecord, {args.records} records of {shown}, random "
                                   f"batches of {args.batch}, warm, checksums on", "records",
                                   "reference, 1 process", ffrec))
    finally:
        for close in closers:
            close()
    report = {"benchmark": "bench/bench_fair_peers.py", "date": run_info.now(),
              "command": run_info.command(argv), "machine": machine,
              "rounds": args.rounds, "cores": CORES, "cases": cases}
    run_info.write_report(args.output, report, indent=1)
    for case in cases:
        print(case["title"])
        for r in case["rows"]:
            print(f"  {r['reader']:40s} {r['items_per_s']:9.0f}/s  x{r['x_baseline']:.2f}  "
                  f"{r['cpu_us_per_item']:7.0f} us CPU/item  {r['cores_used']:.2f} cores")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
