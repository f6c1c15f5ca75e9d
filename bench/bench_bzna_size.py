#!/usr/bin/env python3
"""What a .bzna costs and keeps against JPEG, on real photos: bytes per image and PSNR against the
source for Benzina's per-image MP4s (x265, yuvj420p) at crf values around the default, against the
same photos as JPEG quality 90 (what `tf-gulp ingest` writes into a gulp directory: 4:4:4; and
4:2:0, the chroma of ImageNet's JPEGs and of the HEVC pictures), at the same resolution. Also the
encoder's speed at the default crf: images/s and images/s per core of `tf_gulp.bzna.create_dataset`'s scheme (one
single-threaded x265 per core, `pools=1:frame-threads=1`) at several presets, against one x265
using every core for one picture at a time (`pools=N`: wavefront threads; frame threads cannot help
a one-frame stream).

    PYTHONPATH=. python3 bench/bench_bzna_size.py [--crf 10 14 18 22 24 26 28] [--max-side 640]
        [--speed-images 8] [--output bench/results/bzna_size.json]

Photos: scikit-image's sample photographs (``pip install scikit-image``; they ship in its wheel):
every RGB photo plus the grayscale ``camera`` (as RGB), each scaled (Lanczos) so its longer side is
at most ``--max-side`` to keep the run short; the same scaled picture is the source of every format.
PSNR is over all pixels and channels of the picture as decoded (the HEVC one by
``tf_gulp.ops.decode_hevc``, the JPEG one by libjpeg-turbo), pooled over the photos (the mean
squared error of all their pixels), and also reported per photo. Bytes per image of the .bzna are
the whole per-image MP4 as a .bzna stores it (headers, the thumbnail of a picture over 512 pixels,
label and name), and of the HEVC picture alone.

The machine is a shared 2-core box: the sizes and PSNRs are exact, the speeds are ratios measured in
one run, each the median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import io
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import run_info  # noqa: E402  bench/run_info.py

# The photographs among the files scikit-image's wheel ships in skimage/data.
PHOTOS = ["astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "ihc.png",
          "motorcycle_left.png", "retina.jpg", "rocket.jpg", "camera.png"]


def photos(max_side: int):
    import skimage
    from PIL import Image

    folder = os.path.join(os.path.dirname(skimage.__file__), "data")
    out = {}
    for file in PHOTOS:
        name = file.rsplit(".", 1)[0]
        rgb = np.asarray(Image.open(os.path.join(folder, file)))
        if rgb.ndim == 2:
            rgb = np.stack([rgb] * 3, axis=-1)
        rgb = rgb[..., :3].astype(np.uint8)
        h, w = rgb.shape[:2]
        if max(h, w) > max_side:
            s = max_side / max(h, w)
            rgb = np.asarray(Image.fromarray(rgb).resize((round(w * s), round(h * s)),
                                                         Image.LANCZOS))
        out[name] = np.ascontiguousarray(rgb)
    return out


def mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))


def psnr(m: float) -> float:
    return float("inf") if m == 0 else 10 * np.log10(255.0 ** 2 / m)


def pooled(rows, key):
    """PSNR of all photos' pixels together, from each photo's MSE and pixel count."""
    total = sum(r["pixels"] for r in rows)
    return psnr(sum(r[key] * r["pixels"] for r in rows) / total)


def jpeg_rows(pics, subsampling: str):
    import simplejpeg

    rows = []
    for name, rgb in pics.items():
        data = simplejpeg.encode_jpeg(rgb, quality=90, colorsubsampling=subsampling)
        back = simplejpeg.decode_jpeg(data)
        rows.append({"photo": name, "bytes": len(data), "mse": mse(rgb, back),
                     "pixels": rgb.shape[0] * rgb.shape[1]})
    return rows


def bzna_rows(pics, crf: int, preset: str):
    import tensorflow as tf
    from tf_gulp import _core
    from tf_gulp.bzna.create import image_mp4
    from tf_gulp.ops import decode_hevc

    rows = []
    for name, rgb in pics.items():
        mp4 = image_mp4(rgb, 0, name + ".png", crf, preset)
        # The full picture's sample: the first HEVC track (bzna_input; the thumbnail's follows).
        full = [t for t in _core.parse_mp4(mp4, name).tracks if t["hvcc"] is not None][0]
        picture = int(full["sizes"][0])
        back = decode_hevc(tf.constant(mp4)).numpy()
        rows.append({"photo": name, "bytes": len(mp4), "picture_bytes": picture,
                     "mse": mse(rgb, back), "pixels": rgb.shape[0] * rgb.shape[1]})
    return rows


def summary(rows):
    n = len(rows)
    return {"bytes_per_image": sum(r["bytes"] for r in rows) / n,
            "picture_bytes_per_image": (sum(r["picture_bytes"] for r in rows) / n
                                        if "picture_bytes" in rows[0] else None),
            "psnr_db": pooled(rows, "mse"),
            "per_photo": [{"photo": r["photo"], "bytes": r["bytes"],
                           "psnr_db": psnr(r["mse"])} for r in rows]}


def _encode_frame(rgb, crf, preset, pools):
    """The full picture of one image as create_dataset encodes it (padded to multiples of 512,
    yuvj420p, one frame), by an x265 with `pools` wavefront threads (create_dataset: 1)."""
    import av
    from tf_gulp.bzna.create import FRAME_MULTIPLE, _round_up, pad_to

    rgb = np.ascontiguousarray(pad_to(rgb, _round_up(rgb.shape[0], FRAME_MULTIPLE),
                                      _round_up(rgb.shape[1], FRAME_MULTIPLE)))
    h, w = rgb.shape[:2]
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        stream = out.add_stream("libx265", rate=1)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuvj420p"
        stream.options = {"crf": str(crf), "preset": preset,
                          "x265-params": f"log-level=none:pools={pools}:frame-threads=1"}
        frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuvj420p")
        frame.pts = 0
        for packet in list(stream.encode(frame)) + list(stream.encode(None)):
            packet.dts = packet.pts
            out.mux(packet)


def _encode_one(args):
    _encode_frame(*args, 1)


def speed(pics, crf, presets, n_images, rounds):
    """images/s of create_dataset's scheme (a process per core) and of one wavefront encoder."""
    cores = len(os.sched_getaffinity(0))
    base = list(pics.values())
    images = [base[i % len(base)] for i in range(n_images)]
    out = {"cores": cores, "images": n_images, "presets": {}}
    with concurrent.futures.ProcessPoolExecutor(cores) as pool:
        list(pool.map(_encode_one, [(images[0], crf, "ultrafast")] * cores))  # warm the workers
        for preset in presets:
            per_core, wave = [], []
            for _ in range(rounds):
                t = time.perf_counter()
                list(pool.map(_encode_one, [(im, crf, preset) for im in images]))
                per_core.append(n_images / (time.perf_counter() - t))
                t = time.perf_counter()
                for im in images:
                    _encode_frame(im, crf, preset, cores)
                wave.append(n_images / (time.perf_counter() - t))
            a, b = statistics.median(per_core), statistics.median(wave)
            out["presets"][preset] = {
                "process_per_core_images_per_s": a, "process_per_core_images_per_s_per_core":
                a / cores, "one_encoder_wavefront_images_per_s": b,
                "one_encoder_wavefront_images_per_s_per_core": b / cores,
                "process_per_core_over_wavefront": a / b,
                "all_rounds": {"process_per_core_images_per_s": per_core,
                               "one_encoder_wavefront_images_per_s": wave}}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crf", type=int, nargs="+", default=[10, 14, 18, 22, 24, 26, 28])
    p.add_argument("--preset", default="medium")
    p.add_argument("--max-side", type=int, default=640)
    p.add_argument("--speed-presets", nargs="+", default=["ultrafast", "fast", "medium"])
    p.add_argument("--speed-images", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", default="bench/results/bzna_size.json")
    args = p.parse_args(argv)
    machine = run_info.machine()  # before the run: its load and tree as the run found them
    pics = photos(args.max_side)
    result = {"date": run_info.now(), "machine": machine,
              "command": run_info.command(argv), "rounds": args.rounds,
              "photos": {n: list(v.shape) for n, v in pics.items()},
              "jpeg_q90_444_gulp": summary(jpeg_rows(pics, "444")),
              "jpeg_q90_420": summary(jpeg_rows(pics, "420")), "bzna": {}}
    for crf in args.crf:
        result["bzna"][str(crf)] = summary(bzna_rows(pics, crf, args.preset))
        b = result["bzna"][str(crf)]
        print(f"crf {crf}: {b['bytes_per_image']:.0f} B/image, {b['psnr_db']:.2f} dB", flush=True)
    for key in ("jpeg_q90_444_gulp", "jpeg_q90_420"):
        j = result[key]
        print(f"{key}: {j['bytes_per_image']:.0f} B/image, {j['psnr_db']:.2f} dB", flush=True)
        # The largest crf whose PSNR is still at least JPEG's: JPEG's quality at the fewest bytes.
        ok = [int(c) for c, b in result["bzna"].items() if b["psnr_db"] >= j["psnr_db"]]
        match = max(ok) if ok else None
        result[f"crf_matching_{key}"] = match
        if match is not None:
            result[f"bytes_ratio_bzna_crf{match}_over_{key}"] = (
                result["bzna"][str(match)]["bytes_per_image"] / j["bytes_per_image"])
        print(f"  crf matching its PSNR: {match}", flush=True)
    from tf_gulp.bzna._x265 import DEFAULT_CRF

    result["encode_speed"] = speed(pics, DEFAULT_CRF, args.speed_presets, args.speed_images,
                                   args.rounds)
    result["encode_speed"]["crf"] = DEFAULT_CRF
    print(json.dumps(result["encode_speed"], indent=1), flush=True)
    run_info.write_report(args.output, result, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
