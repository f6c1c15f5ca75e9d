#!/usr/bin/env python3
"""GulpDataset's two shuffles on one directory, same run: read speed (warm and cold page cache)
and how many classes a batch mixes.

* ``uniform``  ``GulpDataset(dir, shuffle=True)``: a uniform keyed permutation of all items (the
               default);
* ``window``   ``GulpDataset(dir, shuffle=True, shuffle_chunk_window=4)``: the chunk order
               permuted, then the items of 4 consecutive chunks permuted together (opt-in).

The directory is written class by class, as ingest tools write a folder-per-class source: each
chunk holds the videos of one class (``--classes`` classes of ``--chunks-per-class`` chunks of
``--videos-per-chunk`` videos; JPEG-realistic synthetic clips from bench_gulp_read.py). Every
video's frames are decoded (uint8 RGB), consumed as ``batch(--batch).prefetch(AUTOTUNE)``.

Warm: the chunk files are read right before each timed run. Cold: the page cache is dropped right
before each timed run: ``echo 3 > /proc/sys/vm/drop_caches`` where that is permitted (root on the
host or a privileged container), else ``posix_fadvise(DONTNEED)`` on every chunk file (which
evicts only this data's clean pages); the JSON records which (``cold_method``).

Each is timed decoding the clips (what training reads) and reading only (``decode=False``: the
JPEG bytes, where the order's effect on I/O shows). Rounds interleave the two readers (the order
alternates each round); the JSON holds every run and the medians; the ratio uniform / window is
of the medians (items per second). Mixing: the mean
number of distinct labels per batch over ``--mixing-epochs`` epochs of each shuffle, and what a
uniform draw gives in theory.

Usage (from the repository root)::

    PYTHONPATH=. python3 bench/bench_shuffle.py [--classes 40] [--rounds 5]
        [--output bench/results/shuffle.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any, Dict, Iterator, List, Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import run_info  # noqa: E402  (bench/run_info.py, next to this script)

run_info.use_this_checkout()
from bench_gulp_read import synthetic_video  # noqa: E402

from tf_gulp.gulp import AbstractDatasetAdapter, GulpIngestor  # noqa: E402

WINDOW = 4


class ClassByClassAdapter(AbstractDatasetAdapter):
    """Videos written class by class: video i is of class i // per_class."""

    def __init__(self, classes: int, per_class: int, frames: int, height: int, width: int):
        self.classes, self.per_class = classes, per_class
        self.frames, self.height, self.width = frames, height, width

    def __len__(self) -> int:
        return self.classes * self.per_class

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        for i in range(len(self))[slice_element or slice(None)]:
            yield {"id": f"video_{i:05d}", "meta": {"label": i // self.per_class},
                   "frames": synthetic_video(i, self.frames, self.height, self.width)}


def build(args: argparse.Namespace) -> str:
    params = {k: getattr(args, k) for k in ("classes", "chunks_per_class", "videos_per_chunk",
                                             "frames", "height", "width")}
    params["version"] = 2  # integer labels
    name = "shuffle_" + "_".join(f"{v}" for v in params.values())
    path = os.path.join(args.workdir, name)
    marker = os.path.join(path, "bench_params.json")
    if os.path.exists(marker):
        with open(marker) as f:
            if json.load(f) == params:
                return path
    os.makedirs(path, exist_ok=True)
    for entry in os.listdir(path):
        os.remove(os.path.join(path, entry))
    adapter = ClassByClassAdapter(args.classes, args.chunks_per_class * args.videos_per_chunk,
                                  args.frames, args.height, args.width)
    # One worker: chunks are written in order, so chunk c holds videos [c * vpc, (c + 1) * vpc).
    GulpIngestor(adapter, path, videos_per_chunk=args.videos_per_chunk, num_workers=1,
                 progress=False)()
    with open(marker, "w") as f:
        json.dump(params, f)
    return path


def chunk_files(path: str) -> List[str]:
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".gulp"))


def drop_caches_works() -> bool:
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def make_cold(path: str, method: str) -> None:
    if method == "drop_caches":
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return
    for name in chunk_files(path):
        run_info.evict(name)


def make_warm(path: str) -> None:
    for name in chunk_files(path):
        with open(name, "rb", buffering=0) as f:
            while f.read(16 << 20):
                pass


def dataset(path: str, mode: str, seed: int, decode: bool = True):
    import tf_gulp
    window = WINDOW if mode == "window" else None
    return tf_gulp.GulpDataset(path, shuffle=True, seed=seed, decode=decode,
                               shuffle_chunk_window=window)


