"""Prepares the data the bare-root wheel test reads (tools/wheel/test_bare_root.sh):

    python tools/wheel/make_bare_root_data.py OUT_DIR

Copies the reference fixtures of tests/data (a gulp directory written by gulpio2, FFRecord files
written by HFAiLab/ffrecord, single-image HEVC MP4s written by FFmpeg/x265, each with its expected
values) and writes a small Benzina file with `tf_gulp.bzna.create` (x265 through PyAV, so this runs
with the development environment, outside the bare root, which has no encoder), plus the RGB images
it was made from (bzna_sources.npz) for the check to compare the decoded pictures with.
"""

import os
import shutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tf_gulp.bzna import create  # noqa: E402  (after the path above)

# (class, height, width): distinct shapes, so the check can pair decoded pictures with sources.
BZNA_IMAGES = [("ant", 200, 300), ("ant", 96, 64), ("bee", 130, 520)]


def smooth_image(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A smooth colour picture: compresses like a photo, so x265's loss stays small."""
    y, x = np.mgrid[0:h, 0:w]
    a, b, c = rng.uniform(0.005, 0.05, 3)
    img = np.stack([128 + 100 * np.sin(a * x + b * y), 128 + 100 * np.cos(b * x - c * y),
                    128 + 100 * np.sin(c * (x + y))], -1)
    return np.clip(img, 0, 255).astype(np.uint8)


def main(out: str) -> int:
    if os.path.exists(out):
        shutil.rmtree(out)
    data = os.path.join(ROOT, "tests", "data")
    for name in ("gulpio2", "ffrecord", "hevc"):
        shutil.copytree(os.path.join(data, name), os.path.join(out, name),
                        ignore=shutil.ignore_patterns("BUILD"))
    images = os.path.join(out, "bzna_images")
    rng = np.random.default_rng(27)
    sources = {}
    for k, (cls, h, w) in enumerate(BZNA_IMAGES):
        folder = os.path.join(images, "train", cls)
        os.makedirs(folder, exist_ok=True)
        # Binary PPM: lossless and written without a library, so the sources are exactly the
        # pictures x265 encodes.
        path = os.path.join(folder, f"{k}.ppm")
        with open(path, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (w, h) + smooth_image(rng, h, w).tobytes())
        sources[f"{cls}/{h}x{w}"] = create.load_rgb(path)
    create.create_dataset(images, os.path.join(out, "images.bzna"), preset="ultrafast",
                          workers=1, progress=False)
    np.savez(os.path.join(out, "bzna_sources.npz"), **sources)
    shutil.rmtree(images)
    print(f"make_bare_root_data: {out}: gulpio2/, ffrecord/, hevc/, images.bzna "
          f"({len(sources)} images)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
