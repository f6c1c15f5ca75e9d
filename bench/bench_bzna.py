#!/usr/bin/env python3
"""Images/s of tf_gulp's Benzina pipelines on the CPU against their bounds, on the same images, in
the same run: raw libavcodec decoding the same HEVC pictures on all cores, and the standard TF
ImageNet JPEG pipeline.

    PYTHONPATH=. python3 bench/bench_bzna.py [--images 128] [--rounds 5] [--batch 64]
        [--preset medium] [--crf 10] [--output bench/results/bzna.json]

Data (made once, reused while the parameters match): ``--images`` smooth synthetic colour photos of
ImageNet-like sizes (shorter side 300-500, aspect 3/4-4/3) written as JPEG (libjpeg-turbo quality 90
through simplejpeg, 4:2:0), and the same images converted with ``tf_gulp.bzna.create_dataset`` (x265
crf 10, ``--preset``, frames padded to multiples of 512, thumbnails).

Readers (one epoch over every image per round; the tf.data ones in batches of ``--batch`` with
``prefetch(AUTOTUNE)``):

* ``decode``  ``tf_gulp.bzna.BenzinaDataset(file, shuffle=True)``: read + ``decode_hevc`` (MP4
              parsing, libavcodec, RGB conversion of the clean region) per image, ``map`` with
              ``num_parallel_calls=AUTOTUNE``; the images' shapes are batched so that variable sizes
              batch (the pixels are made and dropped);
* ``bzna``    ``tf_gulp.bzna.DataLoader(file, (224, 224), B, shuffle=True,
              warp_transform=RandomResizedCrop(), bias/norm = ImageNet mean/std)``: read +
              decode_hevc_warped (decode, RGB of the crop's rectangle only, crop, resize, flip and
              normalize in one C++ op);
* ``raw``     the bound: ``bench/bzna_decode_bound.c`` (compiled by this script against the same
              libavcodec) decoding the same pictures as Annex-B byte streams (PyAV's
              ``hevc_mp4toannexb``) from memory with nothing else, one single-threaded decoder per
              core (what the tf.data readers do: one picture per map call);
* ``raw_frame``, ``raw_slice``  the same with one decoder using all cores as frame threads (the
              pictures as one stream) or slice threads (x265's wavefronts): other ways libavcodec
              can use the cores, measured to check that ``raw`` is the best of the three;
* ``jpeg``    ``list_files`` order shuffled, ``read_file`` + ``decode_jpeg`` +
              ``stateless_sample_distorted_bounding_box`` (area 0.08-1, ratio 3/4-4/3) + ``crop`` +
              ``resize`` (bilinear) + ``stateless_random_flip_left_right`` + normalize, ``map`` with
              ``num_parallel_calls=AUTOTUNE``.

Every round runs every reader, in an order rotated round by round; each reader reports its median
images/s, and the ratios of medians to the raw-libavcodec bound (the best raw mode). Also reported:
bytes per image of each format and their ratio. Numbers depend on the machine: this is a 2-core box
shared with other work, so compare the ratios, measured side by side, rather than absolute rates.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import run_info  # bench/run_info.py: date, machine, command of the run


def make_images(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        short = int(rng.integers(300, 501))
        ratio = float(np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3))))
        h, w = (short, int(short * ratio)) if ratio >= 1 else (int(short / ratio), short)
        y, x = np.mgrid[0:h, 0:w]
        f = rng.uniform(0.005, 0.06, 6)
        img = np.stack([128 + 90 * np.sin(f[0] * x + f[1] * y) + 30 * np.sin(f[2] * x * y / 300),
                        128 + 90 * np.cos(f[3] * x - f[4] * y),
                        128 + 90 * np.sin(f[5] * (x + y)) + rng.normal(0, 6, (h, w))], -1)
        yield np.clip(img, 0, 255).astype(np.uint8)


def prepare(root: str, n: int, preset: str, crf: int):
    import simplejpeg

    from tf_gulp.bzna.create import create_dataset

    stamp = os.path.join(root, "params.json")
    params = {"images": n, "preset": preset, "crf": crf, "version": 1}
    bzna = os.path.join(root, "data.bzna")
    jpeg_dir = os.path.join(root, "jpeg")
    if os.path.exists(stamp) and json.load(open(stamp)) == params and os.path.exists(bzna):
        return bzna, jpeg_dir
    cls_dir = os.path.join(jpeg_dir, "train", "c0")
    os.makedirs(cls_dir, exist_ok=True)
    for i, img in enumerate(make_images(n)):
        with open(os.path.join(cls_dir, f"{i:06d}.jpg"), "wb") as f:
            f.write(simplejpeg.encode_jpeg(img, quality=90, colorsubsampling="420"))
    create_dataset(jpeg_dir, bzna, crf=crf, preset=preset, overwrite=True, progress=True)
    json.dump(params, open(stamp, "w"))
    return bzna, jpeg_dir


def bzna_pipeline(path: str, batch: int, seed: int):
    from tf_gulp.bzna import transforms as T
    from tf_gulp.bzna.dataset import DataLoader

    return DataLoader(path, (224, 224), batch, shuffle=True, seed=seed, epochs=1,
                      warp_transform=T.RandomResizedCrop(),
                      bias_transform=T.ConstantBiasTransform(),
                      norm_transform=T.ConstantNormTransform())


def jpeg_pipeline(jpeg_dir: str, batch: int, seed: int):
    import tensorflow as tf

    mean = tf.constant([123.675, 116.28, 103.53])
    std = tf.constant([58.395, 57.12, 57.375])
    files = tf.data.Dataset.list_files(os.path.join(jpeg_dir, "*", "*", "*.jpg"), shuffle=True,
                                       seed=seed)

    def load(i, path):
        key = tf.stack([tf.cast(seed, tf.int64), i])
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
            tf.shape(image), tf.zeros([1, 0, 4]), seed=key, area_range=(0.08, 1.0),
            aspect_ratio_range=(3 / 4, 4 / 3), max_attempts=10, use_image_if_no_bounding_boxes=True)
        image = tf.slice(image, begin, size)
        image = tf.image.resize(image, (224, 224))
        image = tf.image.stateless_random_flip_left_right(image, seed=key + 1)
        return (image - mean) / std, tf.constant(0, tf.int64)

    return (files.enumerate().map(load, num_parallel_calls=tf.data.AUTOTUNE)
            .batch(batch).prefetch(tf.data.AUTOTUNE))


def decode_pipeline(path: str, batch: int, seed: int):
    import tensorflow as tf

    from tf_gulp.bzna.dataset import BenzinaDataset

    ds = BenzinaDataset(path, shuffle=True, seed=seed)
    # Shapes, not pixels, are batched: the images have different sizes.
    return (ds.map(lambda x: (tf.shape(x["image"]), x["label"]))
            .batch(batch).prefetch(tf.data.AUTOTUNE))


def annex_b_samples(path: str, out: str) -> int:
    """Writes the file's pictures as Annex-B byte streams (uint32 size + bytes each) to `out`."""
    import io
    import struct

    import av

    from tf_gulp.bzna.dataset import BenzinaDataset

    n = 0
    with open(out, "wb") as f:
        for x in BenzinaDataset(path, decode=False).as_numpy_iterator():
            movie = av.open(io.BytesIO(x["sample"]))
            videos = movie.streams.video
            stream = next((s for s in videos if s.metadata.get("handler_name") == "bzna_input"),
                          videos[0])
            bsf = av.bitstream.BitStreamFilterContext("hevc_mp4toannexb", stream)
            packets = [bytes(q) for p in movie.demux(stream) if p.size
                       for q in bsf.filter(p)]
            packets += [bytes(q) for q in bsf.filter(None)]
            picture = b"".join(packets)
            f.write(struct.pack("<I", len(picture)) + picture)
            movie.close()
            n += 1
    return n