def timed(path: str, mode: str, batch: int, seed: int, decode: bool = True) -> float:
    """Items per second of one pass, decoded (or only read: ``decode=False``), batched and
    prefetched."""
    import tensorflow as tf
    ds = dataset(path, mode, seed, decode=decode).map(lambda e: (e["frames"], e["label"]))
    ds = ds.batch(batch).prefetch(tf.data.AUTOTUNE)
    items = 0
    start = time.perf_counter()
    for _frames, labels in ds:
        items += int(labels.shape[0])
    return items / (time.perf_counter() - start)


def distinct_per_batch(path: str, mode: str, batch: int, epochs: int, seed: int) -> float:
    ds = dataset(path, mode, seed, decode=False)
    counts = []
    for _ in range(epochs):
        labels = [int(e["label"]) for e in ds]
        counts += [len(set(labels[i:i + batch]))
                   for i in range(0, len(labels) - batch + 1, batch)]
    return statistics.mean(counts)


def uniform_expectation(classes: int, per_class: int, batch: int) -> float:
    n, missed = classes * per_class, 1.0
    for k in range(batch):
        missed *= (n - per_class - k) / (n - k)
    return classes * (1 - missed)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--classes", type=int, default=40)
    p.add_argument("--chunks-per-class", type=int, default=3)
    p.add_argument("--videos-per-chunk", type=int, default=4)
    p.add_argument("--frames", type=int, default=8)
    p.add_argument("--height", type=int, default=120)
    p.add_argument("--width", type=int, default=160)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--mixing-epochs", type=int, default=5)
    p.add_argument("--cold-method", choices=("auto", "drop_caches", "fadvise"), default="auto")
    p.add_argument("--workdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                     "tf_gulp_bench"))
    p.add_argument("--output", default=os.path.join(run_info.REPO_ROOT, "bench", "results",
                                                    "shuffle.json"))
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them
    path = build(args)
    method = args.cold_method
    if method == "auto":
        method = "drop_caches" if drop_caches_works() else "fadvise"
    # Decoded clips (what training reads), and the JPEG bytes only (decode=False: the reads alone,
    # where the order's effect on I/O shows).
    runs: Dict[str, Dict[str, List[float]]] = {
        c: {m: [] for m in ("uniform", "window", "uniform_read", "window_read")}
        for c in ("warm", "cold")}
    for mode in ("uniform", "window"):  # untimed: traces, opens, and the index parsed once
        timed(path, mode, args.batch, seed=99)
    for r in range(args.rounds):
        order = ("uniform", "window") if r % 2 == 0 else ("window", "uniform")
        for cache in ("warm", "cold"):
            for decode in (True, False):
                for mode in order:
                    make_warm(path) if cache == "warm" else make_cold(path, method)
                    runs[cache][mode + ("" if decode else "_read")].append(
                        timed(path, mode, args.batch, seed=r, decode=decode))
        print(f"round {r}: " + ", ".join(f"{c} {m} {runs[c][m][-1]:.0f} items/s"
                                         for c in runs for m in runs[c]), flush=True)
    medians = {c: {m: statistics.median(v) for m, v in runs[c].items()} for c in runs}
    per_class = args.chunks_per_class * args.videos_per_chunk
    mixing = {m: distinct_per_batch(path, m, args.batch, args.mixing_epochs, seed=1)
              for m in ("uniform", "window")}
    data_bytes = sum(os.path.getsize(f) for f in chunk_files(path))
    report = {
        "benchmark": "bench_shuffle", "date": run_info.now(), "machine": machine,
        "command": run_info.command(argv),
        "dataset": {"classes": args.classes, "chunks_per_class": args.chunks_per_class,
                    "videos_per_chunk": args.videos_per_chunk, "frames": args.frames,
                    "height": args.height, "width": args.width, "bytes": data_bytes,
                    "written": "class by class (one class per chunk)"},
        "batch": args.batch, "window": WINDOW, "rounds": args.rounds, "cold_method": method,
        "items_per_second": runs, "median_items_per_second": medians,
        "ratio_uniform_over_window": {
            c + suffix: medians[c]["uniform" + suffix] / medians[c]["window" + suffix]
            for c in medians for suffix in ("", "_read")},
        "distinct_classes_per_batch": dict(
            mixing, uniform_theory=uniform_expectation(args.classes, per_class, args.batch)),
    }
    run_info.write_report(args.output, report, indent=2)
    print(json.dumps({k: report[k] for k in ("median_items_per_second",
                                             "ratio_uniform_over_window",
                                             "distinct_classes_per_batch")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
