"""What every benchmark's results JSON says about its run: when, on which machine, by which command.

bench/plot_results.py prints these three under each plot and refuses a result without them (a plot
that cannot say where its figures come from is not shown in the docs). The few chores every benchmark
shares live here too: importing this checkout's tf_gulp, evicting a file from the page cache, writing
the results JSON."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from typing import Any, Dict, List, Optional

# The repository this benchmark measures (bench/ is its child).
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (platform.processor() is often empty on Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> Dict[str, Any]:
    """The machine and software a run measured: CPU, cores (all and usable), memory, OS, Python,
    commit."""
    try:
        commit: Optional[str] = subprocess.run(
            ["git", "-C", REPO_ROOT, "describe", "--always", "--dirty"],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    try:  # uncommitted changes to tracked files (results being written are not one)
        clean: Optional[bool] = not subprocess.run(
            ["git", "-C", REPO_ROOT, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        clean = None
    info: Dict[str, Any] = {
        "cpu": cpu_model(), "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(), "python": platform.python_version(),
        "tf_gulp_commit": commit, "clean_tree": clean, "loadavg_start": list(os.getloadavg()),
    }
    if "tensorflow" in sys.modules:
        info["tensorflow"] = sys.modules["tensorflow"].__version__
    return info


def command(argv: Optional[List[str]] = None) -> str:
    """The command line that ran the benchmark, the script's path relative to the repository."""
    script = os.path.relpath(os.path.abspath(sys.argv[0]), REPO_ROOT)
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", script] + args)


def now() -> str:
    """The date and time of the run, UTC."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def use_this_checkout() -> None:
    """Puts the repository root (this checkout's ``tf_gulp``) and bench/ first on ``sys.path``, so
    a benchmark run as ``python bench/x.py`` measures the tree it sits in and finds its neighbours."""
    for path in (REPO_ROOT, os.path.join(REPO_ROOT, "bench")):
        if path not in sys.path:
            sys.path.insert(0, path)


def evict(path: str) -> None:
    """Drops a file's pages from the page cache (clean pages only, which a benchmark's data are)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def write_report(path: str, report: Dict[str, Any], indent: int = 1) -> None:
    """Writes a benchmark's results JSON (making its folder) and says where."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=indent)
        f.write("\n")
    print(f"Wrote {path}")
