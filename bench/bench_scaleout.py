#!/usr/bin/env python3
"""Scale-out reads: a remote path (TensorFlow's ``ram://`` file system) against the same data on a
local path, and a shard of a dataset against the whole, for GulpDataset and FFRecordDataset (and
the shard for BenzinaDataset).

* ``remote`` rows: the same gulp directory / FFRecord files copied to ``ram://`` with
  ``tf.io.gfile``; read through ``tensorflow::Env`` (cc/io/file_system.h) instead of pread /
  io_uring. ``ram://`` has no network latency, so this measures the cost of the file-system layer
  (an extra copy per read, the parallel-read threads), not an object store's round trips.
* ``shard`` rows: ``ds.shard(n, i)`` for n = 2 and 4 against ``ds``: the time one of n workers
  spends on its share, which is what multi-worker training pays per worker. The bound is 1/n
  (``shard_bound`` in the JSON): a shard that reads only its share approaches it as the per-element
  work outweighs the per-pass costs; one that read everything and dropped the rest would be near 1.

Every pipeline is consumed inside the TF runtime (``ds.reduce``; no Python per element), runs once
untimed first, and then ``--rounds`` times interleaved with the others (the order rotates each
round); the JSON reports each one's median and the ratios.

Usage (from the repository root)::

    PYTHONPATH=. python bench/bench_scaleout.py --out /tmp/scaleout.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import tf_gulp  # noqa: E402
from ffrecord_testing import ffrecord_bytes, sample_records  # noqa: E402
from gulp_testing import make_gulp_dir  # noqa: E402

from bench_bzna import prepare as prepare_bzna  # noqa: E402


def copy_tree(local: str, remote: str) -> None:
    tf.io.gfile.makedirs(remote)
    for name in os.listdir(local):
        tf.io.gfile.copy(os.path.join(local, name), f"{remote}/{name}", overwrite=True)


def count(ds: tf.data.Dataset) -> int:
    return int(ds.reduce(tf.constant(0, tf.int64), lambda n, *_: n + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=160)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--images", type=int, default=48, help="Benzina images (300-500 px)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=None, help="write the JSON report here too")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="tf_gulp_bench_scaleout_")
    gulp_local = os.path.join(work, "gulp")
    make_gulp_dir(gulp_local, args.videos, args.frames, 240, 320, videos_per_chunk=40)
    ffr_local = os.path.join(work, "ffr")
    os.makedirs(ffr_local)
    with open(os.path.join(ffr_local, "a.ffr"), "wb") as f:
        f.write(ffrecord_bytes(sample_records(args.records)))
    bzna, _ = prepare_bzna(os.path.join(work, "bzna"), args.images, "ultrafast")
    prefix = f"ram://tf_gulp_bench_{uuid.uuid4().hex}"
    copy_tree(gulp_local, f"{prefix}/gulp")
    copy_tree(ffr_local, f"{prefix}/ffr")

    gulp = lambda path: tf_gulp.GulpDataset(path, shuffle=True, seed=1, num_frames=4)
    ffr = lambda path, **kw: tf_gulp.FFRecordDataset(path, shuffle=True, seed=1, **kw)
    benzina = lambda: tf_gulp.BenzinaDataset(bzna, shuffle=True, seed=1)
    pipelines = {
        "gulp local": lambda: gulp(gulp_local),
        "gulp ram://": lambda: gulp(f"{prefix}/gulp"),
        "gulp local shard(2, 0)": lambda: gulp(gulp_local).shard(2, 0),
        "gulp local shard(4, 1)": lambda: gulp(gulp_local).shard(4, 1),
        "ffrecord local batch 256": lambda: ffr(ffr_local, batch_size=256),
        "ffrecord ram:// batch 256": lambda: ffr(f"{prefix}/ffr", batch_size=256),
        "ffrecord local": lambda: ffr(ffr_local),
        "ffrecord ram://": lambda: ffr(f"{prefix}/ffr"),
        "ffrecord local shard(2, 0)": lambda: ffr(ffr_local).shard(2, 0),
        "ffrecord local shard(4, 1)": lambda: ffr(ffr_local).shard(4, 1),
        "benzina local": benzina,
        "benzina local shard(2, 0)": lambda: benzina().shard(2, 0),
        "benzina local shard(4, 1)": lambda: benzina().shard(4, 1),
    }
    datasets = {name: make() for name, make in pipelines.items()}
    elements = {name: count(ds) for name, ds in datasets.items()}  # untimed first pass
    times = {name: [] for name in datasets}
    names = list(datasets)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            n = count(datasets[name])
            times[name].append(time.perf_counter() - start)
            assert n == elements[name], (name, n, elements[name])
    median = {name: statistics.median(t) for name, t in times.items()}
    ratios = {
        "gulp ram:// / local": median["gulp ram://"] / median["gulp local"],
        "ffrecord ram:// / local (batch 256)":
            median["ffrecord ram:// batch 256"] / median["ffrecord local batch 256"],
        "ffrecord ram:// / local (single records)":
            median["ffrecord ram://"] / median["ffrecord local"],
        "gulp shard(2, 0) / whole": median["gulp local shard(2, 0)"] / median["gulp local"],
        "gulp shard(4, 1) / whole": median["gulp local shard(4, 1)"] / median["gulp local"],
        "ffrecord shard(2, 0) / whole":
            median["ffrecord local shard(2, 0)"] / median["ffrecord local"],
        "ffrecord shard(4, 1) / whole":
            median["ffrecord local shard(4, 1)"] / median["ffrecord local"],
        "benzina shard(2, 0) / whole":
            median["benzina local shard(2, 0)"] / median["benzina local"],
        "benzina shard(4, 1) / whole":
            median["benzina local shard(4, 1)"] / median["benzina local"],
    }
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "tensorflow": tf.__version__},
        "params": vars(args),
        "elements": elements,
        "median_seconds": median,
        "all_seconds": times,
        "ratios": ratios,
        "shard_bound": {"shard(2, 0) / whole": 1 / 2, "shard(4, 1) / whole": 1 / 4},
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    tf.io.gfile.rmtree(prefix)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
