"""Plots of the benchmarks' JSON results, as the PNGs the docs show next to their tables.

    python bench/plot_results.py [--results bench/results] [--out docs/images] [--only NAME ...]

Reads what each benchmark writes (its --output, by default in bench/results/) and draws one PNG per
benchmark whose JSON is there:

    gulp_read.json  (bench/bench_gulp_read.py)  -> gulp_read.png  (docs/benchmarks.md)
    ffrecord.json   (bench/bench_ffrecord.py)   -> ffrecord.png   (docs/benchmarks.md)
    bzna.json       (bench/bench_bzna.py)       -> bzna.png       (docs/benchmarks.md)
    ingest.json     (bench/bench_ingest.py)     -> ingest.png     (docs/benchmarks.md)
    fused_warp.json (bench/bench_fused_warp.py) -> fused_warp.png (docs/benchmarks.md)

Every plot is labelled with the run's date, machine and command, read from the JSON the benchmark
wrote (bench/run_info.py), and carries them in the PNG's text chunks too ("Date", "Machine",
"Command"). A JSON without them is refused, unless it says why it lacks them ("to_be_regenerated",
or a "provenance" that says its figures were transcribed from a table of the docs): such a plot is
drawn with "TO BE REGENERATED" in its title and label until the benchmark is run again. After a new
run, regenerate the plots and update the docs' tables together. Needs matplotlib
(requirements-dev.txt; not a dependency of tf_gulp).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Our readers/writers in one colour, the others in another, bounds and baselines in grey.
OURS = "#1f77b4"
OTHERS = "#ff7f0e"
BOUND = "#9e9e9e"

# Readers that read a file from its start to its end, not the random records the others read.
SEQUENTIAL_READERS = ("TFRecordDataset",)


def _pyplot():
    """matplotlib's pyplot with a file-only backend (no display needed)."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("plot_results.py needs matplotlib: pip install -r requirements-dev.txt") \
            from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


REQUIRED = ("date", "machine", "command")


def _machine_text(machine: Any) -> str:
    """One line for a results' "machine" (a dict as bench/run_info.py writes, or a string)."""
    if not isinstance(machine, dict):
        return str(machine)
    cpu = machine.get("cpu") or machine.get("processor") or "CPU not recorded"
    cores = machine.get("cores") or machine.get("cpus")
    parts = [f"{cpu}, {cores} cores" if cores else cpu]
    if machine.get("tensorflow"):
        parts.append(f"TF {machine['tensorflow']}")
    if machine.get("tf_gulp_commit"):
        parts.append(f"tf_gulp {machine['tf_gulp_commit']}")
    return ", ".join(parts)


def provenance(report: Dict[str, Any]) -> Dict[str, str]:
    """{"Date", "Machine", "Command"} of a run, or, for a result the benchmark did not write whole,
    those it has plus "To be regenerated" (why). Raises ValueError for a result that lacks them
    without saying why."""
    transcribed = report.get("provenance") or {}
    missing = [key for key in REQUIRED if not report.get(key)]
    out = {"Date": str(report.get("date") or transcribed.get("date") or "not recorded"),
           "Machine": _machine_text(report["machine"]) if report.get("machine") else "not recorded",
           "Command": str(report.get("command") or transcribed.get("command") or "not recorded")}
    why = report.get("to_be_regenerated")
    if not why and transcribed.get("transcribed"):
        why = f"figures transcribed by hand from {transcribed.get('source', 'the docs')}"
    if why:
        out["To be regenerated"] = why + (f"; no {', '.join(missing)} recorded" if missing else "")
    elif missing:
        raise ValueError(f"no {', '.join(missing)} recorded: every plotted result says when, on "
                         f"which machine and by which command it was measured (bench/run_info.py)")
    return out


def _label(fig, report: Dict[str, Any]) -> Dict[str, str]:
    """Writes the run's date, machine and command under the figure (and "TO BE REGENERATED" above
    it when the result lacks them); returns the PNG text chunks to save with it."""
    meta = provenance(report)
    note = f"{meta['Date']} | {meta['Machine']} | {meta['Command']}"
    if "To be regenerated" in meta:
        note = f"{note}\nTO BE REGENERATED: {meta['To be regenerated']}"
        fig.text(0.5, 0.995, "TO BE REGENERATED (not a benchmark's own output)", ha="center",
                 va="top", fontsize=10, color="#b00020", weight="bold")
    fig.text(0.01, 0.01, note, fontsize=6.5, color="#555555", wrap=True)
    return meta


