#!/usr/bin/env python3
"""Read throughput of a gulp directory: tf_gulp.GulpDataset vs gulpio2 vs a TFRecord pipeline.

All readers decode the SAME JPEG bytes, in the same run, interleaved round by round (the order
rotates every round so no reader always runs first or last); we report each reader's median.

Readers (every one decodes every frame of every video to uint8 RGB):

* ``GulpDataset``            ``tf_gulp.GulpDataset(dir)``, iterated eagerly from Python;
* ``GulpDataset+prefetch``   the same followed by ``.prefetch(AUTOTUNE)``;
* ``gulpio2``                gulpio2's own reader, one process: ``for chunk in GulpDirectory(dir):
                             for frames, meta in chunk.iter_all()`` (simplejpeg, fast DCT, fast
                             upsampling);
* ``TFRecord``               the same JPEG bytes as one ``tf.train.Example`` per video (a bytes list
                             of frames) in a TFRecord file, read by ``TFRecordDataset`` ->
                             ``map(parse + tf.io.decode_jpeg per frame, AUTOTUNE)`` -> ``prefetch``;
* ``TFRecord per-frame``     the same file, one element per frame: ``flat_map`` ->
                             ``map(decode_jpeg, AUTOTUNE)`` -> ``batch(frames)`` -> ``prefetch``
                             (the ratios use the faster of the two TFRecord pipelines);
* ``bound``                  the decode bound (decode_bound.py): libjpeg-turbo decoding the
                             JPEGs from memory into clips with GulpDataset's settings, no I/O,
                             no framework, one thread per core; and on one core.

Diagnostic rows (not part of the comparison) split GulpDataset's time: ``decode=False`` (reading
and per-element overhead only) and ``ds.reduce`` (consumed inside the TF runtime, no Python per
element).

The dataset is synthetic but JPEG-realistic (smooth colour fields, texture, moving shapes and
sensor noise; quality 90, 4:4:4, as gulpio2 writes), built with tf_gulp's GulpIngestor and reused
across runs when the parameters match. Every reader runs once untimed first (TensorFlow's functions
get traced), and every data file is read again right before every timed run, so all readers see a
warm page cache (some VMs drop page-cache pages idle for a few seconds: see PageCacheWarmer). A
run is timed from its start to its last element; destroying a tf.data iterator afterwards (where
TensorFlow stops its autotuning thread) is timed separately and reported (see iterator_timing.py).

The machine may be shared: each run records the CPU time other processes used meanwhile, and a
run during which they used more than ``--busy-threshold`` cores is repeated once the machine is
quiet again (up to ``--retries`` times); the JSON keeps all of it.

Usage (from the repository root)::

    make bench        # or:
    PYTHONPATH=. python3 bench/bench_gulp_read.py [--videos 200] [--frames 16] [--height 240]
        [--width 320] [--rounds 5] [--workdir DIR] [--output bench/results/gulp_read.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import run_info  # noqa: E402  (bench/run_info.py, next to this script)

run_info.use_this_checkout()

import simplejpeg  # noqa: E402

import iterator_timing  # noqa: E402  (bench/, next to this script)
from decode_bound import bound_reader  # noqa: E402

from tf_gulp.gulp import AbstractDatasetAdapter, GulpDirectory, GulpIngestor  # noqa: E402

VIDEOS_PER_CHUNK = 16
JPEG_QUALITY = 90
SUBSAMPLING = "444"
MB = 1e6  # MB/s figures are 10^6 bytes of JPEG data per second


# -------------------------------------------------------------------------------------------------
# Synthetic videos


def _interpolation_matrix(n_out: int, n_in: int) -> np.ndarray:
    """[n_out, n_in] weights that linearly interpolate n_in control points onto n_out pixels."""
    pos = np.linspace(0.0, n_in - 1.0, n_out)
    lo = np.clip(np.floor(pos).astype(np.int64), 0, n_in - 2)
    frac = (pos - lo).astype(np.float32)
    m = np.zeros((n_out, n_in), np.float32)
    m[np.arange(n_out), lo] = 1.0 - frac
    m[np.arange(n_out), lo + 1] = frac
    return m


def synthetic_video(seed: int, num_frames: int, height: int, width: int) -> List[np.ndarray]:
    """A reproducible clip with the statistics that matter for JPEG size and decode speed: a smooth
    colour field with fine texture that pans (camera motion), a few solid shapes moving across
    it, and per-frame sensor noise. At 320x240, quality 90, 4:4:4 a frame is about 25 KB, like
    real 320x240 video frames at that quality."""
    rng = np.random.default_rng(seed)
    margin = 64  # the background is larger than the frame so that it can pan
    bh, bw = height + margin, width + margin
    control = rng.uniform(0, 255, (5, 6, 3)).astype(np.float32)
    background = np.einsum("yi,ijc,xj->yxc", _interpolation_matrix(bh, 5), control,
                           _interpolation_matrix(bw, 6))
    texture = rng.normal(0.0, 1.0, (bh, bw)).astype(np.float32)
    for axis in (0, 1):  # a 3x3 box blur: texture at a few pixels' scale, not pure noise
        texture = np.roll(texture, 1, axis) + texture + np.roll(texture, -1, axis)
    background += (6.0 / 3.0) * texture[..., None]
    pan = rng.uniform(-2.0, 2.0, 2)
    shapes = [(rng.uniform(0, width), rng.uniform(0, height), rng.uniform(10, 50),
               rng.uniform(0, 255, 3).astype(np.float32), rng.uniform(-6, 6, 2))
              for _ in range(4)]
    yy, xx = np.mgrid[0:height, 0:width]
    frames = []
    for t in range(num_frames):
        dy = int(margin // 2 + pan[0] * t) % margin
        dx = int(margin // 2 + pan[1] * t) % margin
        image = background[dy:dy + height, dx:dx + width].copy()
        for cx, cy, radius, colour, velocity in shapes:
            inside = (xx - cx - velocity[0] * t) ** 2 + (yy - cy - velocity[1] * t) ** 2
            image[inside < radius * radius] = colour
        image += rng.normal(0.0, 2.5, image.shape).astype(np.float32)
        frames.append(np.clip(image, 0, 255).astype(np.uint8))
    return frames


class SyntheticAdapter(AbstractDatasetAdapter):
    """Synthetic videos for GulpIngestor; frames are generated inside iter_data (in the ingestor's
    worker processes), from (seed, video index) only."""

    def __init__(self, videos: int, frames: int, height: int, width: int, seed: int) -> None:
        self.videos, self.frames, self.height, self.width, self.seed = (
            videos, frames, height, width, seed)

    def __len__(self) -> int:
        return self.videos

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        indices = range(self.videos)[slice_element or slice(None)]
        for i in indices:
            yield {"id": f"video_{i:05d}", "meta": {"label": i % 10},
                   "frames": synthetic_video(self.seed * 1_000_003 + i, self.frames,
                                             self.height, self.width)}


def build_gulp(args: argparse.Namespace) -> str:
    """Write (or reuse) the synthetic gulp directory under the workdir."""
    params = {"videos": args.videos, "frames": args.frames, "height": args.height,
              "width": args.width, "seed": args.seed, "quality": JPEG_QUALITY,
              "subsampling": SUBSAMPLING, "videos_per_chunk": VIDEOS_PER_CHUNK, "version": 1}
    name = f"gulp_{args.videos}x{args.frames}_{args.width}x{args.height}_s{args.seed}"
    gulp_dir = os.path.join(args.workdir, name)
    params_path = os.path.join(gulp_dir, "bench_params.json")
    if os.path.exists(params_path):
        with open(params_path) as f:
            if json.load(f) == params:
                print(f"Reusing {gulp_dir}")
                return gulp_dir
    if os.path.exists(gulp_dir):
        for entry in os.listdir(gulp_dir):
            os.remove(os.path.join(gulp_dir, entry))
    print(f"Writing {args.videos} synthetic videos of {args.frames} frames "
          f"({args.width}x{args.height}) to {gulp_dir}")
    adapter = SyntheticAdapter(args.videos, args.frames, args.height, args.width, args.seed)
    GulpIngestor(adapter, gulp_dir, videos_per_chunk=VIDEOS_PER_CHUNK,
                 num_workers=min(2, os.cpu_count() or 1), jpeg_quality=JPEG_QUALITY,
                 jpeg_subsampling=SUBSAMPLING)()
    with open(params_path, "w") as f:  # written last: marks a complete dataset
        json.dump(params, f)
    return gulp_dir


def load_jpegs(gulp_dir: str) -> List[Tuple[str, int, List[bytes]]]:
    """(id, label, JPEG bytes of every frame) for each video, in storage order."""
    videos = []
    with GulpDirectory(gulp_dir) as gd:
        for chunk in gd.chunks():
            for key in chunk.meta_dict:
                jpegs, meta = chunk.read_jpegs(key)
                videos.append((key, int(meta["label"]), jpegs))
    return videos


def write_tfrecord(path: str, videos: Sequence[Tuple[str, int, List[bytes]]]) -> None:
    """One tf.train.Example per video: id, label, and the frames' JPEG bytes as a bytes list."""
    import tensorflow as tf

    if os.path.exists(path):
        os.remove(path)
    tmp = path + ".tmp"
    with tf.io.TFRecordWriter(tmp) as writer:
        for key, label, jpegs in videos:
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[key.encode()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                "frames": tf.train.Feature(bytes_list=tf.train.BytesList(value=jpegs)),
            }))
            writer.write(example.SerializeToString())
    os.replace(tmp, path)


