#!/usr/bin/env python3
"""Images/s to 224x224 normalized float batches: tf_gulp's Benzina pipeline (CPU HEVC decode +
similarity warp) vs the standard TF ImageNet JPEG pipeline, on the same images, in the same run.

    PYTHONPATH=. python3 bench/bench_bzna.py [--images 128] [--rounds 3] [--batch 64]
        [--preset medium] [--output bench/results/bzna.json]

Data (made once, reused while the parameters match): ``--images`` smooth synthetic colour photos of
ImageNet-like sizes (shorter side 300-500, aspect 3/4-4/3) written as JPEG (libjpeg-turbo quality 90
through simplejpeg, 4:2:0), and the same images converted with ``tf_gulp.bzna.create_dataset`` (x265
crf 10, ``--preset``, frames padded to multiples of 512, thumbnails).

Pipelines (one epoch over every image per round, batches of ``--batch``, ``prefetch(AUTOTUNE)``):

* ``bzna``  ``tf_gulp.bzna.DataLoader(file, (224, 224), B, shuffle=True,
            warp_transform=RandomResizedCrop(), bias/norm = ImageNet mean/std)``: read + decode_hevc
            + similarity_warp (crop, resize, flip and normalize fused), all C++ ops;
* ``jpeg``  ``list_files`` order shuffled, ``read_file`` + ``decode_jpeg`` +
            ``stateless_sample_distorted_bounding_box`` (area 0.08-1, ratio 3/4-4/3) + ``crop`` +
            ``resize`` (bilinear) + ``stateless_random_flip_left_right`` + normalize, ``map`` with
            ``num_parallel_calls=AUTOTUNE``.

The pipelines alternate round by round; each reports its median images/s. Also reported: bytes per
image of each format and their ratio. Numbers depend on the machine: this is a 2-core box shared with
other work, so compare the ratio, measured side by side, rather than absolute rates.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np


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


def prepare(root: str, n: int, preset: str):
    import simplejpeg

    from tf_gulp.bzna.create import create_dataset

    stamp = os.path.join(root, "params.json")
    params = {"images": n, "preset": preset, "version": 1}
    bzna = os.path.join(root, "data.bzna")
    jpeg_dir = os.path.join(root, "jpeg")
    if os.path.exists(stamp) and json.load(open(stamp)) == params and os.path.exists(bzna):
        return bzna, jpeg_dir
    cls_dir = os.path.join(jpeg_dir, "train", "c0")
    os.makedirs(cls_dir, exist_ok=True)
    for i, img in enumerate(make_images(n)):
        with open(os.path.join(cls_dir, f"{i:06d}.jpg"), "wb") as f:
            f.write(simplejpeg.encode_jpeg(img, quality=90, colorsubsampling="420"))
    create_dataset(jpeg_dir, bzna, preset=preset, overwrite=True, progress=True)
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


def run_once(ds) -> tuple:
    start = time.perf_counter()
    n = 0
    for images, _ in ds:
        n += int(images.shape[0])
    return n, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--preset", default="medium")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "tf_gulp_bench_bzna"))
    ap.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "bzna.json"))
    args = ap.parse_args(argv)

    os.makedirs(args.data, exist_ok=True)
    bzna, jpeg_dir = prepare(args.data, args.images, args.preset)
    jpeg_files = [os.path.join(dp, f) for dp, _, fs in os.walk(jpeg_dir) for f in fs]
    sizes = {"bzna": os.path.getsize(bzna) / args.images,
             "jpeg": sum(os.path.getsize(f) for f in jpeg_files) / len(jpeg_files)}

    rates = {"bzna": [], "jpeg": []}
    # Warm-up (graph building, page cache), not timed.
    run_once(bzna_pipeline(bzna, args.batch, 0))
    run_once(jpeg_pipeline(jpeg_dir, args.batch, 0))
    for r in range(args.rounds):
        order = ["bzna", "jpeg"] if r % 2 == 0 else ["jpeg", "bzna"]
        for name in order:
            ds = (bzna_pipeline(bzna, args.batch, r + 1) if name == "bzna"
                  else jpeg_pipeline(jpeg_dir, args.batch, r + 1))
            n, secs = run_once(ds)
            assert n == args.images, (name, n)
            rates[name].append(n / secs)
    result = {
        "images": args.images, "batch": args.batch, "rounds": args.rounds, "preset": args.preset,
        "cpus": len(os.sched_getaffinity(0)),
        "images_per_s": {k: statistics.median(v) for k, v in rates.items()},
        "all_rounds": rates,
        "bytes_per_image": sizes,
    }
    result["ratio_bzna_over_jpeg"] = result["images_per_s"]["bzna"] / result["images_per_s"]["jpeg"]
    result["size_ratio_bzna_over_jpeg"] = sizes["bzna"] / sizes["jpeg"]
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
