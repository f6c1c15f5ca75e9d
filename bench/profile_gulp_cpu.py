"""Where GulpDataset's CPU per frame goes, beside the libjpeg-turbo bound: perf profiles by library.

Reads the fair-peers gulp data (bench/bench_fair_peers.py) two ways, each in a process of its own:

* ``GulpDataset`` consumed inside the runtime (``ds.reduce`` in a ``tf.function`` traced once,
  autotuning off: the fair-peers "autotune off" row);
* the libjpeg-turbo bound of bench_fair_peers (simplejpeg decoding each clip into one
  ``[frames, H, W, 3]`` array, one thread per core, from memory).

Each process warms up one pass, then reads ``--passes`` passes while ``perf record`` samples it
(``-p PID``, until it exits) and it measures its own CPU time per frame. ``perf report --sort dso``
splits the samples by library; each share times the process's CPU per frame gives microseconds
per frame per library, so the two readers can be compared library by library. The readers
alternate for ``--rounds`` rounds; the medians go to bench/results/profile_gulp_cpu.json, which
bench/figures.py renders into docs/benchmarks.md. Needs ``perf`` (Debian: linux-perf) and the
permission to attach to one's own processes (``kernel.perf_event_paranoid`` at most 2).

    PYTHONPATH=. python bench/profile_gulp_cpu.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run_info  # noqa: E402

# Libraries grouped as the docs name them; the first pattern a DSO matches wins.
GROUPS = [
    ("libjpeg-turbo", r"turbojpeg|libjpeg|simplejpeg|_jpeg\."),
    ("kernel", r"\[kernel"),
    ("TensorFlow", r"tensorflow|_pywrap|libtensorflow"),
    ("tf_gulp", r"_tf_gulp"),
    ("Python", r"python|_multiarray|numpy"),
    ("libc, libstdc++, loader", r"libc\.|libstdc\+\+|ld-linux|libm\.|libpthread"),
]
OTHER = "other"

# The reading process: prints READY, waits for a line on stdin, reads, prints its result as JSON.
CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {bench!r})
reader, gulp_dir, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
if reader == "GulpDataset":
    import tensorflow as tf
    import tf_gulp
    from bench_fair_peers import in_runtime, without_autotune
    run = in_runtime(without_autotune(tf_gulp.GulpDataset(gulp_dir)), lambda e: e["frames"])
else:
    from bench_fair_peers import CORES
    from bench_gulp_read import load_jpegs
    from decode_bound import bound_reader
    run = bound_reader([frames for _key, _label, frames in load_jpegs(gulp_dir)], CORES, [])
run()
print("READY", flush=True)
sys.stdin.readline()
t0 = os.times()
frames = sum(run() for _ in range(passes))
t1 = os.times()
cpu = (t1.user - t0.user) + (t1.system - t0.system)
print(json.dumps({{"frames": frames, "cpu_seconds": cpu}}), flush=True)
os._exit(0)
"""


def group_of(dso: str) -> str:
    for name, pattern in GROUPS:
        if re.search(pattern, dso):
            return name
    return OTHER


def dso_shares(perf_data: str) -> Dict[str, float]:
    """Percent of the samples per DSO, from `perf report --sort dso`."""
    out = subprocess.run(["perf", "report", "-i", perf_data, "--sort", "dso", "--stdio",
                          "-g", "none", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    shares: Dict[str, float] = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s*$", line)
        if m:
            shares[m.group(2)] = shares.get(m.group(2), 0.0) + float(m.group(1))
    return shares


def profile(reader: str, gulp_dir: str, passes: int) -> Dict[str, Any]:
    """One profiled run of `reader`: CPU per frame and each group's share of the samples."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [run_info.REPO_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(bench=os.path.dirname(os.path.abspath(__file__))),
         reader, gulp_dir, str(passes)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        for line in child.stdout:
            if line.startswith("READY"):
                break
        else:
            raise RuntimeError(f"{reader}: the reading process exited before it was ready")
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "perf.data")
            perf = subprocess.Popen(["perf", "record", "-q", "-F", "1999", "-o", data,
                                     "-p", str(child.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)  # perf attaches before the measured passes start
            if perf.poll() is not None:
                raise RuntimeError(f"perf record failed: {perf.communicate()[1].strip()}")
            child.stdin.write("go\n")
            child.stdin.flush()
            result = json.loads(child.stdout.readline())
            child.wait()
            _, err = perf.communicate(timeout=120)
            if perf.returncode not in (0, None) and not os.path.getsize(data):
                raise RuntimeError(f"perf record failed: {err.strip()}")
            shares = dso_shares(data)
    finally:
        if child.poll() is None:
            child.kill()
    groups: Dict[str, float] = {}
    for dso, pct in shares.items():
        groups[group_of(dso)] = groups.get(group_of(dso), 0.0) + pct
    us_per_frame = result["cpu_seconds"] / result["frames"] * 1e6
    return {"frames": result["frames"], "cpu_seconds": result["cpu_seconds"],
            "cpu_us_per_frame": us_per_frame, "group_percent": groups, "dso_percent": shares}


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    names = [n for n, _ in GROUPS] + [OTHER]
    cpu = statistics.median(r["cpu_us_per_frame"] for r in runs)
    percent = {n: statistics.median(r["group_percent"].get(n, 0.0) for r in runs) for n in names}
    us = {n: statistics.median(r["group_percent"].get(n, 0.0) / 100 * r["cpu_us_per_frame"]
                               for r in runs) for n in names}
    return {"cpu_us_per_frame": cpu, "group_percent": percent, "group_us_per_frame": us,
            "runs": runs}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--passes", type=int, default=4, help="passes over the data per profile")
    p.add_argument("--videos", type=int, default=600)
    p.add_argument("--workdir", default=os.path.join("bench", "results", "data"))
    p.add_argument("--output", default=os.path.join("bench", "results", "profile_gulp_cpu.json"))
    args = p.parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them
    from bench_gulp_read import build_gulp

    os.makedirs(args.workdir, exist_ok=True)
    gulp_dir = build_gulp(argparse.Namespace(videos=args.videos, frames=16, height=240,
                                             width=320, seed=0, workdir=args.workdir))
    readers = ["GulpDataset", "bound"]
    runs: Dict[str, List[Dict[str, Any]]] = {r: [] for r in readers}
    for k in range(args.rounds):
        for reader in readers[k % 2:] + readers[:k % 2]:
            r = profile(reader, gulp_dir, args.passes)
            runs[reader].append(r)
            print(f"  round {k + 1}: {reader}: {r['cpu_us_per_frame']:.0f} us CPU/frame, "
                  f"libjpeg-turbo {r['group_percent'].get('libjpeg-turbo', 0):.1f}%", flush=True)
    report = {"benchmark": "bench/profile_gulp_cpu.py", "date": run_info.now(),
              "command": run_info.command(argv), "machine": machine,
              "rounds": args.rounds, "passes": args.passes,
              "data": f"{args.videos} videos x 16 frames 320x240",
              "groups": [n for n, _ in GROUPS] + [OTHER],
              "readers": {"GulpDataset": summarize(runs["GulpDataset"]),
                          "bound": summarize(runs["bound"])}}
    run_info.write_report(args.output, report, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
