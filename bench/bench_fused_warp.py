#!/usr/bin/env python3
"""Augmented clips: the fused decode + warp vs decoding every pixel first (issue 24).

Every reader turns the same gulp clips into augmented frames of ``--out`` x ``--out`` pixels
(a random resized crop, area 0.08-1, aspect ratio 3/4-4/3, and a horizontal flip at p = 0.5),
``--clip-frames`` frames per clip sampled from each ``--frames``-frame video. All readers run in
the same process, interleaved round by round (the order rotates every round); each reader's
median is reported, and the ratios are of medians of the same run: of frames/s (``ratios``) and of
this process's CPU time per frame (``cpu_ratios``, all its threads: the steadier figure where other
work shares the cores).

Readers:

* ``fused``          ``GulpDataset(dir, num_frames=8, training=True, augment=[
                     RandomResizedCrop(S), RandomHorizontalFlip()])``: each frame decoded only as
                     far as the clip's crop needs, at the DCT scale that keeps the output's
                     resolution, warped into the output;
* ``fused, no DCT scaling``  the same with ``dct_scaling=False`` (diagnostic);
* ``fused + colour`` ``fused`` with ``ColorJitter(0.4, 0.4, 0.4, 0.1), RandomGrayscale(0.2)``
                     after the flip in the list (every clip jittered: p = 1): the cost of the colour stage is
                     ``colour_cost`` = fused frames/s / fused + colour frames/s (and the CPU-time
                     ratio), the issue-32 target being <= 1.15 at 112x112;
* ``tf.image``       ``GulpDataset(dir, num_frames=8, training=True)`` (every pixel decoded)
                     ``.map(crop + tf.image.resize + flip, AUTOTUNE)``: the recipe the docs showed
                     before (a stateless random crop of the clip, resized, flipped);
* ``DALI CPU``       NVIDIA DALI's CPU pipeline (``device_id=None``): the same selected frames'
                     JPEG bytes from memory -> ``fn.decoders.image_random_crop`` (ROI decode) ->
                     ``fn.resize`` -> ``fn.flip`` (per frame: DALI has no per-clip crop), batches
                     of 64 frames, one thread per core;
* ``full-decode bound``  libjpeg-turbo (simplejpeg, fast IDCT) decoding every selected frame from
                     memory, one thread per core: no I/O, no framework, no augmentation.

The data: bench_gulp_read.py's synthetic, JPEG-realistic videos (quality 90, 4:4:4), written by
tf_gulp's GulpIngestor (gulpio2's layout) and reused across runs. Two cases: the P1 data
(``--videos 200 --frames 16``, 320x240) to 112x112, and larger frames (``--large-*``, 640x480)
to 224x224.

Usage (from the repository root; DALI is installed only for this benchmark, never a dependency:
``pip install nvidia-dali-cuda120``; without it the DALI row is left out)::

    PYTHONPATH=. python3 bench/bench_fused_warp.py [--rounds 5] [--output bench/results/fused_warp.json]

``--cases both --readers "fused + colour"`` runs only the colour comparison, at both sizes.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
from typing import Callable, Dict, List, Optional

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import run_info  # noqa: E402  (bench/run_info.py, next to this script)

run_info.use_this_checkout()

import bench_gulp_read as gr  # noqa: E402  (data, bound, timing helpers)

SEED = 1
SCALE = (0.08, 1.0)
RATIO = (3.0 / 4.0, 4.0 / 3.0)


def segment_centres(num_frames: int, clip_frames: int) -> List[int]:
    """The frames GulpDataset's segment sampling takes without training (the same count)."""
    return [int((2 * k + 1) * num_frames / (2 * clip_frames)) for k in range(clip_frames)]


def color_transforms():
    """The colour stage ``fused + colour`` adds: torchvision's usual video/SSL jitter."""
    from tf_gulp.transforms import ColorJitter, RandomGrayscale

    return [ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1),
            RandomGrayscale(p=0.2)]


def fused_reader(gulp_dir: str, clip_frames: int, out: int, dct_scaling: bool = True,
                 color=None):
    import tensorflow as tf
    import tf_gulp
    from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop

    augment = [RandomResizedCrop(out, scale=SCALE, ratio=RATIO), RandomHorizontalFlip(),
               *(color or [])]
    ds = tf_gulp.GulpDataset(gulp_dir, num_frames=clip_frames, training=True, seed=SEED,
                             augment=augment, dct_scaling=dct_scaling).prefetch(tf.data.AUTOTUNE)

    def read() -> int:
        return sum(int(e["frames"].shape[0]) for e in ds)
    return read


