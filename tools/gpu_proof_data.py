#!/usr/bin/env python3
"""Makes the data the GPU device check (tools/gpu_device_check.sh) needs on a GPU machine without TensorFlow,
libavcodec or network: HEVC pictures as Annex-B byte streams, warp matrices, and the CPU path's
outputs for them, in cc/gpu/testing/data/ (committed; about 6 MiB).

Run on a development machine (needs ffmpeg with libx265, g++, libavcodec-dev, numpy):
    python tools/gpu_proof_data.py
Samples: the three Benzina test pictures of tests/data/hevc (full range, padded frames, clean crop
at the top left) and generated 512x512 pictures (limited range BT.601, x265 intra-only). The CPU
reference is cc/codec/hevc_decoder (libavcodec) + cc/warp, built here by cc/gpu/testing/make_reference.cc;
it is stored as float16 levels (0.125-level steps near 255, below the 2-level tolerance).
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "cc" / "gpu" / "testing" / "data"
OUT_SIZE = 224
GENERATED = 12


def run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")


def smooth_picture(seed: int, size: int = 512) -> np.ndarray:
    """Smooth colour gradients plus a few sharp edges: chroma and interpolation both matter."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    img = np.stack([np.sin(6.28 * (x * rng.uniform(1, 3) + y * rng.uniform(0, 2)) + c)
                    for c in range(3)], axis=-1) * 100 + 128
    for _ in range(6):
        x0, y0, w, h = rng.integers(0, size - 64, 4)
        img[y0:y0 + h % 128 + 8, x0:x0 + w % 128 + 8] = rng.integers(0, 256, 3)
    return np.clip(img, 0, 255).astype(np.uint8)


def matrix_for(index: int, width: int, height: int) -> np.ndarray:
    """Output (224x224) -> picture: scale to the picture, with a rotation, a flip or a shift that
    reaches outside it for some."""
    rng = np.random.default_rng(1000 + index)
    sx, sy = width / OUT_SIZE, height / OUT_SIZE
    angle = rng.uniform(-0.3, 0.3)
    c, s = np.cos(angle), np.sin(angle)
    m = np.array([[sx * c, -sx * s, width * rng.uniform(-0.1, 0.2)],
                  [sy * s, sy * c, height * rng.uniform(-0.1, 0.2)],
                  [0, 0, 1]], np.float32)
    if index % 3 == 1:  # horizontal flip
        m[0] = [-sx, 0, width - 1]
    return m.reshape(9)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*"):
        if old.is_file():  # sets/ and jpeg/ are tools/gpu_profile_data.py's
            old.unlink()
    expected = json.loads((REPO / "tests/data/hevc/EXPECTED.json").read_text())
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, info in sorted(expected.items()):
            target = OUT / f"{name}.hevc"
            run(["ffmpeg", "-v", "error", "-i", str(REPO / f"tests/data/hevc/{name}.mp4"),
                 "-map", "0:v:0", "-c", "copy", "-bsf:v", "hevc_mp4toannexb", "-f", "hevc",
                 str(target)])
            h, w = info["image_hw"]
            samples.append({"file": target.name, "width": w, "height": h,
                            "source": f"tests/data/hevc/{name}.mp4"})
        for i in range(GENERATED):
            raw = tmp / f"g{i}.rgb"
            raw.write_bytes(smooth_picture(i).tobytes())
            target = OUT / f"generated512_{i:02d}.hevc"
            run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "512x512",
                 "-i", str(raw), "-c:v", "libx265", "-pix_fmt", "yuv420p", "-x265-params",
                 "log-level=error:keyint=1:crf=12", "-frames:v", "1", "-f", "hevc", str(target)])
            samples.append({"file": target.name, "width": 512, "height": 512,
                            "source": "generated (tools/gpu_proof_data.py)"})
        matrices = np.stack([matrix_for(i, s["width"], s["height"]) for i, s in enumerate(samples)])
        (OUT / "matrices.f32").write_bytes(matrices.astype("<f4").tobytes())
        tool = tmp / "make_reference"
        run(["g++", "-std=c++17", "-O2", "-I", str(REPO), str(REPO / "cc/gpu/testing/make_reference.cc"),
             str(REPO / "cc/codec/hevc_decoder.cc"), str(REPO / "cc/codec/ycbcr.cc"),
             str(REPO / "cc/warp/similarity_warp.cc"), "-o", str(tool), "-lavcodec", "-lavutil",
             "-pthread"])
        ref = tmp / "reference.f32"
        args = [str(tool), str(ref), str(OUT / "matrices.f32"), str(OUT_SIZE)]
        for s in samples:
            args += [str(OUT / s["file"]), str(s["width"]), str(s["height"])]
        run(args)
        levels = np.frombuffer(ref.read_bytes(), "<f4")
        (OUT / "reference.f16").write_bytes(levels.astype("<f2").tobytes())
    index = {"out_size": OUT_SIZE, "layout": "NHWC", "chroma": "bilinear",
             "oob_color": [0, 128, 255], "reference": "reference.f16 (float16 levels, NHWC)",
             "matrices": "matrices.f32 (float32 [N, 9], output pixel -> picture pixel)",
             "samples": samples}
    (OUT / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    # The same list for the C++ device check (no JSON library there): "file width height" per line.
    (OUT / "index.txt").write_text("".join(f"{s['file']} {s['width']} {s['height']}\n"
                                           for s in samples))
    print(f"{len(samples)} samples, {sum(p.stat().st_size for p in OUT.iterdir()) >> 10} KiB "
          f"in {OUT}")


if __name__ == "__main__":
    main()
