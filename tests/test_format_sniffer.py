"""Every reader opened on another format names what the path holds and what reads it (issue 34):
gulp directories, FFRecord files and folders, Benzina containers, TFRecord and ArrayRecord files,
folders of videos or images and single video or image files, each opened with GulpDataset,
FFRecordDataset, BenzinaDataset, `tf-gulp info` and `tf-gulp check`. One sniffer (cc/io/format_sniffer.h) answers
for all of them, also as tf_gulp._core.sniff_path."""

from __future__ import annotations

import os

import numpy as np
import pytest
import simplejpeg
import tensorflow as tf

import tf_gulp
from tf_gulp import _core
from tf_gulp.ffrecord import FileWriter

from gulp_testing import make_gulp_dir
from ingest_testing import run_cli

# name -> (what the sniffer calls it, words of the advice it gives).
FORMATS = {
    "gulp": ("a gulp directory", "tf_gulp.GulpDataset"),
    "ffrecord": ("an FFRecord file", "tf_gulp.FFRecordDataset"),
    "ffrecord_folder": ("a folder of FFRecord files", "tf_gulp.FFRecordDataset"),
    "bzna": ("a Benzina (.bzna) dataset", "tf_gulp.BenzinaDataset"),
    "tfrecord": ("a TFRecord file", "tf.data.TFRecordDataset"),
    "arrayrecord": ("an ArrayRecord (Riegeli) file", "ArrayRecordDataSource"),
    "video_folder": ("a folder of videos", "`tf-gulp ingest video-folder`"),
    "image_folder": ("a folder of images", "`tf-gulp ingest image-folder`"),
    "video_file": ("a video file", "`tf-gulp ingest video-folder`"),
    "image_file": ("an image file", "tf.io.decode_image"),
}
# Which format each reader reads (the pairs below skip these).
READS = {"GulpDataset": {"gulp"}, "FFRecordDataset": {"ffrecord", "ffrecord_folder"},
         "BenzinaDataset": {"bzna"}, "tf-gulp info": {"gulp"}, "tf-gulp check": {"gulp"}}
READER_WANTS = {"GulpDataset": "not a gulp directory", "FFRecordDataset": "not an FFRecord file",
                "BenzinaDataset": "not a Benzina (.bzna) file", "tf-gulp info": "not a gulp directory",
                "tf-gulp check": "not a gulp directory"}

