"""Bad input: every broken directory gets a clear tf.errors exception, never a crash or a hang."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import tensorflow as tf

import tf_gulp
from gulp_testing import make_gulp_dir


@pytest.fixture
def gulp(tmp_path):
    """Fresh 6-video, 2-chunk directory per test (tests break it)."""
    return make_gulp_dir(tmp_path / "g", num_videos=6, frames_per_video=4, height=16, width=24,
                         videos_per_chunk=3)


def read_all(path, **kwargs):
    return [e for e in tf_gulp.GulpDataset(path, **kwargs)]


def test_missing_directory(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="does-not-exist.*does not exist"):
        tf_gulp.GulpDataset(tmp_path / "does-not-exist")


def test_directory_without_chunks(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    with pytest.raises(tf.errors.NotFoundError, match="no gulp chunks"):
        tf_gulp.GulpDataset(tmp_path / "empty")


def test_gulp_without_gmeta(gulp):
    os.remove(os.path.join(gulp["path"], "meta_1.gmeta"))
    with pytest.raises(tf.errors.NotFoundError, match="data_1.gulp.*meta_1.gmeta"):
        tf_gulp.GulpDataset(gulp["path"])


def test_gulp_without_gmeta_of_an_unfinished_ingest_is_skipped(gulp):
    # Writers publish the .gmeta last: while an ingest recorded in .tf_gulp_ingest.json runs (or
    # waits to be resumed after a kill), its chunk without a .gmeta is not part of the dataset yet.
    os.remove(os.path.join(gulp["path"], "meta_1.gmeta"))
    record = {"format": "tf_gulp ingest record", "version": 1,
              "runs": [{"first_chunk": 0, "num_chunks": 2, "complete": False}]}
    with open(os.path.join(gulp["path"], ".tf_gulp_ingest.json"), "w") as f:
        json.dump(record, f)
    ids = [e["id"].numpy().decode() for e in tf_gulp.GulpDataset(gulp["path"], decode=False)]
    assert ids == gulp["ids"][:3]
    os.remove(os.path.join(gulp["path"], "meta_0.gmeta"))
    with pytest.raises(tf.errors.NotFoundError, match="no gulp chunks"):
        tf_gulp.GulpDataset(gulp["path"])


def test_gmeta_without_gulp(gulp):
    os.remove(os.path.join(gulp["path"], "data_0.gulp"))
    with pytest.raises(tf.errors.NotFoundError, match="meta_0.gmeta.*data_0.gulp"):
        tf_gulp.GulpDataset(gulp["path"])


def test_truncated_gulp_names_file_id_and_offset(gulp):
    data = os.path.join(gulp["path"], "data_1.gulp")
    size = os.path.getsize(data)
    with open(data, "r+b") as f:
        f.truncate(size - 10)
    with pytest.raises(tf.errors.DataLossError,
                       match=r"data_1\.gulp: id 'vid0005' frame 3: bytes \[\d+, \d+\) run past the "
                             r"end of the file \(" + str(size - 10)):
        tf_gulp.GulpDataset(gulp["path"])


def test_frame_offset_past_the_end(gulp):
    meta_path = os.path.join(gulp["path"], "meta_0.gmeta")
    with open(meta_path) as f:
        meta = json.load(f)
    meta["vid0001"]["frame_info"][2][0] = 10**12
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    with pytest.raises(tf.errors.DataLossError, match="'vid0001' frame 2: bytes \\[1000000000000"):
        tf_gulp.GulpDataset(gulp["path"])


def test_invalid_json(gulp):
    meta_path = os.path.join(gulp["path"], "meta_1.gmeta")
    with open(meta_path, "r+") as f:
        f.truncate(50)
    with pytest.raises(tf.errors.DataLossError, match="meta_1.gmeta: invalid JSON at byte offset"):
        tf_gulp.GulpDataset(gulp["path"])


def test_duplicate_id_across_chunks(gulp, tmp_path):
    for suffix in ("gulp", "gmeta"):
        prefix = "data" if suffix == "gulp" else "meta"
        shutil.copy(os.path.join(gulp["path"], f"{prefix}_0.{suffix}"),
                    os.path.join(gulp["path"], f"{prefix}_7.{suffix}"))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="meta_7.gmeta: id 'vid0000': also in .*meta_0.gmeta"):
        tf_gulp.GulpDataset(gulp["path"])


def corrupt_frame(gulp, id_, frame):
    meta_path = os.path.join(gulp["path"], "meta_0.gmeta")
    with open(meta_path) as f:
        offset, pad, length = json.load(f)[id_]["frame_info"][frame]
    with open(os.path.join(gulp["path"], "data_0.gulp"), "r+b") as f:
        f.seek(offset + 2)
        f.write(b"\x00garbage" * ((length - pad - 4) // 8))
    return offset


def test_corrupt_jpeg_names_file_id_frame_and_offset(gulp):
    offset = corrupt_frame(gulp, "vid0001", 2)
    ds = tf_gulp.GulpDataset(gulp["path"])
    it = iter(ds)
    assert next(it)["id"].numpy() == b"vid0000"
    with pytest.raises(tf.errors.DataLossError,
                       match=f"data_0.gulp: id 'vid0001' frame 2 at byte offset {offset}"):
        next(it)


def test_ignore_errors_skips_the_bad_element_and_does_not_hang(gulp):
    corrupt_frame(gulp, "vid0001", 0)
    ds = tf_gulp.GulpDataset(gulp["path"]).ignore_errors()
    ids = [e["id"].numpy().decode() for e in ds]
    assert ids == [i for i in gulp["ids"] if i != "vid0001"]


def test_frame_index_out_of_range(gulp):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="id 'vid0000': frame index 9 is out of range for a clip of 4 frames"):
        read_all(gulp["path"], frames=[0, 9])


def test_unknown_id_in_filter(gulp):
    with pytest.raises(tf.errors.NotFoundError, match="id 'nope'"):
        tf_gulp.GulpDataset(gulp["path"], ids=["vid0000", "nope"])


def test_string_label_without_mapping(gulp):
    os.remove(os.path.join(gulp["path"], "label2idx.json"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="no label2idx.json"):
        tf_gulp.GulpDataset(gulp["path"])
    assert len(read_all(gulp["path"], label_field=None)) == 6


@pytest.mark.parametrize("kwargs, error", [
    (dict(colorspace="cmyk"), ValueError),
    (dict(num_frames=0), ValueError),
    (dict(scale=3), ValueError),  # the kernel's refusal, naming scale
    (dict(dct_method="slow"), ValueError),
    (dict(frames=slice(0, 4, 0)), ValueError),  # refused by name before the op (frames.step)
    (dict(frames=[0], num_frames=2), ValueError),
])
def test_bad_options(gulp, kwargs, error):
    with pytest.raises(error):
        read_all(gulp["path"], **kwargs)
