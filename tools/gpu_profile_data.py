#!/usr/bin/env python3
"""Makes the device check's picture sets for its throughput and profile phases (docs/gpu.md), beside
the correctness data tools/gpu_proof_data.py makes: HEVC pictures (Annex-B, x265 intra, 8-bit 4:2:0)
in cc/gpu/testing/data/sets/ and JPEGs for the GPU JPEG ceiling in cc/gpu/testing/data/jpeg/.

Run on a development machine (needs ffmpeg with libx265, numpy, Pillow, matplotlib's sample data):
    python tools/gpu_profile_data.py

Every picture is cut from one real photo, matplotlib's sample `grace_hopper.jpg` (512x600, a US Navy
photograph in the public domain), by crops at random places and scales, flips and resizes: the
pictures carry a photo's texture and so a photo's bytes per pixel. Sets (sets/index.txt: "set file
width height" per line, width x height the picture's displayed size):
- imagenet_like: 32 pictures, short side 200-800, aspect 3:4 to 16:9 either way, crf 24;
- equal_bytes_512 / equal_bytes_1024: 8 pictures each, 512x512 and 1024x1024, each encoded at the
  crf whose size is nearest 24 KiB (the same bytes per picture at both sizes);
- bitrate_crf16 / bitrate_crf26 / bitrate_crf36: the same 8 512x512 pictures at three rates.
JPEGs (jpeg/index.txt: "set file width height"): gulp_320x240 (16 frames, 4:2:0, quality 90) and
imagenet_like (the 32 pictures above, 4:2:0, quality 90).
"""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

REPO = pathlib.Path(__file__).resolve().parent.parent
DATA = REPO / "cc" / "gpu" / "testing" / "data"
SETS = DATA / "sets"
JPEG = DATA / "jpeg"
SEED = 44
EQUAL_BYTES_TARGET = 24 << 10
ASPECTS = (1.0, 4 / 3, 3 / 2, 16 / 9)  # long side / short side; either orientation


def photo() -> Image.Image:
    import matplotlib
    path = pathlib.Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    if not path.exists():
        sys.exit(f"{path} missing: matplotlib's sample data has the source photo")
    return Image.open(path).convert("RGB")


def cut(src: Image.Image, rng: np.random.Generator, width: int, height: int) -> Image.Image:
    """A crop of `src` of the output's aspect, at a random place and scale, resized (Lanczos)."""
    sw, sh = src.size
    scale = min(sw / width, sh / height) * rng.uniform(0.45, 1.0)
    cw, ch = max(16, int(width * scale)), max(16, int(height * scale))
    x0, y0 = int(rng.integers(0, sw - cw + 1)), int(rng.integers(0, sh - ch + 1))
    out = src.crop((x0, y0, x0 + cw, y0 + ch)).resize((width, height), Image.LANCZOS)
    return out.transpose(Image.FLIP_LEFT_RIGHT) if rng.random() < 0.5 else out


def x265(picture: Image.Image, crf: int, tmp: pathlib.Path) -> bytes:
    raw = tmp / "in.rgb"
    raw.write_bytes(picture.tobytes())
    out = tmp / "out.hevc"
    w, h = picture.size
    proc = subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
         "-i", str(raw), "-c:v", "libx265", "-pix_fmt", "yuv420p", "-x265-params",
         f"log-level=error:keyint=1:crf={crf}", "-frames:v", "1", "-f", "hevc", str(out)],
        capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ffmpeg/libx265 failed:\n{proc.stderr[-2000:]}")
    return out.read_bytes()


def nearest_bytes(picture: Image.Image, target: int, tmp: pathlib.Path) -> tuple[int, bytes]:
    """The crf (0-51) whose picture is nearest `target` bytes (size falls as crf rises)."""
    lo, hi = 0, 51
    while lo < hi:
        mid = (lo + hi) // 2
        if len(x265(picture, mid, tmp)) > target:
            lo = mid + 1
        else:
            hi = mid
    tries = [(c, x265(picture, c, tmp)) for c in {max(0, lo - 1), lo}]
    return min(tries, key=lambda t: abs(len(t[1]) - target))


def jpeg(picture: Image.Image) -> bytes:
    buf = io.BytesIO()
    picture.save(buf, "JPEG", quality=90, subsampling=2)  # 2: 4:2:0
    return buf.getvalue()


def main() -> None:
    src = photo()
    rng = np.random.default_rng(SEED)
    for folder in (SETS, JPEG):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*"):
            old.unlink()
    rows, jpeg_rows = [], []

    def add(set_name: str, name: str, data: bytes, w: int, h: int) -> None:
        (SETS / name).write_bytes(data)
        rows.append(f"{set_name} {name} {w} {h}")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for i in range(32):
            short = int(rng.integers(100, 401)) * 2
            long_ = int(round(short * ASPECTS[i % len(ASPECTS)] / 2)) * 2
            w, h = (long_, short) if (i // len(ASPECTS)) % 2 == 0 else (short, long_)
            pic = cut(src, rng, w, h)
            add("imagenet_like", f"imagenet_like_{i:02d}.hevc", x265(pic, 24, tmp), w, h)
            (JPEG / f"imagenet_like_{i:02d}.jpg").write_bytes(jpeg(pic))
            jpeg_rows.append(f"imagenet_like imagenet_like_{i:02d}.jpg {w} {h}")
        for size in (512, 1024):
            for i in range(8):
                crf, data = nearest_bytes(cut(src, rng, size, size), EQUAL_BYTES_TARGET, tmp)
                add(f"equal_bytes_{size}", f"equal_bytes_{size}_{i}_crf{crf}.hevc", data, size,
                    size)
        pictures = [cut(src, rng, 512, 512) for _ in range(8)]
        for crf in (16, 26, 36):
            for i, pic in enumerate(pictures):
                add(f"bitrate_crf{crf}", f"bitrate_crf{crf}_{i}.hevc", x265(pic, crf, tmp), 512, 512)
        for i in range(16):
            (JPEG / f"gulp_320x240_{i:02d}.jpg").write_bytes(jpeg(cut(src, rng, 320, 240)))
            jpeg_rows.append(f"gulp_320x240 gulp_320x240_{i:02d}.jpg 320 240")
    (SETS / "index.txt").write_text("\n".join(rows) + "\n")
    (JPEG / "index.txt").write_text("\n".join(jpeg_rows) + "\n")
    for folder in (SETS, JPEG):
        print(f"{folder}: {len(list(folder.iterdir())) - 1} files, "
              f"{sum(p.stat().st_size for p in folder.iterdir()) >> 10} KiB")


if __name__ == "__main__":
    main()
