"""Shared helpers for the HEVC / Benzina tests: the fixtures in tests/data/hevc and Debian's ffmpeg."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import numpy as np

HEVC_DIR = pathlib.Path(__file__).parent / "data" / "hevc"
NAMES = ("square512", "landscape300x200", "tall600x700")


def expected():
    return json.loads((HEVC_DIR / "EXPECTED.json").read_text())


def expected_pixels():
    return np.load(HEVC_DIR / "expected_pixels.npz")


def have_ffmpeg() -> bool:
    return shutil.which("ffprobe") is not None and shutil.which("ffmpeg") is not None


def ffprobe(path) -> dict:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json",
                          str(path)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ffmpeg_rgb(path, width: int, height: int, stream: str = "") -> np.ndarray:
    """Debian ffmpeg's own decode of the first picture, converted to rgb24 by its swscale.
    `stream`: an ffmpeg stream specifier ("0:v:0"); by default ffmpeg picks the stream."""
    mapping = ["-map", stream] if stream else []
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path)] + mapping +
                         ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(height, width, 3)


def smooth_image(rng, h, w):
    """A smooth colour image (compresses like a photo, unlike noise)."""
    y, x = np.mgrid[0:h, 0:w]
    a, b, c = rng.uniform(0.005, 0.05, 3)
    img = np.stack([128 + 100 * np.sin(a * x + b * y), 128 + 100 * np.cos(b * x - c * y),
                    128 + 100 * np.sin(c * (x + y))], -1)
    return np.clip(img, 0, 255).astype(np.uint8)


def make_train_bzna(root, sizes, seed: int = 23) -> str:
    """`root`/data.bzna, made by `tf-gulp bzna create` from smooth JPEGs of `sizes` ((h, w) each)
    in train/ant and train/bee by turns (bee first); returns its path."""
    import simplejpeg  # pylint: disable=import-outside-toplevel

    from tf_gulp.cli.main import main as cli  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(seed)
    for k, (h, w) in enumerate(sizes):
        d = root / "img" / "train" / ("ant" if k % 2 else "bee")
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{k}.jpg").write_bytes(simplejpeg.encode_jpeg(smooth_image(rng, h, w), quality=98))
    out = root / "data.bzna"
    assert cli(["bzna", "create", str(root / "img"), str(out), "--preset", "ultrafast", "-j", "1",
                "--no-progress"]) == 0
    return str(out)


def make_split_images(root) -> None:
    """Six small JPEGs in split/class folders (train: ant x2, bee; val: ant, bee; test: cow), the
    layout `tf-gulp bzna create` reads: inputs for the create tests that kill or starve it."""
    import simplejpeg  # pylint: disable=import-outside-toplevel

    rng = np.random.default_rng(3)
    for split, cls, k in [("train", "ant", 0), ("train", "ant", 1), ("train", "bee", 0),
                          ("val", "ant", 0), ("val", "bee", 0), ("test", "cow", 0)]:
        d = root / split / cls
        d.mkdir(parents=True, exist_ok=True)
        img = rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)
        (d / f"{k}.jpg").write_bytes(simplejpeg.encode_jpeg(img, quality=90))


def fit_small_model(first, ds, classes: int, epochs: int):
    """A small conv net (`first`, a layer or ``tf.keras.Input``, then conv, pooling and a dense
    layer of `classes`) fitted for two steps per epoch on the loader `ds`; its losses are checked
    finite and the model returned."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    model = tf.keras.Sequential([
        first,
        tf.keras.layers.Conv2D(4, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(classes),
    ])
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, steps_per_epoch=2, epochs=epochs, verbose=0, shuffle=False)
    assert np.all(np.isfinite(history.history["loss"]))
    return model