def build_bound(root: str) -> str:
    """Compiles bench/bzna_decode_bound.c; returns the program's path."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bzna_decode_bound.c")
    program = os.path.join(root, "bzna_decode_bound")
    subprocess.run(["cc", "-O2", source, "-o", program, "-lavcodec", "-lavutil", "-pthread"],
                   check=True)
    return program


def run_bound(program: str, samples: str, mode: str, threads: int) -> tuple:
    out = subprocess.run([program, samples, mode, str(threads)], check=True, capture_output=True,
                         text=True).stdout
    r = json.loads(out)
    return r["images"], r["seconds"], r["cpu_seconds"]


def cpu_seconds() -> float:
    """User + system CPU seconds of every thread of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_once(ds) -> tuple:
    """(images, wall seconds, CPU seconds) of one pass. The iterator is made before the clock
    starts: making one instantiates the pipeline's functions (0.1-0.3 s here, once per pass,
    nothing decoded yet: tf.data starts its threads on the first element)."""
    it = iter(ds)
    start, cpu = time.perf_counter(), cpu_seconds()
    n = 0
    for images, _ in it:
        n += int(images.shape[0])
    return n, time.perf_counter() - start, cpu_seconds() - cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--preset", default="medium")
    # The reference toolchain's crf, which the committed figures use (create_dataset's default is
    # another: the bench pins its own so that runs stay comparable).
    ap.add_argument("--crf", type=int, default=10)
    ap.add_argument("--label", default="", help="names the run in the JSON (e.g. the checkout)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "tf_gulp_bench_bzna"))
    ap.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "bzna.json"))
    args = ap.parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them

    os.makedirs(args.data, exist_ok=True)
    bzna, jpeg_dir = prepare(args.data, args.images, args.preset, args.crf)
    jpeg_files = [os.path.join(dp, f) for dp, _, fs in os.walk(jpeg_dir) for f in fs]
    sizes = {"bzna": os.path.getsize(bzna) / args.images,
             "jpeg": sum(os.path.getsize(f) for f in jpeg_files) / len(jpeg_files)}

    import tf_gulp

    cpus = len(os.sched_getaffinity(0))
    program = build_bound(args.data)
    samples = os.path.join(args.data, "annexb.bin")
    assert annex_b_samples(bzna, samples) == args.images

    def run(name: str, seed: int) -> tuple:
        if name.startswith("raw"):
            mode = {"raw": "per-core", "raw_frame": "frame", "raw_slice": "slice"}[name]
            return run_bound(program, samples, mode, cpus)
        if name == "decode":
            return run_once(decode_pipeline(bzna, args.batch, seed))
        if name == "bzna":
            return run_once(bzna_pipeline(bzna, args.batch, seed))
        return run_once(jpeg_pipeline(jpeg_dir, args.batch, seed))

    names = ["raw", "decode", "bzna", "jpeg", "raw_frame", "raw_slice"]
    rates = {k: [] for k in names}
    cpu_ms = {k: [] for k in names}
    for name in names:  # warm-up (graph building, page cache, decoders), not timed
        run(name, 0)
    # TensorFlow's import leaves a large heap; full collections of it, set off by the consumer
    # loop's allocations, would be charged to the readers. Frozen, the loop in Python costs what a
    # training step's input handling costs, nothing more.
    gc.collect()
    gc.freeze()
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            n, secs, cpu = run(name, r + 1)
            assert n == args.images, (name, n)
            rates[name].append(n / secs)
            cpu_ms[name].append(1e3 * cpu / n)
    medians = {k: statistics.median(v) for k, v in rates.items()}
    cpu_medians = {k: statistics.median(v) for k, v in cpu_ms.items()}
    bound = max(("raw", "raw_frame", "raw_slice"), key=lambda k: medians[k])
    result = {
        "label": args.label, "tf_gulp": os.path.dirname(tf_gulp.__file__),
        # When and how: the plots and tests/test_plot_results.py read these.
        "date": run_info.now(), "command": run_info.command(argv), "machine": machine,
        "images": args.images, "batch": args.batch, "rounds": args.rounds, "preset": args.preset, "crf": args.crf,
        "cpus": cpus, "load_average": os.getloadavg(),
        "images_per_s": medians,
        "images_per_s_range": {k: [min(v), max(v)] for k, v in rates.items()},
        "all_rounds": rates,
        "bound": bound,
        "ratio_to_raw_libavcodec": {k: medians[k] / medians[bound]
                                    for k in ("decode", "bzna")},
        # CPU time per image (all threads of the process): what the machine's load does not
        # change much; the bound's over ours is the share of our CPU time that is libavcodec's.
        "cpu_ms_per_image": cpu_medians,
        "all_rounds_cpu_ms_per_image": cpu_ms,
        "cpu_efficiency_vs_raw": {k: cpu_medians["raw"] / cpu_medians[k]
                                  for k in ("decode", "bzna")},
        "bytes_per_image": sizes,
    }
    result["ratio_bzna_over_jpeg"] = medians["bzna"] / medians["jpeg"]
    result["size_ratio_bzna_over_jpeg"] = sizes["bzna"] / sizes["jpeg"]
    run_info.write_report(args.output, result, indent=2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