def _save(fig, path: str, meta: Dict[str, str]) -> None:
    plt = _pyplot()
    fig.savefig(path, dpi=110, metadata=meta)
    plt.close(fig)


def _colour(name: str, ours: Sequence[str], bounds: Sequence[str]) -> str:
    if any(name.startswith(b) for b in bounds):
        return BOUND
    return OURS if any(name.startswith(o) for o in ours) else OTHERS


def _run_range(result: Dict[str, Any], key: str) -> Optional[Tuple[float, float]]:
    """(lowest, highest) per-run rate: stored as `<key>_range`, or from the runs' seconds."""
    if f"{key}_range" in result:
        lo, hi = result[f"{key}_range"]
        return float(lo), float(hi)
    runs = result.get("runs")
    if runs and "median_seconds" in result:
        total = result[key] * result["median_seconds"]
        rates = [total / run["seconds"] for run in runs if run.get("seconds")]
        if rates:
            return min(rates), max(rates)
    return None


def plot_gulp_read(report: Dict[str, Any], path: str) -> None:
    """Frames/s per reader (median, whiskers: slowest to fastest run); diagnostics left out."""
    plt = _pyplot()
    rows = [(name, r) for name, r in report["results"].items() if not name.startswith("diag")]
    names = [name for name, _ in rows]
    values = [r["frames_per_s"] for _, r in rows]
    errors = [[0.0, 0.0] for _ in rows]
    for k, (_, r) in enumerate(rows):
        span = _run_range(r, "frames_per_s")
        if span is not None:
            errors[k] = [r["frames_per_s"] - span[0], span[1] - r["frames_per_s"]]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.6))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, values, xerr=list(zip(*errors)) if rows else None, capsize=3,
            color=[_colour(n, ("GulpDataset",), ("bound",)) for n in names])
    ax.set_yticks(y, names)
    for yy, v, err in zip(y, values, errors):
        ax.text(v + err[1], yy, f"  {v:,.0f}", va="center", ha="left", fontsize=8)
    ax.set_xlabel("frames/s (median; whiskers: slowest to fastest run)")
    ax.set_title("Reading a gulp directory: decoded frames/s")
    ax.set_xlim(0, max(v + e[1] for v, e in zip(values, errors)) * 1.2 if values else 1)
    meta = _label(fig, report)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    _save(fig, path, meta)


