#!/usr/bin/env python3
"""Ingest throughput: ``tf-gulp ingest`` vs gulpio2's ``GulpIngestor``, same input, same workers.

Inputs (generated once into --workdir, reused when the parameters match):

* a folder of videos, ``<class>/<n>.mp4`` (H.264 when PyAV has libx264, else MPEG-4 part 2),
  320x240 at 25 fps with moving shapes, texture and noise, so JPEG sizes are realistic;
* a folder of JPEG images, ``<class>/<n>.jpg``, 4:2:0 quality 90 (like camera / ImageNet files),
  sizes between 320x240 and 500x375.

Rows (all with the same --workers and --videos-per-chunk; every run is a separate ``python``
process, so interpreter start-up counts for both sides; --repeat rounds, 5 by default, each
running every row once in a rotating order, one process tree at a time; the median is kept):

* ``gulpio2``: gulpio2's own adapters, the ones its ``gulp2_video_folder`` / ``gulp2_image_folder``
  scripts use: ``VideoFolderAdapter`` (an ``ffmpeg`` subprocess bursts each video into quality-1
  JPEG files in /dev/shm, PIL decodes them, simplejpeg re-encodes at quality 90 4:4:4, then
  PIL/bilinear resize when asked) and ``ImageFolderAdapter`` (PIL decodes each image, simplejpeg
  re-encodes);
* ``tf-gulp``: ``python -m tf_gulp.cli ingest video-folder|image-folder`` (PyAV decodes in the
  worker, libjpeg-turbo encodes at quality 90 4:4:4; JPEG images are stored as they are unless
  resized or ``--reencode``);
* ``bound``: the same decode + encode (or, for JPEGs stored as they are, reading the files and
  parsing their headers) in a pool of --workers processes, with no gulp writing and no ingest
  machinery: what the cores can do at best.

Frames/s = frames written / wall time (median over the rounds). Results go to --output (JSON)
and a markdown table is printed.

Usage (from the repository root)::

    make bench-ingest        # or:
    PYTHONPATH=. python3 bench/bench_ingest.py [--videos 24] [--seconds 4] [--images 1200]
        [--workers N] [--videos-per-chunk N] [--repeat 5] [--resize 128] [--workdir DIR]
        [--output bench/results/ingest.json]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

import run_info  # noqa: E402  (bench/run_info.py, next to this script)

run_info.use_this_checkout()
import simplejpeg  # noqa: E402

CLASSES = ("archery", "bowling", "cooking", "diving")


# --------------------------------------------------------------------------------------------------
# Inputs


def _texture(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.stack([128 + 90 * np.sin(x / rng.uniform(15, 60) + rng.uniform(0, 6)),
                     128 + 90 * np.sin(y / rng.uniform(15, 60) + rng.uniform(0, 6)),
                     128 + 60 * np.sin((x + y) / rng.uniform(20, 80))], -1)
    return base


def make_videos(folder: str, count: int, seconds: float, width: int, height: int) -> None:
    import av
    codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
    rng = np.random.default_rng(0)
    frames = int(round(seconds * 25))
    for i in range(count):
        path = os.path.join(folder, CLASSES[i % len(CLASSES)], f"{i:04d}.mp4")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        base = _texture(rng, height, width)
        with av.open(path, "w") as container:
            stream = container.add_stream(codec, rate=25)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            if codec == "libx264":
                stream.options = {"preset": "veryfast", "crf": "20"}
            else:
                stream.bit_rate = 1_500_000
            for j in range(frames):
                img = base.copy()
                cx, cy = (j * 7 + 40 * i) % width, (j * 3 + 20 * i) % height
                img[max(0, cy - 20):cy + 20, max(0, cx - 30):cx + 30] = (230, 60, 40)
                img += rng.normal(0, 6, img.shape).astype(np.float32)
                frame = np.clip(img, 0, 255).astype(np.uint8)
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)


def make_images(folder: str, count: int) -> None:
    rng = np.random.default_rng(1)
    sizes = [(320, 240), (400, 300), (500, 375), (375, 500), (333, 500)]
    for i in range(count):
        w, h = sizes[i % len(sizes)]
        img = _texture(rng, h, w) + rng.normal(0, 8, (h, w, 3))
        img[h // 4:h // 2, w // 3:w // 2] = rng.uniform(0, 255, 3)
        data = simplejpeg.encode_jpeg(np.clip(img, 0, 255).astype(np.uint8), quality=90,
                                      colorsubsampling="420")
        path = os.path.join(folder, CLASSES[i % len(CLASSES)], f"{i:05d}.jpg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def prepare(workdir: str, args: argparse.Namespace) -> Dict[str, str]:
    spec = {"videos": args.videos, "seconds": args.seconds, "width": 320, "height": 240,
            "images": args.images, "version": 1}
    stamp = os.path.join(workdir, "inputs.json")
    videos = os.path.join(workdir, "videos")
    images = os.path.join(workdir, "images")
    if not (os.path.exists(stamp) and json.load(open(stamp)) == spec):
        shutil.rmtree(videos, ignore_errors=True)
        shutil.rmtree(images, ignore_errors=True)
        print(f"generating inputs in {workdir} ...", flush=True)
        make_videos(videos, args.videos, args.seconds, 320, 240)
        make_images(images, args.images)
        with open(stamp, "w") as f:
            json.dump(spec, f)
    return {"videos": videos, "images": images}


def _files(folder: str, suffix: str) -> List[str]:
    out = []
    for dirpath, _dirs, names in os.walk(folder):
        out += [os.path.join(dirpath, n) for n in names if n.endswith(suffix)]
    return sorted(out)


def _warm(paths: Sequence[str]) -> None:
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


# --------------------------------------------------------------------------------------------------
# Runs


def count_frames(folder: str) -> int:
    from tf_gulp.gulp import GulpDirectory
    with GulpDirectory(folder) as gd:
        return sum(len(e["frame_info"]) for e in gd.merged_meta_dict.values())


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([run_info.REPO_ROOT] + [p for p in env.get(
        "PYTHONPATH", "").split(os.pathsep) if p])
    return env


def timed(cmd: List[str], out: str) -> Dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, cwd=run_info.REPO_ROOT)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    frames = count_frames(out)
    result = {"seconds": round(seconds, 3), "frames": frames,
              "frames_per_s": round(frames / seconds, 1), "command": " ".join(cmd)}
    # tf-gulp's own summary times the ingest without interpreter start-up and imports.
    m = re.search(r"chunks in ([0-9.]+) s", proc.stdout)
    if m:
        result["ingest_seconds"] = float(m.group(1))
    return result


_GULPIO2 = """
import sys
from gulpio2.adapters import {adapter}
from gulpio2.fileio import GulpIngestor
src, out, per_chunk, workers, size = sys.argv[1:6]
kwargs = {kwargs}
adapter = {adapter}(src.rstrip("/") + "/", out, **kwargs)
GulpIngestor(adapter, out, int(per_chunk), int(workers))()
"""


def gulpio2_cmd(kind: str, src: str, out: str, args: argparse.Namespace,
                size: int) -> List[str]:
    if kind == "videos":
        # VideoFolderAdapter's default extension list only finds its last entry (.webm): pass
        # .mp4 explicitly.
        code = _GULPIO2.format(adapter="VideoFolderAdapter", kwargs=(
            "dict(file_extensions=['.mp4'], frame_size=int(size), shm_dir_path=%r)"
            % args.shm_dir))
    else:
        code = _GULPIO2.format(adapter="ImageFolderAdapter",
                               kwargs="dict(file_extensions=['.jpg'], img_size=int(size))")
    return [sys.executable, "-c", code, src, out, str(args.videos_per_chunk), str(args.workers),
            str(size)]


def tf_gulp_cmd(kind: str, src: str, out: str, args: argparse.Namespace,
                extra: Sequence[str] = ()) -> List[str]:
    adapter = "video-folder" if kind == "videos" else "image-folder"
    return [sys.executable, "-m", "tf_gulp.cli", "ingest", adapter, src, out,
            "--videos-per-chunk", str(args.videos_per_chunk), "--num-workers", str(args.workers),
            "--no-progress", *extra]


# -- bounds: the same per-frame work in a process pool, nothing written ----------------------------


def _bound_video(path: str, size: Optional[int]) -> int:
    import av
    from av.video.reformatter import VideoReformatter
    from tf_gulp.gulp.video import resized_size
    n = 0
    reformatter = VideoReformatter()  # one scaler context for the whole video
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = 1
        for frame in container.decode(stream):
            w, h = resized_size(frame.width, frame.height, size)
            arr = reformatter.reformat(frame, width=w, height=h, format="rgb24",
                                       interpolation="BILINEAR").to_ndarray()
            simplejpeg.encode_jpeg(arr, quality=90, colorsubsampling="444")
            n += 1
    return n


def _bound_image(path: str, mode: str) -> int:
    with open(path, "rb") as f:
        data = f.read()
    if mode == "as-is":
        simplejpeg.decode_jpeg_header(data)
    else:
        arr = simplejpeg.decode_jpeg(data)
        simplejpeg.encode_jpeg(arr, quality=90, colorsubsampling="444")
    return 1


def bound(fn: Any, items: Sequence[str], workers: int, *extra: Any) -> Dict[str, Any]:
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        frames = sum(pool.map(fn, items, *[[e] * len(items) for e in extra],
                              chunksize=max(1, len(items) // (8 * workers))))
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "frames": frames,
            "frames_per_s": round(frames / seconds, 1)}


# --------------------------------------------------------------------------------------------------


def _summary(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    seconds = sorted(r["seconds"] for r in runs)
    median = statistics.median(seconds)
    frames = runs[-1]["frames"]
    out = {"frames": frames, "seconds": round(median, 3), "frames_per_s": round(frames / median, 1),
           "all_seconds": [r["seconds"] for r in runs]}
    if all("ingest_seconds" in r for r in runs):
        inner = statistics.median(r["ingest_seconds"] for r in runs)
        out["ingest_seconds"] = inner
        out["ingest_frames_per_s"] = round(frames / inner, 1) if inner else None
    if "command" in runs[-1]:
        out["command"] = runs[-1]["command"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--images", type=int, default=1200)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--videos-per-chunk", type=int, default=None,
                        help="default: items / (4 * workers), so every worker gets chunks")
    parser.add_argument("--resize", type=int, default=128,
                        help="shorter side of the resized rows (0: no resized rows)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs of every row, interleaved (the order rotates each round); "
                             "the median is reported")
    parser.add_argument("--shm-dir", default="/dev/shm",
                        help="where gulpio2's ffmpeg bursts frames (its default)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(),
                                                          "tf_gulp_bench_ingest"))
    parser.add_argument("--output", default=os.path.join(run_info.REPO_ROOT, "bench", "results",
                                                         "ingest.json"))
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    inputs = prepare(args.workdir, args)
    video_files = _files(inputs["videos"], ".mp4")
    image_files = _files(inputs["images"], ".jpg")
    _warm(video_files + image_files)
    out = os.path.join(args.workdir, "out")
    load_before = os.getloadavg()
    started = time.perf_counter()
    results: Dict[str, Any] = {}
    r = args.resize
    for kind, files in (("videos", video_files), ("images", image_files)):
        per_chunk = args.videos_per_chunk or max(1, len(files) // (4 * args.workers))
        run_args = argparse.Namespace(**vars(args))
        run_args.videos_per_chunk = per_chunk
        src = inputs[kind]
        rows: Dict[str, Any] = {
            "gulpio2": lambda: timed(gulpio2_cmd(kind, src, out, run_args, -1), out),
            "tf-gulp": lambda: timed(tf_gulp_cmd(kind, src, out, run_args), out),
        }
        if kind == "images":
            rows["tf-gulp --reencode"] = lambda: timed(
                tf_gulp_cmd(kind, src, out, run_args, ["--reencode"]), out)
        if r:
            rows[f"gulpio2 resize {r}"] = lambda: timed(gulpio2_cmd(kind, src, out, run_args, r),
                                                        out)
            rows[f"tf-gulp --shorter-side {r}"] = lambda: timed(
                tf_gulp_cmd(kind, src, out, run_args, ["--shorter-side", str(r)]), out)
        if kind == "videos":
            rows["bound: decode + encode"] = lambda: bound(_bound_video, files, args.workers,
                                                           None)
            if r:
                rows[f"bound: decode + resize {r} + encode"] = lambda: bound(
                    _bound_video, files, args.workers, r)
        else:
            rows["bound: read + header (as is)"] = lambda: bound(_bound_image, files,
                                                                 args.workers, "as-is")
            rows["bound: decode + encode"] = lambda: bound(_bound_image, files, args.workers,
                                                           "reencode")
        print(f"{kind}: {len(files)} files, {per_chunk} per chunk, {args.workers} workers, "
              f"{args.repeat} rounds", flush=True)
        names = list(rows)
        runs: Dict[str, List[Dict[str, Any]]] = {n: [] for n in names}
        for round_ in range(args.repeat):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                runs[name].append(rows[name]())
            print(f"  round {round_ + 1}: " + ", ".join(
                f"{n} {runs[n][-1]['frames_per_s']:.0f}" for n in names), flush=True)
        results[kind] = {"files": len(files), "videos_per_chunk": per_chunk,
                         "rows": {n: _summary(runs[n]) for n in names}}
    shutil.rmtree(out, ignore_errors=True)

    v, im = results["videos"]["rows"], results["images"]["rows"]

    def ratio(a: Dict[str, Any], b: Dict[str, Any]) -> float:
        return round(a["frames_per_s"] / b["frames_per_s"], 2)

    ratios = {
        "videos re-encoded: tf-gulp / gulpio2": ratio(v["tf-gulp"], v["gulpio2"]),
        "images stored as is: tf-gulp / gulpio2": ratio(im["tf-gulp"], im["gulpio2"]),
        "images re-encoded: tf-gulp --reencode / gulpio2": ratio(im["tf-gulp --reencode"],
                                                                 im["gulpio2"]),
        "videos: tf-gulp / bound (decode + encode)": ratio(v["tf-gulp"],
                                                           v["bound: decode + encode"]),
        "images as is: tf-gulp / bound (read + header)": ratio(
            im["tf-gulp"], im["bound: read + header (as is)"]),
        "images re-encoded: tf-gulp / bound (decode + encode)": ratio(
            im["tf-gulp --reencode"], im["bound: decode + encode"]),
    }
    if r:
        ratios[f"videos resized to {r}: tf-gulp / gulpio2"] = ratio(
            v[f"tf-gulp --shorter-side {r}"], v[f"gulpio2 resize {r}"])
        ratios[f"images resized to {r}: tf-gulp / gulpio2"] = ratio(
            im[f"tf-gulp --shorter-side {r}"], im[f"gulpio2 resize {r}"])
    import av
    report = {
        "date": datetime.date.today().isoformat(),
        "command": run_info.command(),
        "machine": {"cpus": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)),
                    "processor": _cpu_model(), "python": platform.python_version(),
                    "pyav": av.__version__, "ffmpeg_cli": _ffmpeg_version(),
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in os.getloadavg()]},
        "workers": args.workers, "repeat": args.repeat,
        "minutes": round((time.perf_counter() - started) / 60, 1),
        "results": results, "ratios": ratios,
    }
    run_info.write_report(args.output, report, indent=1)
    print()
    print("| input | run | frames | median s | frames/s | all runs (s) | without start-up |")
    print("|---|---|---:|---:|---:|---|---:|")
    for kind in ("videos", "images"):
        for name, row in results[kind]["rows"].items():
            runs = ", ".join(f"{x:.2f}" for x in row["all_seconds"])
            inner = (f"{row['ingest_frames_per_s']:.0f}" if row.get("ingest_frames_per_s")
                     else "")
            print(f"| {kind} | {name} | {row['frames']} | {row['seconds']:.2f} | "
                  f"{row['frames_per_s']:.0f} | {runs} | {inner} |")
    print()
    for k, x in ratios.items():
        print(f"{k}: {x:.2f}x")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ffmpeg_version() -> Optional[str]:
    try:
        out = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout
        return out.split("\n", 1)[0]
    except OSError:
        return None


if __name__ == "__main__":
    main()
