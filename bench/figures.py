"""The figures the docs quote, rendered from the committed results JSON (bench/results/*.json).

Every performance figure in README.md and docs/ sits in a block

    <!-- figures NAME -->
    ...what render(NAME) returns...
    <!-- /figures -->

written by this script from bench/results/NAME.json (the JSON a bench/ script wrote: date, machine,
commit, clean-tree flag, command, every round). tests/test_benchmark_figures.py renders every block
again and compares, so a figure cannot drift from its JSON, and refuses measured figures outside
the blocks. After a new run:

    python3 bench/figures.py --write      # rewrites every block of README.md and docs/*.md

Rounding is the printed one: a figure in the docs is its JSON value rounded as shown.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BLOCK = re.compile(r"(<!-- figures (\w+) -->\n)(.*?)(<!-- /figures -->)", re.S)


def load(name: str) -> Dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text())


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], right_from: int = 1) -> List[str]:
    align = ["---"] * right_from + ["---:"] * (len(header) - right_from)
    return ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"] + [
        "| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def provenance(name: str, d: Dict[str, Any]) -> str:
    """One line: when, where, which commit (and whether the tree was clean), which command."""
    m = d.get("machine", {})
    cpu = m.get("cpu") or m.get("processor") or "unknown CPU"
    cores = m.get("cores") or m.get("cpus") or d.get("cpus")
    commit = m.get("tf_gulp_commit") or d.get("commit")
    if commit is None:
        tree = "commit not recorded"
    else:
        clean = m.get("clean_tree", None if not commit.endswith("-dirty") else False)
        state = {True: "clean tree", False: "uncommitted changes", None: "clean-tree flag not recorded"}
        tree = f"commit `{commit.replace('-dirty', '')}`, {state[clean]}"
    rounds = d.get("rounds") or d.get("repeat") or d.get("params", {}).get("rounds")
    return (f"Run {d['date']}, {cpu}, {cores} cores, {tree}; `{d['command']}`; {rounds} rounds, "
            f"medians; every round in `bench/results/{name}.json`.")


def f0(v: float) -> str:
    return f"{v:.0f}"


def f1(v: float) -> str:
    return f"{v:.1f}"


def f2(v: float) -> str:
    return f"{v:.2f}"


def gulp_read() -> List[str]:
    d = load("gulp_read")
    rows = [[f"**{k}**" if k.startswith("GulpDataset") else k, f0(r["frames_per_s"]),
             f1(r["jpeg_MB_per_s"]), f2(r["x_gulpio2"]) + "x", f2(r["x_tfrecord"]) + "x",
             f"{100 * r['fraction_of_bound']:.0f}%" if "decode=False" not in k
             else "—", f2(r["cores_used"]), f0(r["cpu_us_per_frame"])]
            for k, r in d["results"].items()]
    return [provenance("gulp_read", d), ""] + table(
        ["reader", "frames/s", "MB/s", "× gulpio2", "× TFRecord", "of bound", "cores",
         "CPU µs/frame"], rows)


def slowest_teardown_ms(runs: List[Dict[str, Any]]) -> str:
    """The longest destruction of a run's finished iterator (after its clock stopped), in ms; a
    dash for runs that recorded none."""
    if not runs or any("teardown_seconds" not in run for run in runs):
        return "—"
    return f0(1e3 * max(run["teardown_seconds"] for run in runs))


def fair_peers() -> List[str]:
    d = load("fair_peers")
    out = [provenance("fair_peers", d), ""]
    for case in d["cases"]:
        out.append(f"**{case['title']}** ({case['unit']}; × the {case['baseline']} row):")
        out.append("")
        rows = [[r["reader"], f0(r["items_per_s"]), f2(r["x_baseline"]) + "x",
                 f2(r["cores_used"]),
                 f0(r["cpu_us_per_item"]) if r["cpu_us_per_item"] >= 100 else f1(r["cpu_us_per_item"]),
                 slowest_teardown_ms(r["runs"])]
                for r in case["rows"]]
        out += table(["reader", f"{case['unit']}/s", f"× {case['baseline']}", "cores",
                      f"CPU µs per {case['unit'][:-1]}", "slowest teardown, ms"], rows)
        out.append("")
        out += fractions_of_bounds(case["rows"])
    return out[:-1]


def fractions_of_bounds(rows: List[Dict[str, Any]]) -> List[str]:
    """Each tf_gulp row's rate as a fraction of each decode-bound row's (none: nothing)."""
    bounds = [r for r in rows if r["reader"].startswith("libjpeg-turbo bound")]
    ours = [r for r in rows if r["reader"].startswith("GulpDataset")]
    if not bounds or not ours:
        return []
    body = [[r["reader"]] + [f2(r["items_per_s"] / b["items_per_s"]) for b in bounds]
            for r in ours]
    return ["Fraction of each bound's rate:", ""] + table(
        ["reader"] + [f"of the {b['reader']}" for b in bounds], body) + [""]


def per_output_size(name: str, section: Callable[[Dict[str, Any]], List[str]]) -> List[str]:
    """A result holding one case per output size: its provenance, then each size's heading and
    `section` of that case."""
    d = load(name)
    out = [provenance(name, d), ""]
    for size, case in d["cases"].items():
        data = case["data"]
        out.append(f"{data['width']}x{data['height']} → {size}x{size}:")
        out.append("")
        out += section(case)
        out.append("")
    return out[:-1]


def fused_warp() -> List[str]:
    def section(case: Dict[str, Any]) -> List[str]:
        rows = []
        for k, r in case["results"].items():
            ratio = case["ratios"].get(f"fused_vs_{k}")
            cpu_ratio = case["cpu_ratios"].get(f"fused_vs_{k}")
            rows.append([f"**{k}**" if k == "fused" else k, f1(r["frames_per_s"]),
                         "—" if ratio is None else f2(ratio) + "x", f1(r["cpu_us_per_frame"]),
                         "—" if cpu_ratio is None else f2(cpu_ratio) + "x"])
        return table(["reader", "frames/s", "fused ÷ it (frames/s)", "CPU µs/frame",
                      "it ÷ fused (CPU)"], rows)
    return per_output_size("fused_warp", section)


BZNA_NAMES = {"raw": "raw libavcodec, one decoder per core (the bound)",
              "raw_frame": "raw libavcodec, frame threads", "raw_slice": "raw libavcodec, slice threads",
              "decode": "**BenzinaDataset** (decode)", "bzna": "**DataLoader** (decode + warp)",
              "jpeg": "TF JPEG pipeline"}


def bzna() -> List[str]:
    d = load("bzna")
    bound_ips, bound_cpu = d["images_per_s"][d["bound"]], d["cpu_ms_per_image"][d["bound"]]
    rows = [[BZNA_NAMES.get(k, k), f1(v), f2(v / bound_ips),
             f2(d["cpu_ms_per_image"][k]),
             f2(bound_cpu / d["cpu_ms_per_image"][k]) if k != "jpeg" else "—"]
            for k, v in d["images_per_s"].items()]
    return [provenance("bzna", d), ""] + table(
        ["reader", "images/s", "of the bound (images/s)", "CPU ms per image",
         "of the bound (CPU)"], rows)


def ffrecord() -> List[str]:
    d = load("ffrecord")
    keys = ["FFRecordDataset/reference", "FFRecordDataset+prefetch/reference",
            "FileReader/reference", "FFRecordDataset/fio", "FileReader/fio"]
    rows = [[f"{r['record_bytes'] // 1024} KiB", r["batch"], r["cache"]]
            + [f2(r[k]) if k in r else "—" for k in keys] for r in d["ratios"]]
    return [provenance("ffrecord", d), ""] + table(["records", "batch", "cache"] + keys, rows,
                                                   right_from=3)


def ingest() -> List[str]:
    d = load("ingest")
    rows = []
    for kind, case in d["results"].items():
        for run, r in case["rows"].items():
            rows.append([kind, f"**{run}**" if run.startswith("tf-gulp") else run, r["frames"],
                         f"{r['seconds']:.2f}", f0(r["frames_per_s"]),
                         ", ".join(f"{s:.2f}" for s in r["all_seconds"])])
    out = [provenance("ingest", d), ""] + table(
        ["input", "run", "frames", "median s", "frames/s", "every round (s)"], rows, right_from=2)
    out += [""] + table(["ratio of medians", ""], [[k, f2(v) + "x"] for k, v in d["ratios"].items()])
    return out


def shuffle() -> List[str]:
    d = load("shuffle")
    med, ratio = d["median_items_per_second"], d["ratio_uniform_over_window"]
    rows = []
    for cache in ("warm", "cold"):
        for what, suffix in (("decoded clips", ""), ("JPEG bytes only (`decode=False`)", "_read")):
            rows.append([what, cache, f0(med[cache]["uniform" + suffix]),
                         f0(med[cache]["window" + suffix]), f2(ratio[cache + suffix]) + "x"])
    ds = d["dataset"]
    mix = d["distinct_classes_per_batch"]
    out = [provenance("shuffle", d), "",
           f"Data: {ds['classes']} classes x {ds['chunks_per_class']} chunks of "
           f"{ds['videos_per_chunk']} videos, {ds['frames']} frames of {ds['width']}x{ds['height']}, "
           f"{ds['bytes'] / 1e6:.0f} MB, {ds['written']}; cold: {d['cold_method']}.", ""]
    out += table(["what is read", "page cache", "uniform items/s", f"window {d['window']} items/s",
                  "uniform / window"], rows, right_from=2)
    out += [""] + table([f"distinct classes per batch of {d['batch']}", ""],
                        [["uniform", f1(mix["uniform"])], [f"window {d['window']}", f1(mix["window"])],
                         ["uniform, in theory", f1(mix["uniform_theory"])]])
    return out


def index_open() -> List[str]:
    d = load("index_open")
    rows = [[f"{r['items']:,}", f2(r["tf_gulp_construct_s"]) + " s",
             f2(r["tf_gulp_first_iterator_s"]) + " s", f2(r["tf_gulp_second_pipeline_s"]) + " s",
             f0(r["tf_gulp_rss_bytes_per_item"]) + " B", f2(r["gulpio2_open_s"]) + " s",
             f0(r["gulpio2_rss_bytes_per_item"]) + " B", f2(r["open_time_ratio_median"]),
             f2(r["rss_ratio_median"])] for r in d["results"]]
    out = [provenance("index_open", d),
           f"Load average at the start: {d['machine']['loadavg_start'][0]:.1f} (a shared machine: "
           "absolute times are loose, the ratios and the memory are not).", ""]
    return out + table(["items", "GulpDataset(): constructor", "first iterator",
                        "a second pipeline on it", "RSS per item", "GulpDirectory(): open",
                        "RSS per item", "open time x gulpio2", "RSS x gulpio2"], rows)


def _bzna_size_rows(d: Dict[str, Any], with_ratio: bool) -> List[List[str]]:
    base = d["jpeg_q90_420"]["bytes_per_image"]
    default = str(d["encode_speed"]["crf"])
    rows = []
    for name, key in (("JPEG q90 4:4:4 (what `tf-gulp ingest` writes)", "jpeg_q90_444_gulp"),
                      ("JPEG q90 4:2:0 (ImageNet's kind)", "jpeg_q90_420")):
        r = d[key]
        rows.append([name, f"{r['bytes_per_image']:,.0f}", f"{r['psnr_db']:.2f} dB"]
                    + ([f2(r["bytes_per_image"] / base) + "x"] if with_ratio else []))
    for crf, r in sorted(d["bzna"].items(), key=lambda kv: int(kv[0])):
        name = ".bzna crf " + crf + (" (the reference's)" if crf == "10" else "")
        cells = [name, f"{r['bytes_per_image']:,.0f}", f"{r['psnr_db']:.2f} dB"] + (
            [f2(r["bytes_per_image"] / base) + "x"] if with_ratio else [])
        if crf == default:
            cells = [f"**{c} (default)**" if i == 0 else f"**{c}**" for i, c in enumerate(cells)]
        rows.append(cells)
    return rows


def _bzna_size_findings(d: Dict[str, Any]) -> List[str]:
    default = str(d["encode_speed"]["crf"])
    c420, c444 = d["crf_matching_jpeg_q90_420"], d["crf_matching_jpeg_q90_444_gulp"]
    bz = d["bzna"]
    out = [f"- crf {c420} is the largest crf measured whose PSNR is at least JPEG q90 4:2:0's: "
           f"{f2(d[f'bytes_ratio_bzna_crf{c420}_over_jpeg_q90_420'])}x its bytes, "
           f"{bz[str(c420)]['psnr_db'] - d['jpeg_q90_420']['psnr_db']:+.2f} dB. The default is crf {default}."]
    if c444 is not None:
        out.append(f"- Matching the 4:4:4 JPEGs of a gulp directory takes crf {c444} at "
                   f"{f2(d[f'bytes_ratio_bzna_crf{c444}_over_jpeg_q90_444_gulp'])}x their bytes: the "
                   "HEVC pictures are 4:2:0 (`yuvj420p`, as the reference stores them), which caps "
                   "their PSNR.")
    if "10" in bz and default in bz:
        out.append(f"- The reference's crf 10 costs "
                   f"{f2(bz['10']['bytes_per_image'] / bz[default]['bytes_per_image'])}x the "
                   f"default's bytes for {bz['10']['psnr_db'] - bz[default]['psnr_db']:+.2f} dB.")
    return out


def bzna_size() -> List[str]:
    d = load("bzna_size")
    out = [provenance("bzna_size", d), ""]
    out += table(["format", "bytes per image", "PSNR", "bytes vs JPEG q90 4:2:0"],
                 _bzna_size_rows(d, True))
    out += [""] + _bzna_size_findings(d) + [""]
    s = d["encode_speed"]
    rows = []
    for preset, p in s["presets"].items():
        rows.append([preset + (" (default)" if preset == "medium" else ""),
                     f"{f2(p['process_per_core_images_per_s'])} ({f2(p['process_per_core_images_per_s_per_core'])})",
                     f"{f2(p['one_encoder_wavefront_images_per_s'])} ({f2(p['one_encoder_wavefront_images_per_s_per_core'])})",
                     f2(p["process_per_core_over_wavefront"]) + "x"])
    out += [f"Encoding speed at crf {s['crf']}, {s['images']} pictures, {s['cores']} cores:", ""]
    out += table(["preset", "process per core: images/s (per core)",
                  "one encoder, wavefront: images/s (per core)", "ratio"], rows)
    return out


def profile_gulp_cpu() -> List[str]:
    d = load("profile_gulp_cpu")
    g, b = d["readers"]["GulpDataset"], d["readers"]["bound"]
    out = [provenance("profile_gulp_cpu", d), "",
           f"**{d['data']}, {d['passes']} passes per profile** (CPU per frame split by library: "
           f"each library's share of the perf samples times the process's CPU per frame):", ""]
    rows = []
    for name in d["groups"]:
        rows.append([name, f1(g["group_percent"][name]) + "%", f0(g["group_us_per_frame"][name]),
                     f1(b["group_percent"][name]) + "%", f0(b["group_us_per_frame"][name]),
                     f0(g["group_us_per_frame"][name] - b["group_us_per_frame"][name])])
    rows.append(["**all (CPU µs per frame)**", "", f0(g["cpu_us_per_frame"]), "",
                 f0(b["cpu_us_per_frame"]), f0(g["cpu_us_per_frame"] - b["cpu_us_per_frame"])])
    out += table(["library", "GulpDataset: share", "µs per frame", "bound: share", "µs per frame",
                  "GulpDataset − bound, µs"], rows)
    return out


def gpu_check() -> List[str]:
    d = load("gpu_check")
    m, phases = d["machine"], d["device_check"]["phases"]
    warp, nvdec, mem, tp = phases["warp"], phases["nvdec"], phases["memcheck"], phases["throughput"]
    worst = max(c["max_abs_diff_levels"] for c in warp["checks"])
    off = sum(c["values_off_by_more_than_2_levels"] for c in warp["checks"])
    rows = [[f"warp kernels vs the CPU path ({len(warp['checks'])} checks)",
             f"at most {worst} level off, {off} values more than 2 off"],
            [f"NVDEC decode + fused warp vs the CPU path ({nvdec['samples']} samples)",
             f"at most {nvdec['decode_hevc_warped_vs_cpu_max_abs_diff_levels']} level off, "
             f"{nvdec['values_off_by_more_than_2_levels']} values more than 2 off, "
             f"{nvdec['decode_warp_failed'] + nvdec['decode_rgb_failed']} failed"],
            ["compute-sanitizer memcheck (NVDEC path, small batch)", mem["summary"]],
            ["NVDEC engines (`cuvidGetDecoderCaps`)", str(tp["nvdec_engines"])]]
    # One decode session's device memory (runtime phase), in runs that measured it.
    memory = (phases.get("runtime") or {}).get("decoder_memory") or {}
    for key, label in (("one_session_512x512", "512x512"),
                       ("one_session_largest", "the data's largest picture")):
        one = memory.get(key) or {}
        if "measured_mib" in one:
            rows.append([f"device memory of one decode session, {label} (coded {one['coded_size']}, "
                         f"{one['surfaces']} surfaces)",
                         f"{f1(one['measured_mib'])} MiB measured, {f1(one['estimate_mib'])} MiB "
                         "estimated (docs/gpu.md, GPU memory)"])
    rows.append(["device check exit status", str(d["device_check"]["exit_status"])])
    med = {(r["samples"], r["sessions"]): r for r in d["medians"]["throughput"]}
    sessions = sorted({n for _, n in med})

    def rate(samples: str, n: int, key: str) -> str:
        value = med.get((samples, n), {}).get(key)
        return f0(value) if value else "—"

    tp_rows = [[str(n), rate("512x512", n, "decode_images_per_s"),
                rate("512x512", n, "decode_and_warp_images_per_s"),
                rate("dataset_mix", n, "decode_images_per_s"),
                rate("dataset_mix", n, "decode_and_warp_images_per_s")] for n in sessions]
    w = d["medians"]["warp"]
    head = (provenance("gpu_check", d) + f" GPU: {m.get('gpu')} (name, driver, compute "
            f"capability, MIG); {m.get('nvcc')}.")
    return [head, ""] + table(["check (round 1)", "result"], rows, right_from=2) + [
        "", f"Images/s, medians of {d['rounds']} rounds ({tp['images_per_run']} images per run; "
        "decode + warp is `DecodeWarped`: NVDEC, then the fused NV12 warp to 224x224):",
        ""] + table(
        ["sessions", "512x512: decode", "512x512: decode + warp", "the data's mix: decode",
         "the data's mix: decode + warp"], tp_rows) + [
        "", f"The warp kernels alone, batch {warp['timing_batch']}, 512x512 to 224x224: "
        f"{f0(w['rgb_warp_512_to_224_images_per_s'])} images/s on RGB, "
        f"{f0(w['fused_nv12_warp_512_to_224_images_per_s'])} images/s fused from NV12. "
        f"Decoder utilisation (`nvidia-smi dmon`, round 1): at most "
        f"{tp['dmon']['dec_util_max_percent']}%."] + gpu_check_new_phases(d, med, sessions)


# The pool's calls the profile table shows, per picture decoded (NvdecPoolCall's names).
PROFILE_CALLS = ("map", "session_wait", "reconfigure", "drain", "create", "destroy")


def gpu_check_new_phases(d: Dict[str, Any], med: Dict[tuple, Dict[str, Any]],
                         sessions: List[int]) -> List[str]:
    """The device check's sections from issue 44 on (the ImageNet-like set, the second halves, the
    profile, situations and jpeg phases), each only where the results hold it."""
    phases, out = d["device_check"]["phases"], []

    def rate(samples: str, n: int, key: str) -> str:
        value = med.get((samples, n), {}).get(key)
        return f0(value) if value else "—"

    if any(s == "imagenet_like" for s, _ in med):
        rows = [[str(n), rate("imagenet_like", n, "decode_images_per_s"),
                 rate("imagenet_like", n, "decode_and_warp_images_per_s"),
                 rate("imagenet_like", n, "decode_and_warp_second_half_images_per_s"),
                 rate("512x512", n, "decode_and_warp_second_half_images_per_s")]
                for n in sessions]
        out += ["", "The ImageNet-like set (32 pictures, short sides 200-800, aspects 3:4 to 16:9), "
                "images/s, medians, and each run's second half alone:", ""] + table(
            ["sessions", "ImageNet-like: decode", "decode + warp", "decode + warp, 2nd half",
             "512x512: decode + warp, 2nd half"], rows)
    prof = phases.get("profile") or {}
    if prof.get("runs"):
        rows = []
        for r in prof["runs"]:
            calls = r.get("timed_pool_calls")
            if not calls:
                rows.append([r["samples"], str(r["sessions"]), r.get("error") or r.get("skipped")]
                            + ["—"] * len(PROFILE_CALLS))
                continue
            images = r["images"]
            rows.append([r["samples"], str(r["sessions"]), f0(r["images_per_s"])] + [
                f"{calls[c]['calls']} · {1000 * calls[c]['ms'] / images:.1f}"
                for c in PROFILE_CALLS])
        out += ["", f"Profile (round 1; {prof.get('source')}): images/s and the pool's calls in the "
                "timed loop, as count · µs per picture decoded (all sessions' time summed):", ""] + \
            table(["set", "sessions", "images/s"] + list(PROFILE_CALLS), rows, right_from=1)
    sit = phases.get("situations") or {}
    if sit.get("situations"):
        out += ["", f"Situations TensorFlow creates (round 1; {sit.get('source')}):", ""] + table(
            ["situation", "expected", "as expected", "detail"],
            [[s["situation"], s["expected"], "yes" if s["ok"] else "**no**", s["detail"]]
             for s in sit["situations"]], right_from=4)
    jpeg = phases.get("jpeg") or {}
    if jpeg:
        runs = jpeg.get("gpu_runs")
        out += ["", f"GPU JPEG decoding, the next step's ceiling (round 1): {jpeg.get('gpu_decode')}"
                + (":" if runs else ".")]
        if runs:
            out += [""] + table(["JPEGs", "batch", "images/s", "megapixels/s", "bytes per JPEG"],
                                [[r["samples"], str(r["batch"]),
                                  f0(r["images_per_s"]) if "images_per_s" in r else r.get("error"),
                                  f0(r["megapixels_per_s"]) if "megapixels_per_s" in r else "—",
                                  f0(r["mean_bytes"]) if "mean_bytes" in r else "—"]
                                 for r in runs], right_from=1)
    return out


RENDERERS: Dict[str, Callable[[], List[str]]] = {
    "gulp_read": gulp_read, "fair_peers": fair_peers, "fused_warp": fused_warp,
    "bzna": bzna,
    "ffrecord": ffrecord, "ingest": ingest, "shuffle": shuffle,
    "bzna_size": bzna_size, "index_open": index_open, "profile_gulp_cpu": profile_gulp_cpu,
    "gpu_check": gpu_check}


def render(name: str) -> str:
    """The block's body for bench/results/NAME.json."""
    if name not in RENDERERS:
        raise KeyError(f"no renderer for figures {name!r} (bench/figures.py: {sorted(RENDERERS)})")
    return "\n".join(RENDERERS[name]()) + "\n"


def pages() -> List[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def rewrite(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite the blocks in place")
    p.add_argument("name", nargs="?", help="print one block's body")
    args = p.parse_args(argv)
    if args.name:
        sys.stdout.write(render(args.name))
        return 0
    for page in pages():
        text = page.read_text()
        new = rewrite(text)
        if new != text:
            if args.write:
                page.write_text(new)
            print(f"{page.relative_to(ROOT)}: {'rewritten' if args.write else 'out of date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