JPEG = simplejpeg.encode_jpeg(np.zeros((16, 16, 3), np.uint8), 90)
MP4 = (b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2" + b"\0\0\0\x10mdat" + b"\0" * 8)


def make(kind: str, root) -> str:
    path = os.path.join(str(root), kind)
    if kind == "gulp":
        make_gulp_dir(path, 2, 2, 16, 16, videos_per_chunk=1)
    elif kind in ("ffrecord", "ffrecord_folder"):
        target = path + ".ffr" if kind == "ffrecord" else os.path.join(path, "part_0.ffr")
        if kind == "ffrecord_folder":
            os.makedirs(path)
        with FileWriter(target, 3) as w:
            for i in range(3):
                w.write_one(bytes([i]) * 5)
        path = target if kind == "ffrecord" else path
    elif kind == "bzna":
        from tf_gulp.bzna import container as C

        path += ".bzna"
        with open(path, "wb") as f:
            f.write(C.ftyp() + C.box(b"mdat", b"\0" * 8))
    elif kind == "tfrecord":
        path += ".tfrecord"
        with tf.io.TFRecordWriter(path) as w:
            w.write(b"an example")
    elif kind == "arrayrecord":
        path += ".array_record"
        with open(path, "wb") as f:  # Riegeli's file signature (its first block header)
            f.write(bytes([0x83, 0xAF, 0x70, 0xD1, 0x0D, 0x88, 0x4A, 0x3F]) + b"\0" * 8 +
                    b"\x40" + b"\0" * 47)
    elif kind in ("video_folder", "image_folder"):
        for cls in ("cats", "dogs"):
            os.makedirs(os.path.join(path, cls))
            for i in range(2):
                name, data = ((f"{i}.mp4", MP4) if kind == "video_folder" else (f"{i}.jpg", JPEG))
                with open(os.path.join(path, cls, name), "wb") as f:
                    f.write(data)
    elif kind == "video_file":
        path += ".mp4"
        with open(path, "wb") as f:
            f.write(MP4)
    elif kind == "image_file":
        path += ".jpg"
        with open(path, "wb") as f:
            f.write(JPEG)
    return path


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    return {kind: make(kind, root) for kind in FORMATS}


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_sniffer_names_each_format(paths, kind):
    name, advice = _core.sniff_path(paths[kind])
    assert name == FORMATS[kind][0]
    assert FORMATS[kind][1] in advice


FOLDERS = {"gulp", "ffrecord_folder", "video_folder", "image_folder"}


def expected_error(reader: str, kind: str) -> type:
    """The error type `reader` raises on a `kind` of another format: the sniffer changes the
    message, never the reader's own code (cc/io/format_sniffer.h ExplainOpenFailure): bytes that
    did not parse are DataLoss, a folder without the reader's files NotFound. GulpDataset refuses
    a file as not a directory and a folder of another format by the sniffer's verdict
    (InvalidArgument); BenzinaDataset refuses a folder in Python before the reader opens it."""
    if reader == "GulpDataset":
        return tf.errors.InvalidArgumentError
    if kind in FOLDERS:
        return tf.errors.NotFoundError if reader == "FFRecordDataset" else \
            tf.errors.InvalidArgumentError
    return tf.errors.DataLossError


def open_with(reader: str, path: str, kind: str) -> str:
    """The error `reader` gives on `path` (the test fails if it gives none, or one of another type
    than expected_error's)."""
    if reader.startswith("tf-gulp "):
        code, out, err = run_cli(reader.split()[1], path)
        assert code in (1, 2) and "Traceback" not in err, (code, err)
        return out + err
    make_ds = {"GulpDataset": tf_gulp.GulpDataset, "FFRecordDataset": tf_gulp.FFRecordDataset,
               "BenzinaDataset": tf_gulp.BenzinaDataset}[reader]
    with pytest.raises((tf.errors.OpError, ValueError, OSError)) as e:
        next(iter(make_ds(path)))
    want = expected_error(reader, kind)
    assert type(e.value) is want, (type(e.value).__name__, want.__name__, str(e.value))
    return str(e.value)


@pytest.mark.parametrize("kind,reader", [(k, r) for r in sorted(READS) for k in sorted(FORMATS)
                                         if k not in READS[r]])
def test_wrong_reader_names_the_format_and_the_right_one(paths, kind, reader):
    message = open_with(reader, paths[kind], kind)
    name, advice = FORMATS[kind]
    assert f"{paths[kind]} is {name}, {READER_WANTS[reader]}" in message, message
    assert advice in message, message


@pytest.mark.parametrize("kind", ["tfrecord", "video_file"])
def test_the_sniffer_keeps_the_core_readers_code(paths, kind):
    """Through tf_gulp._core too (read_container, the FFRecord FileReader): the reader's
    DataLoss, with the sniffer's message."""
    from tf_gulp.bzna.container import read_container
    from tf_gulp.ffrecord import FileReader

    for read, wants in ((read_container, "not a Benzina (.bzna) file"),
                        (FileReader, "not an FFRecord file")):
        with pytest.raises(_core.DataLossError) as e:
            read(paths[kind])
        assert f"{paths[kind]} is {FORMATS[kind][0]}, {wants}" in str(e.value), str(e.value)


def test_folder_of_nothing_known_keeps_the_readers_own_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    assert _core.sniff_path(str(tmp_path)) == ("a folder", "")
    with pytest.raises(tf.errors.NotFoundError, match="no gulp chunks"):
        next(iter(tf_gulp.GulpDataset(str(tmp_path))))