# -------------------------------------------------------------------------------------------------
# Readers: each returns a function that reads the whole dataset once and returns the frame count.


def gulp_dataset_reader(gulp_dir: str, *, prefetch: bool = False, decode: bool = True,
                        in_graph: bool = False) -> Callable[[], int]:
    import tensorflow as tf
    import tf_gulp

    ds = tf_gulp.GulpDataset(gulp_dir, decode=decode)
    if prefetch:
        ds = ds.prefetch(tf.data.AUTOTUNE)
    if in_graph:
        @tf.function
        def count():
            return ds.reduce(tf.constant(0, tf.int64),
                             lambda n, e: n + tf.shape(e["frames"], out_type=tf.int64)[0])
        return lambda: int(count())

    return _frames_of_elements(ds)


def _frames_of_elements(ds) -> Callable[[], int]:
    """A run over a tf.data pipeline of {"frames": [T, H, W, C], ...}: counts the frames."""
    def read() -> int:
        return sum(int(e["frames"].shape[0]) for e in iterator_timing.iterate(ds))
    return read


def gulpio2_reader(gulp_dir: str) -> Callable[[], int]:
    import gulpio2

    gd = gulpio2.GulpDirectory(gulp_dir)  # parses the .gmeta indexes once, like GulpDataset

    def read() -> int:
        n = 0
        for chunk in gd:  # gulpio2 decodes with simplejpeg: fast DCT, fast upsampling
            for frames, _meta in chunk.iter_all():
                n += len(frames)
        return n
    return read


