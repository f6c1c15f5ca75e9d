"""The GPU path's figures: the device check (tools/gpu_device_check.sh) once, then its timed phases
again, into one results JSON that docs/gpu.md quotes through bench/figures.py.

Run on a GPU machine (no TensorFlow needed; the device tool's machines have none):

    python3 bench/bench_gpu_check.py --rounds 5 --commit HASH --clean-tree --output OUT/gpu_check.json

Round 1 is the device check itself: every phase (build, runtime, the warp kernels against the CPU
path, NVDEC against the CPU path, throughput with nvidia-smi dmon beside it, compute-sanitizer, and
the profile, situations, jpeg and nvjpeg phases its extra.json holds), its exit status and summary. Rounds 2..N run the two timed phases again (`device_check warp` and
`device_check throughput` on the same build), so the figures are medians over N rounds, each
round kept. `--commit` and `--clean-tree` say which tree ran: the device tool copies the working
tree beside a git that need not be at its commit (git's own answer is kept too). `--dry-run`
runs the same steps against the host stand-in of the driver (no GPU, no NVDEC:
the throughput rounds report NVDEC unavailable); tests/test_gpu_device_check.py runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence

import run_info

REPO = run_info.REPO_ROOT
SCRIPT = os.path.join(REPO, "tools", "gpu_device_check.sh")
DATA = os.path.join(REPO, "cc", "gpu", "testing", "data")
PHASES = ("env", "runtime", "warp", "nvdec", "throughput", "memcheck")
EXTRA_PHASES = ("profile", "situations", "jpeg", "nvjpeg")  # the device check's extra.json, one key each
WARP_RATES = ("rgb_warp_512_to_224_images_per_s", "fused_nv12_warp_512_to_224_images_per_s")
RATES = ("decode_images_per_s", "decode_and_warp_images_per_s", "decode_second_half_images_per_s",
         "decode_and_warp_second_half_images_per_s")


def read_json(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_phase(exe: str, args: Sequence[str], timeout: float) -> Dict[str, Any]:
    """One more run of a device_check phase: its JSON line, or what went wrong."""
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("{")), None)
    if proc.returncode != 0 or line is None:
        return {"error": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-600:]}
    return json.loads(line)


def median_throughput(rounds: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Per (samples, sessions): the median of each rate over the rounds that measured it."""
    cells: Dict[tuple, Dict[str, List[float]]] = {}
    for r in rounds:
        for run in r.get("runs", []):
            cell = cells.setdefault((run["samples"], run["sessions"]), {k: [] for k in RATES})
            for k in RATES:
                if run.get(k) is not None:
                    cell[k].append(run[k])
    # The two first rates always (None where no round measured them); the others where measured.
    return [{"samples": s, "sessions": n, "rounds": len(v[RATES[0]]),
             **{k: statistics.median(v[k]) if v[k] else None for k in RATES
                if v[k] or k in RATES[:2]}}
            for (s, n), v in cells.items()]


def median_warp(rounds: List[Dict[str, Any]]) -> Dict[str, Optional[float]]:
    out: Dict[str, Optional[float]] = {}
    for k in WARP_RATES:
        values = [r[k] for r in rounds if r.get(k) is not None]
        out[k] = statistics.median(values) if values else None
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="rounds of the timed phases (>= 1)")
    p.add_argument("--dry-run", action="store_true",
                   help="against the host stand-in of the driver (no GPU needed)")
    p.add_argument("--commit",
                   help="the commit that ran (the device machine's git may be older than its tree)")
    p.add_argument("--clean-tree", action="store_true",
                   help="the tree that ran had no uncommitted changes")
    p.add_argument("--checkdir", help="where the device check writes its files (default: a "
                   "temporary folder; the results JSON carries all of them)")
    p.add_argument("--output", required=True, help="the results JSON")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")

    machine = run_info.machine()
    if args.commit:  # the device tool's copy carries the session's first commit's git, not HEAD's
        machine["git_says"] = {"commit": machine["tf_gulp_commit"],
                               "clean_tree": machine["clean_tree"]}
        machine["tf_gulp_commit"] = args.commit
        machine["clean_tree"] = True if args.clean_tree else None
        machine["commit_from"] = "--commit"

    checkdir = args.checkdir or tempfile.mkdtemp(prefix="gpu_check_")
    check = [SCRIPT] + (["--dry-run"] if args.dry_run else []) + [checkdir]
    print(f"round 1/{args.rounds}: {' '.join(check)}", flush=True)
    proc = subprocess.run(check, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    summary = proc.stdout.split("==== summary", 1)[-1].splitlines()[1:]
    phases = {name: read_json(os.path.join(checkdir, f"{name}.json")) for name in PHASES}
    extra = read_json(os.path.join(checkdir, "extra.json")) or {}
    phases.update({name: extra.get(name) for name in EXTRA_PHASES})
    env = phases["env"] or {}
    machine["gpu"] = env.get("nvidia_smi")
    machine["nvcc"] = env.get("nvcc")

    build = os.environ.get("GPU_CHECK_BUILD") or os.path.join(
        REPO, "build", "gpu_dry" if args.dry_run else "gpu")
    exe = os.path.join(build, "device_check_dry" if args.dry_run else "device_check")
    small = ["--small"] if args.dry_run else []
    # The device check's own per-phase timeouts (env.json), not a second copy of them.
    limits = env.get("phase_timeouts_s") or {"warp": 60, "throughput": 90}
    warp_rounds = [phases["warp"] or {"error": "no warp.json"}]
    throughput_rounds = [phases["throughput"] or {"error": "no throughput.json"}]
    for i in range(2, args.rounds + 1):
        if not os.access(exe, os.X_OK):
            break  # the build failed: round 1 says so
        print(f"round {i}/{args.rounds}: warp, throughput", flush=True)
        warp_rounds.append(run_phase(exe, ["warp", *small], limits["warp"]))
        throughput_rounds.append(run_phase(
            exe, ["throughput", "--data", DATA, "--budget-s", str(limits["throughput"] - 20),
                  *small], limits["throughput"]))

    dmon = ""
    try:  # logs.txt's dmon section (the build's log comes first)
        with open(os.path.join(checkdir, "logs.txt"), encoding="utf-8") as f:
            logs = f.read()
        at = logs.find("==== nvidia-smi dmon")
        dmon = logs[at:][-20000:] if at >= 0 else ""
    except OSError:
        pass
    report = {
        "benchmark": "gpu_check", "date": run_info.now(), "machine": machine,
        "command": run_info.command(argv), "rounds": args.rounds, "dry_run": args.dry_run,
        "device_check": {"command": " ".join(os.path.relpath(c, REPO) if c.startswith(REPO)
                                             else c for c in check[:-1]) + " OUTDIR",
                         "exit_status": proc.returncode, "summary": summary,
                         "phases": phases, "dmon": dmon},
        "runs": {"warp": warp_rounds, "throughput": throughput_rounds},
        "medians": {"warp": median_warp(warp_rounds),
                    "throughput": median_throughput(throughput_rounds)},
    }
    run_info.write_report(args.output, report)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