def tf_image_reader(gulp_dir: str, clip_frames: int, out: int):
    import tensorflow as tf
    import tf_gulp

    def augment(e):
        frames = e["frames"]
        key = tf.random.experimental.stateless_fold_in(tf.constant([SEED, 0], tf.int64),
                                                       tf.strings.to_hash_bucket_fast(e["id"], 1 << 30))
        shape = tf.shape(frames)
        h, w = tf.cast(shape[1], tf.float32), tf.cast(shape[2], tf.float32)
        u = tf.random.stateless_uniform([4], seed=key)
        area = SCALE[0] + (SCALE[1] - SCALE[0]) * u[0]
        ratio = tf.exp(np.log(RATIO[0]) + (np.log(RATIO[1]) - np.log(RATIO[0])) * u[1])
        ch = tf.clip_by_value(tf.sqrt(area * h * w / ratio), 1.0, h)
        cw = tf.clip_by_value(tf.sqrt(area * h * w * ratio), 1.0, w)
        y0 = tf.cast((h - ch) * u[2], tf.int32)
        x0 = tf.cast((w - cw) * u[3], tf.int32)
        crop = frames[:, y0:y0 + tf.cast(ch, tf.int32), x0:x0 + tf.cast(cw, tf.int32)]
        clip = tf.image.resize(crop, (out, out))
        flip = tf.random.stateless_uniform([], seed=key + 1) < 0.5
        clip = tf.cond(flip, lambda: tf.reverse(clip, [2]), lambda: clip)
        return tf.cast(clip, tf.uint8), e["label"]

    ds = (tf_gulp.GulpDataset(gulp_dir, num_frames=clip_frames, training=True, seed=SEED)
          .map(augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE))

    def read() -> int:
        return sum(int(clip.shape[0]) for clip, _label in ds)
    return read


def dali_reader(jpegs: List[bytes], out: int, threads: int, batch: int = 64):
    from nvidia.dali import fn, pipeline_def, types

    arrays = [np.frombuffer(j, np.uint8) for j in jpegs]

    class Source:
        def __iter__(self):
            self.i = 0
            return self

        def __next__(self):
            if self.i >= len(arrays):
                raise StopIteration
            b = arrays[self.i:self.i + batch]
            self.i += batch
            return b

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None, seed=SEED,
                  prefetch_queue_depth=2)
    def pipe():
        data = fn.external_source(source=Source(), cycle="raise", dtype=types.UINT8, ndim=1)
        images = fn.decoders.image_random_crop(data, device="cpu", output_type=types.RGB,
                                               random_area=list(SCALE),
                                               random_aspect_ratio=list(RATIO))
        images = fn.resize(images, resize_x=out, resize_y=out)
        return fn.flip(images, horizontal=fn.random.coin_flip())

    p = pipe()
    p.build()

    def read() -> int:
        frames = 0
        try:
            while True:
                (images,) = p.run()
                frames += len(images)
        except StopIteration:
            p.reset()
        return frames
    return read