def ffrecord_compared(report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The rows of ffrecord.json the plot compares: no tf.data floor (not a reader), and in the
    cold panels only readers of random records (a sequential reader's cold run rides read-ahead)."""
    return [r for r in report["results"] if r["reader"] != "tf.data floor"
            and not (r["cache"] == "cold" and r["reader"].startswith(SEQUENTIAL_READERS))]


def plot_ffrecord(report: Dict[str, Any], path: str) -> None:
    """Records/s of each reader, one panel per record size and page-cache state."""
    plt = _pyplot()
    # Cold panels compare random reads from the device; TFRecordDataset reads its file in order, so
    # its cold runs ride the kernel's read-ahead: it is left out there (warm panels keep it).
    results = ffrecord_compared(report)
    readers: List[str] = []
    for r in results:
        if r["reader"] not in readers:
            readers.append(r["reader"])
    sizes = sorted({r["record_bytes"] for r in results})
    caches = [c for c in ("warm", "cold") if any(r["cache"] == c for r in results)]
    batches = sorted({r["batch"] for r in results})
    fig, axes = plt.subplots(len(sizes), len(caches), figsize=(11, 3.4 * len(sizes) + 0.8),
                             squeeze=False)
    width = 0.8 / max(1, len(readers))
    for i, size in enumerate(sizes):
        for j, cache in enumerate(caches):
            ax = axes[i][j]
            for k, reader in enumerate(readers):
                xs, ys = [], []
                for b, batch in enumerate(batches):
                    match = [r for r in results if (r["reader"], r["record_bytes"], r["batch"],
                                                    r["cache"]) == (reader, size, batch, cache)]
                    if match:
                        xs.append(b + (k - (len(readers) - 1) / 2) * width)
                        ys.append(match[0]["records_per_s"] / 1e3)
                ax.bar(xs, ys, width, label=reader,
                       color=plt.get_cmap("tab10")(k % 10),
                       hatch="//" if reader.startswith(("fio", "reference", "TFRecord")) else None,
                       edgecolor="white")
            ax.set_xticks(range(len(batches)), [f"batch {b}" for b in batches])
            ax.set_ylabel("thousand records/s")
            ax.set_title(f"{size // 1024} KiB records, {cache} page cache", fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle("FFRecord random batched reads (hatched: baselines; tf.data floor left out; "
                 "cold: sequential TFRecordDataset left out)", fontsize=10, y=0.965)
    fig.legend(handles, labels, loc="lower center", ncol=min(5, len(labels)), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 0.02))
    meta = _label(fig, report)
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    _save(fig, path, meta)


def plot_bzna(report: Dict[str, Any], path: str) -> None:
    """Images/s of the Benzina readers, raw libavcodec (the bound) and the TF JPEG pipeline."""
    plt = _pyplot()
    # The top-level run only: the "earlier_runs" kept in the JSON carry no date, machine or
    # command of their own (some were transcribed from tables), so they are not plotted.
    runs = [dict(report, label=report.get("label") or f"{report.get('rounds', '?')} rounds")]
    series = [(key, name, colour) for key, name, colour in (
        ("bzna", "bzna DataLoader (decode + warp)", OURS),
        ("decode", "BenzinaDataset (decode)", "#6baed6"),
        ("raw", "raw libavcodec, 1 decoder/core (bound)", BOUND),
        ("jpeg", "TF JPEG pipeline", OTHERS)) if any(key in run["images_per_s"] for run in runs)]
    fig, ax = plt.subplots(figsize=(max(8.0, 4 + 2.5 * len(runs)), 3.8))
    width = 0.8 / len(series)
    for k, (key, name, colour) in enumerate(series):
        xs, ys, err = [], [], [[], []]
        for i, run in enumerate(runs):
            if key not in run["images_per_s"]:
                continue
            v = run["images_per_s"][key]
            span = (run.get("images_per_s_range") or {}).get(key)
            if span is None and run.get("all_rounds"):
                span = (min(run["all_rounds"][key]), max(run["all_rounds"][key]))
            xs.append(i + (k - (len(series) - 1) / 2) * width)
            ys.append(v)
            err[0].append(v - span[0] if span else 0.0)
            err[1].append(span[1] - v if span else 0.0)
        ax.bar(xs, ys, width, yerr=err, capsize=3, label=name, color=colour)
        for x, v in zip(xs, ys):
            ax.text(x, v / 2, f"{v:.0f}", ha="center", va="center", fontsize=7, color="white")
    ax.set_xticks(range(len(runs)), [run["label"].replace(", ", "\n").replace(": ", ":\n")
                                     for run in runs], fontsize=8)
    ax.set_ylabel("images/s (median; whiskers: run range)")
    ax.set_title("Benzina on the CPU: decode, decode + warp to 224x224, raw libavcodec, TF JPEG")
    ax.legend(fontsize=8)
    meta = _label(fig, report)
    fig.tight_layout(rect=(0, 0.1, 1, 0.93))
    _save(fig, path, meta)


def plot_ingest(report: Dict[str, Any], path: str) -> None:
    """Frames/s written per run (median bar, each round a dot), videos and images side by side."""
    plt = _pyplot()
    from matplotlib import ticker
    kinds = [k for k in ("videos", "images") if k in report["results"]]
    fig, axes = plt.subplots(1, len(kinds), figsize=(12, 4), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        rows = list(report["results"][kind]["rows"].items())
        y = list(range(len(rows)))[::-1]
        names = [name for name, _ in rows]
        values = [row["frames_per_s"] for _, row in rows]
        ax.barh(y, values, color=[_colour(n, ("tf-gulp",), ("bound",)) for n in names])
        for yy, (_, row) in zip(y, rows):
            per_run = [row["frames"] / s for s in row.get("all_seconds", []) if s]
            ax.plot(per_run, [yy] * len(per_run), "k.", markersize=4)
            ax.text(max([row["frames_per_s"]] + per_run), yy, f"  {row['frames_per_s']:,.0f}",
                    va="center", fontsize=8)
        ax.set_yticks(y, names, fontsize=8)
        scale = "linear"
        if values and min(values) > 0 and max(values) / min(values) > 20:  # a bound far ahead
            scale = "log"
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel(f"frames/s written ({scale}; bar: median, dots: each round)")
        ax.set_title(f"{kind}: {rows[0][1]['frames']:,} frames" if rows else kind, fontsize=10)
    fig.suptitle("tf-gulp ingest vs gulpio2 (blue: tf-gulp, orange: gulpio2, grey: bound)",
                 fontsize=11, y=0.95)
    meta = _label(fig, report)
    fig.tight_layout(rect=(0, 0.1, 1, 0.92))
    _save(fig, path, meta)


def plot_fused_warp(report: Dict[str, Any], path: str) -> None:
    """Augmented frames/s per reader, one panel per output size (median; whiskers: run range)."""
    plt = _pyplot()
    cases = report["cases"]
    fig, axes = plt.subplots(1, len(cases), figsize=(5.2 * len(cases), 3.4), squeeze=False)
    for ax, (size, case) in zip(axes[0], cases.items()):
        rows = list(case["results"].items())
        names = [name for name, _ in rows]
        values = [r["frames_per_s"] for _, r in rows]
        errors = []
        for _, r in rows:
            span = _run_range(r, "frames_per_s")
            errors.append([0.0, 0.0] if span is None else
                          [r["frames_per_s"] - span[0], span[1] - r["frames_per_s"]])
        y = list(range(len(rows)))[::-1]
        ax.barh(y, values, xerr=list(zip(*errors)), capsize=3,
                color=[_colour(n, ("fused",), ("full-decode",)) for n in names])
        ax.set_yticks(y, names)
        for yy, v, err in zip(y, values, errors):
            ax.text(v + err[1], yy, f"  {v:,.0f}", va="center", ha="left", fontsize=8)
        data = case["data"]
        ax.set_title(f"{data['width']}x{data['height']} -> {size}x{size}, "
                     f"{data['clip_frames']}-frame clips", fontsize=9)
        ax.set_xlabel("augmented frames/s (median)")
        ax.set_xlim(0, max(v + e[1] for v, e in zip(values, errors)) * 1.25)
    meta = _label(fig, report)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    _save(fig, path, meta)


# name -> (JSON file in --results, PNG file in --out, plotter)
PLOTS: Dict[str, Tuple[str, str, Callable[[Dict[str, Any], str], None]]] = {
    "gulp_read": ("gulp_read.json", "gulp_read.png", plot_gulp_read),
    "ffrecord": ("ffrecord.json", "ffrecord.png", plot_ffrecord),
    "bzna": ("bzna.json", "bzna.png", plot_bzna),
    "ingest": ("ingest.json", "ingest.png", plot_ingest),
    "fused_warp": ("fused_warp.json", "fused_warp.png", plot_fused_warp),
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", default=os.path.join(_REPO_ROOT, "bench", "results"),
                        help="folder of the benchmarks' JSON (default: bench/results)")
    parser.add_argument("--out", default=os.path.join(_REPO_ROOT, "docs", "images"),
                        help="folder for the PNGs (default: docs/images)")
    parser.add_argument("--only", nargs="+", choices=sorted(PLOTS), help="plot only these")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    written = 0
    for name in args.only or list(PLOTS):
        json_name, png_name, plot = PLOTS[name]
        source = os.path.join(args.results, json_name)
        if not os.path.exists(source):
            print(f"{name}: no {source}, skipped (run bench/bench_{name}.py first)",
                  file=sys.stderr)
            continue
        with open(source, encoding="utf-8") as f:
            try:
                report = json.load(f)
            except ValueError as e:
                raise SystemExit(f"{source}: not valid JSON ({e})") from None
        target = os.path.join(args.out, png_name)
        try:
            provenance(report)
        except ValueError as e:
            raise SystemExit(f"{source}: {e}") from None
        try:
            plot(report, target)
        except (KeyError, TypeError, ValueError) as e:
            raise SystemExit(f"{source}: not the JSON bench/bench_{name}.py writes "
                             f"({type(e).__name__}: {e})") from None
        print(f"wrote {target}")
        written += 1
    if not written:
        print(f"no results in {args.results}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
