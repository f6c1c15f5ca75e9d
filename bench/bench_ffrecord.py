#!/usr/bin/env python3
"""FFRecord random-batch read throughput: tf_gulp vs the reference reader vs TFRecord vs fio.

One command writes the data (once; reused while the parameters match), runs every reader on the same
files in the same run, and writes JSON to bench/results/ffrecord.json:

    PYTHONPATH=. python3 bench/bench_ffrecord.py [--size-mb 1024] [--rounds 3]
        [--reference /path/to/ffrecord/install] [--output bench/results/ffrecord.json]

Data: for each record size (4 KiB and 256 KiB), one FFRecord file of ``--size-mb`` MiB of random
bytes, written with tf_gulp's FileWriter, and a TFRecord file of the same records (no compression).

Configurations: record size x batch size (64, 256) x page cache (warm: the whole file read once
before; cold: its pages evicted with posix_fadvise(DONTNEED) right before each timed run, after the
reader was opened). Readers, each reading the same number of records per run:

* ``FFRecordDataset``     ``tf_gulp.FFRecordDataset(file, batch_size=B, shuffle=True, seed=round)``,
                          iterated from Python (``for batch in ds.take(k)``); one io_uring submission
                          per batch, checksums on;
* ``FFRecordDataset+prefetch``  the same followed by ``.prefetch(AUTOTUNE)`` (how a training
                          pipeline uses it: reading overlaps the consumer);
* ``FileReader``          ``tf_gulp.ffrecord.FileReader(file, access="random").read(batch)`` with
                          the batches of a random permutation; checksums on;
* ``FileReader(no crc)``  the same with ``check_data=False`` (what the checksums cost);
* ``reference``           HFAiLab's ``ffrecord.FileReader(file).read(batch)``, the same batches;
                          checksums on (only when the package is importable: ``--reference`` adds its
                          install folder to sys.path; otherwise the row is skipped with the reason);
* ``TFRecordDataset+prefetch``  ``tf.data.TFRecordDataset(tfrecord).batch(B).prefetch(AUTOTUNE)``
                          from the start of the file: sequential (TFRecord has no random access);
* ``tf.data floor``       ``Dataset.from_tensors(<B short strings>).repeat()`` iterated the same way:
                          no I/O at all, only tf.data's per-element cost from Python (the bound for
                          small batches of the two datasets above);
* ``fio``                 ``fio --rw=randread --bs=<record size> --iodepth=min(B, device queue limit)
                          --ioengine=io_uring`` on the FFRecord file, buffered like the readers (cold:
                          ``--invalidate=1``; warm: after the file was read once), as many reads as
                          the readers make;
* ``fio pages``           the same with ``--bs=<record size + 4 KiB>``: the pages a record really
                          touches (records start 12 + 12 N bytes into the file, so a 4 KiB record
                          spans two pages, an 8 KiB device read; fio's 4 KiB reads are aligned).

Readers run interleaved round by round (the order rotates); each row reports the median round.
records/s counts records; GB/s is 10^9 bytes of record payload per second. A tf.data run is timed
from creating its iterator to its last element; destroying the iterator afterwards (TensorFlow
stops its autotuning thread there, up to 0.3 s) is timed apart and kept in the JSON
(bench/iterator_timing.py explains why).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import run_info  # noqa: E402  (bench/run_info.py, next to this script)

run_info.use_this_checkout()

import iterator_timing  # noqa: E402  (bench/, next to this script)
from tf_gulp.ffrecord import FileReader, FileWriter  # noqa: E402

RECORD_SIZES = (4096, 256 * 1024)
BATCH_SIZES = (64, 256)
# Records read per timed run: enough for ~0.2-2 s per run on the development machines.
READS = {4096: 32768, 256 * 1024: 1024}


# -------------------------------------------------------------------------------------------------
# Data and page cache


def make_data(workdir: str, size_mb: int) -> Dict[int, Dict[str, Any]]:
    import tensorflow as tf

    os.makedirs(workdir, exist_ok=True)
    out = {}
    for rec in RECORD_SIZES:
        n = size_mb * 1024 * 1024 // rec
        ffr = os.path.join(workdir, f"records_{rec}.ffr")
        tfr = os.path.join(workdir, f"records_{rec}.tfrecord")
        params = os.path.join(workdir, f"records_{rec}.json")
        want = {"record_bytes": rec, "n": n, "version": 1}
        if not (os.path.exists(ffr) and os.path.exists(tfr) and os.path.exists(params)
                and json.load(open(params)) == want):
            print(f"writing {n} records of {rec} bytes ({size_mb} MiB) to {workdir}", flush=True)
            rng = np.random.default_rng(rec)
            with FileWriter(ffr, n) as w, tf.io.TFRecordWriter(tfr) as t:
                for _ in range(n):
                    r = rng.bytes(rec)
                    w.write_one(r)
                    t.write(r)
            with open(params, "w") as f:
                json.dump(want, f)
        out[rec] = {"ffr": ffr, "tfr": tfr, "n": n}
    return out


def warm(path: str) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


# -------------------------------------------------------------------------------------------------
# Readers: each returns a callable that performs one timed run and returns records read


def _records_of_batches(ds) -> Callable[[], int]:
    """A run over a tf.data pipeline of record batches: counts the records."""
    def run():
        return sum(int(b.shape[0]) for b in iterator_timing.iterate(ds))
    return run


def _random_batch_reads(reader, rnd: int, batch: int, reads: int) -> Callable[[], int]:
    """A run of ``reader.read(indices)`` over the batches of a seeded random permutation."""
    order = np.random.default_rng(rnd).permutation(reader.n)[:reads].tolist()
    batches = [order[i:i + batch] for i in range(0, reads, batch)]

    def run():
        return sum(len(reader.read(b)) for b in batches)
    return run



def reader_ffrecord_dataset(ffr, tfr, rec, batch, reads, rnd, prefetch=False):
    import tensorflow as tf
    import tf_gulp

    ds = tf_gulp.FFRecordDataset(ffr, batch_size=batch, shuffle=True, seed=rnd,
                                 drop_remainder=True).take(reads // batch)
    if prefetch:
        ds = ds.prefetch(tf.data.AUTOTUNE)
    return _records_of_batches(ds)


def reader_file_reader(ffr, tfr, rec, batch, reads, rnd):
    return _random_batch_reads(FileReader(ffr, access="random"), rnd, batch, reads)


def reader_file_reader_nocrc(ffr, tfr, rec, batch, reads, rnd):
    return _random_batch_reads(FileReader(ffr, check_data=False, access="random"), rnd, batch,
                               reads)


def reader_floor(ffr, tfr, rec, batch, reads, rnd):
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensors(tf.constant([b"x" * 16] * batch)).repeat(reads // batch)
    return _records_of_batches(ds)


def reader_reference(module):
    def make(ffr, tfr, rec, batch, reads, rnd):
        return _random_batch_reads(module.FileReader(ffr, True), rnd, batch, reads)

    return make


def reader_tfrecord(ffr, tfr, rec, batch, reads, rnd):
    import tensorflow as tf

    ds = (tf.data.TFRecordDataset(tfr).batch(batch, drop_remainder=True).take(reads // batch)
          .prefetch(tf.data.AUTOTUNE))
    return _records_of_batches(ds)


def device_queue_limit(path: str) -> int:
    """nr_requests of the block device holding `path` (256 when unknown)."""
    try:
        dev = os.stat(path).st_dev
        sysdir = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
        for candidate in (sysdir, os.path.join(sysdir, "..")):
            q = os.path.join(candidate, "queue", "nr_requests")
            if os.path.exists(q):
                return int(open(q).read())
    except (OSError, ValueError):
        pass
    return 256


def run_fio(ffr: str, rec: int, depth: int, reads: int, cold: bool,
            block: Optional[int] = None) -> Dict[str, float]:
    """fio random reads of `block` bytes (default: the record size) at queue depth `depth`; the
    rates are counted in reads, so they compare with records/s."""
    size = os.path.getsize(ffr)
    block = block or rec
    cmd = ["fio", "--name=ffr", f"--filename={ffr}", "--rw=randread", f"--bs={block}",
           f"--iodepth={depth}", "--ioengine=io_uring", "--direct=0",
           f"--invalidate={1 if cold else 0}", f"--size={size // block * block}",
           f"--io_size={reads * block}", "--output-format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    # GB/s of `rec`-byte records at that rate, to compare with the readers' payload rates.
    return {"records_per_s": job["iops"], "GB_per_s": job["iops"] * rec / 1e9, "cmd": " ".join(cmd)}


# -------------------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size-mb", type=int, default=1024, help="MiB of records per file")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--workdir", default=os.path.join(run_info.REPO_ROOT, "bench", "results", "data",
                                                     "ffrecord"))
    p.add_argument("--output", default=os.path.join(run_info.REPO_ROOT, "bench", "results",
                                                    "ffrecord.json"))
    p.add_argument("--reference", default=os.environ.get("TF_GULP_FFRECORD_REFERENCE"),
                   help="folder holding HFAiLab's ffrecord package (added to sys.path)")
    p.add_argument("--quick", action="store_true", help="a smoke run: 64 MiB files, 1 round")
    args = p.parse_args(argv)
    if args.quick:
        args.size_mb, args.rounds = 64, 1
        READS.update({4096: 4096, 256 * 1024: 256})

    import tensorflow as tf
    import tf_gulp
    from tf_gulp import _core

    readers: Dict[str, Callable] = {
        "FFRecordDataset": reader_ffrecord_dataset,
        "FFRecordDataset+prefetch": functools.partial(reader_ffrecord_dataset, prefetch=True),
        "FileReader": reader_file_reader,
        "FileReader(no crc)": reader_file_reader_nocrc,
        "TFRecordDataset+prefetch": reader_tfrecord,
        "tf.data floor": reader_floor,
    }
    skipped: Dict[str, str] = {}
    if args.reference:
        sys.path.insert(0, args.reference)
    try:
        import ffrecord as reference  # HFAiLab's package, when built beside the project

        readers["reference"] = reader_reference(reference)
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        skipped["reference"] = (f"HFAiLab ffrecord is not importable ({type(e).__name__}: {e}); "
                                "build it outside the repository and pass --reference DIR")
    have_fio = shutil.which("fio") is not None
    if not have_fio:
        skipped["fio"] = "fio is not installed (Debian: apt-get install fio)"

    data = make_data(args.workdir, args.size_mb)
    results: List[Dict[str, Any]] = []
    for rec in RECORD_SIZES:
        d = data[rec]
        limit = device_queue_limit(d["ffr"])
        for batch in BATCH_SIZES:
            reads = READS[rec] // batch * batch
            for cache in ("warm", "cold"):
                times: Dict[str, List[float]] = {name: [] for name in readers}
                teardowns: Dict[str, List[float]] = {name: [] for name in readers}
                fio_runs: List[Dict[str, float]] = []
                fio_page_runs: List[Dict[str, float]] = []
                for rnd in range(args.rounds):
                    names = list(readers)
                    names = names[rnd % len(names):] + names[:rnd % len(names)]
                    for name in names:
                        path = d["tfr"] if name.startswith("TFRecordDataset") else d["ffr"]
                        run = readers[name](d["ffr"], d["tfr"], rec, batch, reads, rnd)
                        if cache == "warm":
                            warm(path)
                        else:
                            run_info.evict(path)
                        start = time.perf_counter()
                        count = run()
                        elapsed = time.perf_counter() - start
                        teardowns[name].append(iterator_timing.teardown_seconds())
                        assert count == reads, (name, count, reads)
                        times[name].append(elapsed)
                    if have_fio:
                        if cache == "warm":
                            warm(d["ffr"])
                        fio_runs.append(run_fio(d["ffr"], rec, min(batch, limit), reads,
                                                cache == "cold"))
                        if cache == "warm":
                            warm(d["ffr"])
                        fio_page_runs.append(run_fio(d["ffr"], rec, min(batch, limit), reads,
                                                     cache == "cold", block=rec + 4096))
                for name, ts in times.items():
                    t = statistics.median(ts)
                    results.append({"reader": name, "record_bytes": rec, "batch": batch,
                                    "cache": cache, "records": reads,
                                    "records_per_s": reads / t, "GB_per_s": reads * rec / t / 1e9,
                                    "seconds": ts,
                                    "iterator_teardown_seconds": teardowns[name]})
                for name, runs in (("fio", fio_runs), ("fio pages", fio_page_runs)):
                    if not runs:
                        continue
                    mid = sorted(runs, key=lambda r: r["records_per_s"])[len(runs) // 2]
                    results.append({"reader": name, "record_bytes": rec, "batch": batch,
                                    "cache": cache, "records": reads, "iodepth": min(batch, limit),
                                    "records_per_s": mid["records_per_s"],
                                    "GB_per_s": mid["GB_per_s"], "cmd": mid["cmd"],
                                    "rounds_records_per_s": [r["records_per_s"] for r in runs]})
                row = {r["reader"]: r["records_per_s"] for r in results
                       if (r["record_bytes"], r["batch"], r["cache"]) == (rec, batch, cache)}
                print(f"{rec:>7} B  batch {batch:>3}  {cache}: " +
                      "  ".join(f"{k} {v:,.0f}/s" for k, v in row.items()), flush=True)

    def rate(reader, rec, batch, cache):
        for r in results:
            if (r["reader"], r["record_bytes"], r["batch"], r["cache"]) == (reader, rec, batch, cache):
                return r["records_per_s"]
        return None

    ratios = []
    for rec in RECORD_SIZES:
        for batch in BATCH_SIZES:
            for cache in ("warm", "cold"):
                entry = {"record_bytes": rec, "batch": batch, "cache": cache}
                ref = rate("reference", rec, batch, cache)
                fio = rate("fio", rec, batch, cache)
                fio_pages = rate("fio pages", rec, batch, cache)
                for ours in ("FFRecordDataset", "FFRecordDataset+prefetch", "FileReader"):
                    value = rate(ours, rec, batch, cache)
                    if ref:
                        entry[f"{ours}/reference"] = value / ref
                    if fio:
                        entry[f"{ours}/fio"] = value / fio
                    if fio_pages and cache == "cold":
                        entry[f"{ours}/fio pages"] = value / fio_pages
                tfr = rate("TFRecordDataset+prefetch", rec, batch, cache)
                entry["FFRecordDataset+prefetch/TFRecordDataset+prefetch"] = rate(
                    "FFRecordDataset+prefetch", rec, batch, cache) / tfr
                ratios.append(entry)

    report = {
        "benchmark": "bench/bench_ffrecord.py",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join([os.path.relpath(sys.argv[0], run_info.REPO_ROOT)] + (argv or sys.argv[1:])),
        "machine": run_info.machine(),
        "versions": {"tensorflow": tf.__version__, "tf_gulp": tf_gulp.__version__},
        "io_uring": _core.io_uring_available(),
        "params": {"size_mb": args.size_mb, "rounds": args.rounds, "reads": READS,
                   "record_bytes": list(RECORD_SIZES), "batch_sizes": list(BATCH_SIZES),
                   "files": {str(k): v["n"] for k, v in data.items()},
                   "device_queue_limit": device_queue_limit(data[RECORD_SIZES[0]]["ffr"])},
        "skipped": skipped,
        "results": results,
        "ratios": ratios,
    }
    print(markdown(report))
    run_info.write_report(args.output, report, indent=1)
    return 0


def markdown(report: Dict[str, Any]) -> str:
    """The results as the Markdown tables of docs/benchmarks.md (FFRecord)."""
    results = report["results"]
    readers = []
    for r in results:
        if r["reader"] not in readers:
            readers.append(r["reader"])
    lines = ["| records | batch | cache | " + " | ".join(readers) + " |",
             "|---|---|---|" + "---|" * len(readers)]
    for rec in report["params"]["record_bytes"]:
        for batch in report["params"]["batch_sizes"]:
            for cache in ("warm", "cold"):
                cells = []
                for name in readers:
                    row = [r for r in results if (r["reader"], r["record_bytes"], r["batch"],
                                                  r["cache"]) == (name, rec, batch, cache)]
                    if not row:
                        cells.append("—")
                        continue
                    r = row[0]
                    if name == "tf.data floor":  # no record bytes: only the element rate counts
                        cells.append(f"{r['records_per_s'] / 1000:,.1f}k")
                    else:
                        cells.append(f"{r['records_per_s'] / 1000:,.1f}k / {r['GB_per_s']:.2f}")
                size = f"{rec // 1024} KiB"
                lines.append(f"| {size} | {batch} | {cache} | " + " | ".join(cells) + " |")
    keys: List[str] = []
    for e in report["ratios"]:
        keys += [k for k in e if "/" in k and k not in keys]
    lines += ["", "| records | batch | cache | " + " | ".join(keys) + " |",
              "|---|---|---|" + "---|" * len(keys)]
    for e in report["ratios"]:
        cells = [f"{e[k]:.2f}" if k in e else "—" for k in keys]
        lines.append(f"| {e['record_bytes'] // 1024} KiB | {e['batch']} | {e['cache']} | " +
                     " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
