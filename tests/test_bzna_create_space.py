"""`bzna create` checks the free space before it starts: the parts still to encode plus the
container (about as large), saying how much it needs and how much is free, and uses every usable
core (issue 34)."""

from __future__ import annotations

import collections
import os

import pytest

from tf_gulp._output_errors import OutputError
from tf_gulp.bzna import create as create_module
from tf_gulp.bzna import create_dataset

from ingest_testing import make_image_folder

Usage = collections.namedtuple("Usage", "total used free")


def test_refuses_to_start_without_room_and_says_how_much(tmp_path, monkeypatch):
    make_image_folder(tmp_path / "imgs", {"a": 2, "b": 2}, width=300, height=200)
    monkeypatch.setattr(create_module.shutil, "disk_usage", lambda path: Usage(10**9, 0, 1000))
    with pytest.raises(OutputError) as e:
        create_dataset(str(tmp_path / "imgs"), str(tmp_path / "out.bzna"), progress=False)
    message = str(e.value)
    assert "No space left on device" in message and "it needs about" in message, message
    assert "then the container" in message and "1000 B is free" in message, message
    assert "before encoding anything" in message, message
    assert not os.path.exists(tmp_path / "out.bzna.parts")  # nothing was started


def test_estimate_covers_what_is_written(tmp_path):
    """The estimate is an upper bound of a photo-like image's real size at the default crf (the
    estimate's table comes from real photos: bench/bench_bzna_size.py)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:240, 0:320]
    for k in range(3):  # smooth gradients, edges and a little noise, as photos have
        rgb = np.stack([(x * (k + 1) + y) % 256, (y * 2 + 40 * k) % 256, (x + y) // 3], -1)
        rgb = np.clip(rgb + rng.integers(-4, 5, rgb.shape), 0, 255).astype(np.uint8)
        (tmp_path / "imgs" / "c").mkdir(parents=True, exist_ok=True)
        Image.fromarray(rgb).save(tmp_path / "imgs" / "c" / f"{k}.jpg", quality=95)
    out = tmp_path / "out.bzna"
    create_dataset(str(tmp_path / "imgs"), str(out), progress=False, workers=1)
    pixels = 3 * 320 * 240
    bound = pixels * create_module.estimated_bytes_per_pixel(create_module.DEFAULT_CRF)
    assert os.path.getsize(out) <= bound, (os.path.getsize(out), bound)


def test_every_usable_core_encodes():
    assert create_module.usable_cores() == len(os.sched_getaffinity(0))