def measure(readers: Dict[str, Callable[[], int]], expected: int, rounds: int) -> Dict:
    names = list(readers)
    for name in names:  # warm-up: traces functions, fills the page cache
        got = readers[name]()
        if got != expected:
            raise SystemExit(f"{name} made {got} frames, expected {expected}")
    runs: Dict[str, List[Dict[str, float]]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            wall, own, others, _teardown = gr.timed_run(readers[name])
            runs[name].append({"seconds": wall, "cpu_seconds": own, "others_cpu_seconds": others})
            print(f"  round {r}: {name:<28} {expected / wall:8.0f} frames/s "
                  f"(others used {others / wall:.2f} cores)", flush=True)
    results = {}
    for name in names:
        fps = [expected / run["seconds"] for run in runs[name]]
        cpu = [run["cpu_seconds"] / expected * 1e6 for run in runs[name]]
        results[name] = {"frames_per_s": round(statistics.median(fps), 1),
                         "frames_per_s_range": [round(min(fps), 1), round(max(fps), 1)],
                         "cpu_us_per_frame": round(statistics.median(cpu), 1),
                         "runs": runs[name]}
    return results


def run_case(label: str, videos: int, frames: int, height: int, width: int, clip_frames: int,
             out: int, workdir: str, rounds: int, with_dali: bool,
             only: Optional[List[str]] = None) -> Dict:
    args = argparse.Namespace(videos=videos, frames=frames, height=height, width=width, seed=0,
                              workdir=workdir)
    gulp_dir = gr.build_gulp(args)
    chosen = segment_centres(frames, clip_frames)
    jpegs = [v[2][k] for v in gr.load_jpegs(gulp_dir) for k in chosen]
    expected = len(jpegs)
    cores = os.cpu_count() or 1
    closers: List[Callable[[], None]] = []  # the bound's thread pool, shut down after the rounds
    readers = {
        "fused": fused_reader(gulp_dir, clip_frames, out),
        "tf.image": tf_image_reader(gulp_dir, clip_frames, out),
        "full-decode bound": gr.bound_reader([[j] for j in jpegs], cores, closers),
        "fused, no DCT scaling": fused_reader(gulp_dir, clip_frames, out, dct_scaling=False),
        "fused + colour": fused_reader(gulp_dir, clip_frames, out, color=color_transforms()),
    }
    if with_dali:
        readers["DALI CPU"] = dali_reader(jpegs, out, cores)
    if only:
        readers = {name: r for name, r in readers.items() if name in only or name == "fused"}
    print(f"{label}: {videos} clips x {clip_frames} of {frames} frames, {width}x{height} -> "
          f"{out}x{out}; {rounds} rounds", flush=True)
    try:
        results = measure(readers, expected, rounds)
    finally:
        for close in closers:
            close()
    fused = results["fused"]["frames_per_s"]
    ratios = {f"fused_vs_{name}": round(fused / r["frames_per_s"], 3)
              for name, r in results.items() if name != "fused"}
    # On a machine shared with other work, throughput follows whatever CPU the others leave;
    # this process's CPU time per frame (all its threads) is the steadier measure of cost.
    fused_cpu = results["fused"]["cpu_us_per_frame"]
    cpu_ratios = {f"fused_vs_{name}": round(r["cpu_us_per_frame"] / fused_cpu, 3)
                  for name, r in results.items() if name != "fused"}
    case = {"data": {"videos": videos, "frames": frames, "height": height, "width": width,
                     "clip_frames": clip_frames, "output": out, "frames_per_run": expected},
            "results": results, "ratios": ratios, "cpu_ratios": cpu_ratios}
    if "fused + colour" in results:
        # What the colour stage costs on top of the fused decode + warp (1.0: nothing).
        case["colour_cost"] = {
            "frames_per_s": round(fused / results["fused + colour"]["frames_per_s"], 3),
            "cpu_per_frame": round(results["fused + colour"]["cpu_us_per_frame"] / fused_cpu, 3),
            "per_round_frames_per_s_median": round(statistics.median(
                run_c["seconds"] / run_f["seconds"] for run_f, run_c in
                zip(results["fused"]["runs"], results["fused + colour"]["runs"])), 3)}
    return case


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--videos", type=int, default=200)
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--clip-frames", type=int, default=8)
    parser.add_argument("--large-videos", type=int, default=50)
    parser.add_argument("--large-height", type=int, default=480)
    parser.add_argument("--large-width", type=int, default=640)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", default="112,224",
                        help="which cases: 112, 224, or both (112,224 or 'both')")
    parser.add_argument("--readers", default="",
                        help="comma-separated readers to run besides 'fused' (default: all)")
    parser.add_argument("--workdir", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                          "tf_gulp_bench"))
    parser.add_argument("--output", default=os.path.join(run_info.REPO_ROOT, "bench", "results",
                                                           "fused_warp.json"))
    args = parser.parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    try:
        import nvidia.dali  # noqa: F401
        with_dali = True
    except ImportError:
        print("NVIDIA DALI is not installed: the DALI row is left out")
        with_dali = False
    only = [r for r in args.readers.split(",") if r] or None
    wanted = set(args.cases.split(","))
    if "both" in wanted:
        wanted = (wanted - {"both"}) | {"112", "224"}
    if not wanted or not wanted <= {"112", "224"}:
        parser.error(f"--cases {args.cases!r}: the cases are 112, 224 or both")
    cases = {}
    if "112" in wanted:
        cases["112"] = run_case("P1 data to 112x112", args.videos, args.frames, 240, 320,
                                args.clip_frames, 112, args.workdir, args.rounds, with_dali, only)
    if "224" in wanted:
        cases["224"] = run_case("larger frames to 224x224", args.large_videos, args.frames,
                                args.large_height, args.large_width, args.clip_frames, 224,
                                args.workdir, args.rounds, with_dali, only)
    info = gr.machine_info()
    if with_dali:
        import nvidia.dali
        info["dali"] = nvidia.dali.__version__
    report = {"benchmark": "bench/bench_fused_warp.py",
              "date": datetime.date.today().isoformat(), "rounds": args.rounds,
              "command": " ".join(["python3", "bench/bench_fused_warp.py"] + (argv or sys.argv[1:])),
              "machine": info, "cases": cases}
    for name, case in cases.items():
        print(f"{name}x{name} frames/s: " +
              ", ".join(f"{k} {v:.2f}x" for k, v in case["ratios"].items()))
        print(f"{name}x{name} CPU per frame: " +
              ", ".join(f"{k} {v:.2f}x" for k, v in case["cpu_ratios"].items()))
        if "colour_cost" in case:
            print(f"{name}x{name} colour stage cost: {case['colour_cost']}")
    run_info.write_report(args.output, report, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