def tfrecord_dataset(path: str):
    """The TFRecord pipeline: read -> parse -> decode every frame -> prefetch. The parse+decode map
    runs on all cores (AUTOTUNE); decode_jpeg uses libjpeg-turbo's fast integer IDCT (INTEGER_FAST,
    which is also TensorFlow's default: checked below)."""
    import tensorflow as tf

    features = {"id": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
                "frames": tf.io.VarLenFeature(tf.string)}

    def parse_and_decode(record):
        example = tf.io.parse_single_example(record, features)
        jpegs = example["frames"].values
        frames = tf.map_fn(
            lambda jpeg: tf.io.decode_jpeg(jpeg, channels=3, dct_method="INTEGER_FAST"),
            jpegs, fn_output_signature=tf.TensorSpec([None, None, 3], tf.uint8))
        return {"frames": frames, "id": example["id"], "label": example["label"]}

    ds = tf.data.TFRecordDataset(path)
    ds = ds.map(parse_and_decode, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)


def tfrecord_per_frame_dataset(path: str, frames_per_video: int):
    """The other common shape of the TFRecord pipeline: one element per frame, so the decode map
    parallelizes over frames rather than videos, then ``batch`` regroups each video's frames
    (every synthetic video has the same number of frames)."""
    import tensorflow as tf

    features = {"frames": tf.io.VarLenFeature(tf.string)}

    def jpegs_of(record):
        return tf.io.parse_single_example(record, features)["frames"].values

    ds = tf.data.TFRecordDataset(path).map(jpegs_of)
    ds = ds.flat_map(tf.data.Dataset.from_tensor_slices)  # one element per JPEG
    ds = ds.map(lambda jpeg: tf.io.decode_jpeg(jpeg, channels=3, dct_method="INTEGER_FAST"),
                num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(frames_per_video).map(lambda frames: {"frames": frames})
    return ds.prefetch(tf.data.AUTOTUNE)


def tfrecord_reader(path: str, per_frame_batch: Optional[int] = None) -> Callable[[], int]:
    ds = (tfrecord_dataset(path) if per_frame_batch is None
          else tfrecord_per_frame_dataset(path, per_frame_batch))

    return _frames_of_elements(ds)


# -------------------------------------------------------------------------------------------------
# Timing on a shared machine


def _machine_busy_seconds() -> float:
    """CPU seconds all processes have spent busy since boot (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """CPU seconds used by this process (all its threads, also finished ones)."""
    t = os.times()
    return t.user + t.system


def timed_run(read: Callable[[], int]) -> Tuple[float, float, float, float]:
    """Run ``read`` once. Returns (wall seconds, this process's CPU seconds, CPU seconds that
    other processes used meanwhile, seconds spent destroying the run's tf.data iterator).

    The clock runs from the start of ``read`` to its last element; destroying the tf.data
    iterator afterwards is timed apart (see iterator_timing)."""
    busy0, own0 = _machine_busy_seconds(), _own_cpu_seconds()
    start = time.perf_counter()
    read()
    wall = time.perf_counter() - start
    own = _own_cpu_seconds() - own0
    others = max(0.0, (_machine_busy_seconds() - busy0) - own)
    return wall, own, others, iterator_timing.teardown_seconds()


class PageCacheWarmer:
    """Reads files right before a timed run so that they are in the page cache.

    Reading a file once before the rounds is not enough everywhere: some VMs reclaim page-cache
    pages that have not been touched for a few seconds (here DAMON's "pageout" scheme, for pages
    idle 6 s), so later rounds would partly read from disk, and readers would be measured against
    different cache states depending on their place in the rotation. Re-reading every data file
    (untimed, a few tens of ms from the cache) before every run gives every reader the same, warm,
    cache."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self.buffer = bytearray(8 << 20)

    def __call__(self) -> float:
        """Read every file; returns the seconds it took (large when pages had been dropped)."""
        start = time.perf_counter()
        view = memoryview(self.buffer)
        for path in self.paths:
            with open(path, "rb", buffering=0) as f:
                while f.readinto(view):
                    pass
        return time.perf_counter() - start


def wait_until_idle(max_wait: float, threshold: float = 0.1) -> float:
    """Wait (at most ``max_wait`` s) until other processes use less than ``threshold`` cores over a
    second. Returns the seconds waited."""
    waited = 0.0
    while waited < max_wait:
        busy0, own0 = _machine_busy_seconds(), _own_cpu_seconds()
        time.sleep(1.0)
        waited += 1.0
        others = (_machine_busy_seconds() - busy0) - (_own_cpu_seconds() - own0)
        if others < threshold:
            break
    return waited


# -------------------------------------------------------------------------------------------------
# Fairness checks: the same IDCT everywhere


def dct_checks(gulp_dir: str, tfrecord_path: str, videos) -> Dict[str, Any]:
    """Decode a few frames every way and compare pixels: shows which IDCT each reader really
    uses (libjpeg-turbo's fast and accurate IDCTs give different pixels)."""
    import tensorflow as tf
    import tf_gulp

    key, _label, jpegs = videos[0]
    sample = jpegs[:4]
    ref_fast = [simplejpeg.decode_jpeg(j, colorspace="RGB", fastdct=True, fastupsample=True)
                for j in sample]  # gulpio2's decode
    ref_accurate = [simplejpeg.decode_jpeg(j, colorspace="RGB") for j in sample]

    def max_diff(frames_a, frames_b) -> int:
        return int(max(np.abs(a.astype(np.int16) - b.astype(np.int16)).max()
                       for a, b in zip(frames_a, frames_b)))

    def tf_decode(method: str):
        return [tf.io.decode_jpeg(j, channels=3, dct_method=method).numpy() for j in sample]

    def gulp_decode(method: str):
        ds = tf_gulp.GulpDataset(gulp_dir, ids=[key], frames=list(range(len(sample))),
                                 dct_method=method)
        return list(next(iter(ds))["frames"].numpy())

    tf_default = tf_decode("")
    checks = {
        "frames_compared": len(sample),
        "tf_decode_jpeg_default_equals_INTEGER_FAST": all(
            np.array_equal(a, b) for a, b in zip(tf_default, tf_decode("INTEGER_FAST"))),
        "tf_decode_jpeg_default_equals_INTEGER_ACCURATE": all(
            np.array_equal(a, b) for a, b in zip(tf_default, tf_decode("INTEGER_ACCURATE"))),
        "max_abs_diff": {
            "tf_INTEGER_FAST_vs_simplejpeg_fast": max_diff(tf_decode("INTEGER_FAST"), ref_fast),
            "GulpDataset_fast_vs_simplejpeg_fast": max_diff(gulp_decode("fast"), ref_fast),
            "GulpDataset_accurate_vs_simplejpeg_accurate": max_diff(gulp_decode("accurate"),
                                                                    ref_accurate),
            "simplejpeg_fast_vs_accurate": max_diff(ref_fast, ref_accurate),
        },
    }
    return checks


# -------------------------------------------------------------------------------------------------


def machine_info() -> Dict[str, Any]:
    """run_info.machine() (read before the run), with the peers' versions."""
    try:
        import gulpio2
        gulpio2_version = getattr(gulpio2, "__version__", "unknown")
    except ImportError:
        gulpio2_version = None
    return dict(run_info.machine(), simplejpeg=simplejpeg.__version__, gulpio2=gulpio2_version)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--videos", type=int, default=200, help="videos (default: 200)")
    p.add_argument("--frames", type=int, default=16, help="frames per video (default: 16)")
    p.add_argument("--height", type=int, default=240, help="frame height (default: 240)")
    p.add_argument("--width", type=int, default=320, help="frame width (default: 320)")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds per reader (default: 5)")
    p.add_argument("--seed", type=int, default=0, help="synthetic content seed (default: 0)")
    p.add_argument("--busy-threshold", type=float, default=0.15,
                   help="retry a run during which other processes used more than this many "
                        "cores (default: 0.15)")
    p.add_argument("--retries", type=int, default=3,
                   help="retries of a run disturbed by other processes (default: 3)")
    p.add_argument("--max-wait", type=float, default=60.0,
                   help="longest wait, in seconds, for the machine to go quiet (default: 60)")
    p.add_argument("--workdir", default=os.path.join(run_info.REPO_ROOT, "bench", "results", "data"),
                   help="where the gulp directory and the TFRecord file go "
                        "(default: bench/results/data, reused when the parameters match)")
    p.add_argument("--output", default=os.path.join(run_info.REPO_ROOT, "bench", "results",
                                                    "gulp_read.json"),
                   help="JSON results (default: bench/results/gulp_read.json)")
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    gulp_dir = build_gulp(args)
    videos = load_jpegs(gulp_dir)
    clips = [jpegs for _key, _label, jpegs in videos]
    all_jpegs = [j for jpegs in clips for j in jpegs]
    total_frames = len(all_jpegs)
    jpeg_bytes = sum(len(j) for j in all_jpegs)
    tfrecord_path = os.path.join(gulp_dir + ".tfrecord")
    if not os.path.exists(tfrecord_path) or (os.path.getmtime(tfrecord_path)
                                             < os.path.getmtime(gulp_dir)):
        write_tfrecord(tfrecord_path, videos)
    gulp_bytes = sum(e.stat().st_size for e in os.scandir(gulp_dir) if e.name.endswith(".gulp"))

    import tensorflow as tf  # noqa: F401  (after the data is written, for a quicker --help)

    info = machine_info()
    cores = os.cpu_count() or 1
    print(f"{info['cpu']}, {cores} cores; TensorFlow {info['tensorflow']}, "
          f"gulpio2 {info['gulpio2']}, simplejpeg {info['simplejpeg']}")
    print(f"Data: {len(videos)} videos, {total_frames} frames of {args.width}x{args.height}, "
          f"JPEG q{JPEG_QUALITY} {SUBSAMPLING}: {jpeg_bytes / MB:.1f} MB of JPEG "
          f"({jpeg_bytes / total_frames / 1024:.1f} KiB/frame); TFRecord file "
          f"{os.path.getsize(tfrecord_path) / MB:.1f} MB")

    checks = dct_checks(gulp_dir, tfrecord_path, videos)
    print("IDCT check (max |diff| in pixel values; 0 = identical):",
          json.dumps(checks["max_abs_diff"]),
          "| tf.io.decode_jpeg default == INTEGER_FAST:",
          checks["tf_decode_jpeg_default_equals_INTEGER_FAST"])

    closers: List[Callable[[], None]] = []
    readers: Dict[str, Callable[[], int]] = {
        "GulpDataset": gulp_dataset_reader(gulp_dir),
        "GulpDataset+prefetch": gulp_dataset_reader(gulp_dir, prefetch=True),
        "gulpio2": gulpio2_reader(gulp_dir),
        "TFRecord": tfrecord_reader(tfrecord_path),
        "TFRecord per-frame": tfrecord_reader(tfrecord_path, per_frame_batch=args.frames),
        f"bound ({cores} threads)": bound_reader(clips, cores, closers),
        "bound (1 thread)": bound_reader(clips, 1, closers),
        "diag: GulpDataset decode=False": gulp_dataset_reader(gulp_dir, decode=False),
        "diag: GulpDataset ds.reduce": gulp_dataset_reader(gulp_dir, in_graph=True),
    }
    names = list(readers)

    # Every data file is re-read right before every timed run (see PageCacheWarmer).
    warm_cache = PageCacheWarmer(
        [os.path.join(gulp_dir, e.name) for e in sorted(os.scandir(gulp_dir), key=lambda e: e.name)
         if e.name.endswith((".gulp", ".gmeta"))] + [tfrecord_path])
    print(f"Warm-up (fills the page cache, traces functions), then {args.rounds} rounds...")
    for name in names:
        got = readers[name]()
        if got != total_frames:
            raise SystemExit(f"{name} read {got} frames, expected {total_frames}")
    # The machine may be shared (compiles, tests): a measurement during which other processes
    # used more than --busy-threshold cores is retried after the machine goes quiet, and every
    # measurement records how much CPU the others took.
    waited = wait_until_idle(args.max_wait)
    if waited >= args.max_wait:
        print(f"  (the machine did not go quiet within {args.max_wait:.0f} s; measuring anyway)")
    runs: Dict[str, List[Dict[str, float]]] = {name: [] for name in names}
    retried = 0
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]  # rotate who goes first
        for name in order:
            for attempt in range(args.retries + 1):
                warm_seconds = warm_cache()
                wall, own, others, teardown = timed_run(readers[name])
                if others / wall <= args.busy_threshold or attempt == args.retries:
                    break
                retried += 1
                wait_until_idle(args.max_wait)
            runs[name].append({"seconds": wall, "cpu_seconds": own,
                               "others_cpu_seconds": others,
                               "iterator_teardown_seconds": teardown,
                               "cache_warming_seconds": warm_seconds})
        print(f"  round {r + 1}/{args.rounds}: " + ", ".join(
            f"{name.replace('diag: ', '')} {total_frames / runs[name][-1]['seconds']:.0f}"
            for name in names) + " frames/s")
    for close in closers:
        close()
    shared = sum(run["others_cpu_seconds"] for rs in runs.values() for run in rs)
    timed = sum(run["seconds"] for rs in runs.values() for run in rs)
    print(f"  other processes used {shared / timed:.2f} cores on average during the timed runs "
          f"({retried} runs retried because others used > {args.busy_threshold} cores)")
    warming = [run["cache_warming_seconds"] for rs in runs.values() for run in rs]
    print(f"  re-reading the data files before each run took {1e3 * statistics.median(warming):.0f} "
          f"ms (median), {1e3 * max(warming):.0f} ms (max; long = pages had been dropped)")

    bound_name = f"bound ({cores} threads)"
    results: Dict[str, Dict[str, Any]] = {}
    for name in names:
        seconds = [run["seconds"] for run in runs[name]]
        median = statistics.median(seconds)
        results[name] = {"runs": runs[name], "median_seconds": median,
                         "frames_per_s": total_frames / median,
                         "jpeg_MB_per_s": jpeg_bytes / MB / median,
                         "cores_used": statistics.median(
                             run["cpu_seconds"] / run["seconds"] for run in runs[name]),
                         "cpu_us_per_frame": statistics.median(
                             1e6 * run["cpu_seconds"] / total_frames for run in runs[name]),
                         "iterator_teardown_ms": statistics.median(
                             1e3 * run["iterator_teardown_seconds"] for run in runs[name])}
    # The TFRecord baseline is the faster of its two pipeline shapes.
    tfrecord_best = max(("TFRecord", "TFRecord per-frame"),
                        key=lambda name: results[name]["frames_per_s"])
    for name in names:
        fps = results[name]["frames_per_s"]
        results[name]["x_gulpio2"] = fps / results["gulpio2"]["frames_per_s"]
        results[name]["x_tfrecord"] = fps / results[tfrecord_best]["frames_per_s"]
        results[name]["fraction_of_bound"] = fps / results[bound_name]["frames_per_s"]

    print()
    header = f"{'reader':<32}{'frames/s':>10}{'MB/s':>8}{'x gulpio2':>11}{'x TFRecord':>12}" \
             f"{'of bound':>10}{'cores':>7}{'CPU us/frame':>14}{'teardown ms':>13}"
    print(header)
    print("-" * len(header))
    for name in names:
        r = results[name]
        print(f"{name:<32}{r['frames_per_s']:>10.0f}{r['jpeg_MB_per_s']:>8.1f}"
              f"{r['x_gulpio2']:>10.2f}x{r['x_tfrecord']:>11.2f}x"
              f"{100 * r['fraction_of_bound']:>9.0f}%{r['cores_used']:>7.2f}"
              f"{r['cpu_us_per_frame']:>14.0f}{r['iterator_teardown_ms']:>13.0f}")
    print(f"(medians of {args.rounds} rounds, warm page cache; MB/s = 10^6 bytes of JPEG data/s; "
          f"x TFRecord: vs the faster TFRecord pipeline, '{tfrecord_best}'; "
          f"cores = CPU time / wall time of this process; CPU us/frame = its CPU time per "
          f"frame, all threads; teardown ms = destroying the tf.data iterator after the clock stopped, "
          f"see bench/iterator_timing.py)")

    if shared / timed > args.busy_threshold:
        print(f"WARNING: other processes used {shared / timed:.2f} cores during the timed runs; "
              "the figures above understate the readers that use several cores.")
    best = max(results["GulpDataset"]["frames_per_s"],
               results["GulpDataset+prefetch"]["frames_per_s"])
    # Targets compare readers on the same cores: the TFRecord pipeline, and the bound. gulpio2
    # here reads in one process, so its ratio is no target; gulpio2 on every core (in a
    # DataLoader, and bare in one process per core) is bench_fair_peers.py's comparison.
    targets = {
        "GulpDataset_vs_TFRecord": {"target": 1.0,
                                    "measured": best / results[tfrecord_best]["frames_per_s"]},
        "GulpDataset_fraction_of_bound": {
            "target": 0.95, "measured": best / results[bound_name]["frames_per_s"]},
    }
    for name, t in targets.items():
        t["met"] = t["measured"] >= t["target"]
        print(f"target {name}: >= {t['target']:.2f}, measured {t['measured']:.2f} "
              f"({'met' if t['met'] else 'MISSED'}; best of GulpDataset with/without prefetch)")

    info["loadavg_end"] = os.getloadavg()
    report = {
        "benchmark": "gulp_read",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([os.path.relpath(sys.argv[0], run_info.REPO_ROOT)] + sys.argv[1:]),
        "machine": info,
        "data": {"videos": len(videos), "frames_per_video": args.frames,
                 "height": args.height, "width": args.width, "total_frames": total_frames,
                 "jpeg_bytes": jpeg_bytes, "gulp_data_bytes": gulp_bytes,
                 "tfrecord_bytes": os.path.getsize(tfrecord_path), "quality": JPEG_QUALITY,
                 "subsampling": SUBSAMPLING, "videos_per_chunk": VIDEOS_PER_CHUNK,
                 "page_cache": "warm: every .gulp/.gmeta/.tfrecord file is read (untimed) right "
                               "before every timed run"},
        "rounds": args.rounds,
        "other_processes_cores_during_runs": shared / timed,
        "runs_retried_for_contention": retried,
        "idct_checks": checks,
        "results": results,
        "tfrecord_baseline": tfrecord_best,
        "targets": targets,
    }
    run_info.write_report(args.output, report, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
