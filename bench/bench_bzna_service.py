#!/usr/bin/env python3
"""BenzinaDataset under tf.data service: what the per-process entry index cache saves.

With dynamic sharding (``distributed_epoch``) each entry of a pass is one split. In trees where
the Benzina reader was an index op + map, each split asked its worker for the container's entry
index (the ``BznaEntryIndex`` op): without the cache (cc/mp4/entry_index_cache.h) a worker read and
parsed the file's moov box once per image; with it, once per file. Since ``BenzinaDataset`` is a
source kernel, a worker's kernel reads the index when it is made (through the same cache), not per
split. This benchmark reads ``--elements`` images (``decode=False``: the samples' bytes, so
the index cost is not hidden behind HEVC decoding) from a container of ``--entries`` entries through
an in-process dispatcher and one worker, once per tree given with ``--trees`` (e.g. a checkout
without the cache, and this one), alternating the trees round by round in child processes, and
reports each tree's median images/s, the ratio, and the index reads the cache counted.

Usage (from the repository root; each tree must have its op library built)::

    python bench/bench_bzna_service.py --trees /path/to/before . --out /tmp/bzna_service.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def write_container(path: str, entries: int) -> None:
    """A container of `entries` stand-in samples (200 bytes each) with int64 targets."""
    from tf_gulp.bzna import container as C

    sample = 200
    head = C.ftyp()
    base = len(head) + 16
    t_base = base + sample * entries
    with open(path, "wb") as f:
        f.write(head + C.large_box_header(b"mdat", sample * entries + 8 * entries))
        for i in range(entries):
            f.write((b"%08d" % i) * (sample // 8))
        f.write(b"".join(struct.pack("<q", i % 1000) for i in range(entries)))
        f.write(C.moov([C.TrackSpec("bzna_input", [base + sample * i for i in range(entries)],
                                    [sample] * entries),
                        C.TrackSpec("bzna_target", [t_base + 8 * i for i in range(entries)],
                                    [8] * entries)]))


def once(path: str, elements: int) -> dict:
    """One timed service pass in this process (the tree on sys.path)."""
    import tensorflow as tf

    from tf_gulp.bzna.dataset import BenzinaDataset
    from tf_gulp.ops.bzna import bzna_ops

    stats = getattr(bzna_ops, "bzna_index_cache_stats", None)  # absent in trees without the cache
    dispatcher = tf.data.experimental.service.DispatchServer()
    worker = tf.data.experimental.service.WorkerServer(tf.data.experimental.service.WorkerConfig(
        dispatcher_address=dispatcher.target.split("://")[1]))
    ds = BenzinaDataset(path, decode=False, shuffle=True, seed=1).map(lambda x: x["label"])
    ds = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=dispatcher.target)).take(elements)
    before = stats() if stats else None
    start = time.perf_counter()
    got = sum(1 for _ in ds)
    seconds = time.perf_counter() - start
    after = stats() if stats else None
    worker.stop()
    dispatcher.stop()
    return {"elements": got, "seconds": seconds, "images_per_s": got / seconds,
            "index_reads": None if before is None else after[0] - before[0],
            "index_hits": None if before is None else after[1] - before[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", nargs="+", default=["."],
                        help="repository checkouts to compare (each with its op library built)")
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--elements", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=None, help="write the JSON report here too")
    parser.add_argument("--once", default=None, help=argparse.SUPPRESS)  # child: a container path
    args = parser.parse_args()
    if args.once:
        print(json.dumps(once(args.once, args.elements)))
        return

    trees = [os.path.abspath(t) for t in args.trees]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.bzna")
        write_container(path, args.entries)
        runs = {t: [] for t in trees}
        for r in range(args.rounds):
            for tree in trees[r % len(trees):] + trees[:r % len(trees)]:
                env = dict(os.environ, PYTHONPATH=tree, TF_CPP_MIN_LOG_LEVEL="2")
                proc = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--once", path,
                     "--elements", str(args.elements)],
                    env=env, cwd=tree, capture_output=True, text=True, check=True)
                runs[tree].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        size = os.path.getsize(path)
    report = {"entries": args.entries, "elements": args.elements, "file_bytes": size,
              "rounds": args.rounds, "trees": {}}
    for tree, results in runs.items():
        report["trees"][tree] = {
            "images_per_s_median": statistics.median(x["images_per_s"] for x in results),
            "images_per_s": [round(x["images_per_s"], 1) for x in results],
            "index_reads": [x["index_reads"] for x in results],
            "index_hits": [x["index_hits"] for x in results]}
    if len(trees) == 2:
        a, b = (report["trees"][t]["images_per_s_median"] for t in trees)
        report["ratio_second_to_first"] = b / a
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
