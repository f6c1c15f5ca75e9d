"""Hand-made bad inputs get the documented exception naming the file (and record or offset), never a
RecursionError, a bare parser exception, a traceback from the CLI or a silently smaller dataset.

The bad inputs are built here, small: deeply nested JSON in a ``.gmeta`` and in a Benzina split
table, a packed folder's index nested 100,000 deep or truncated, an unreadable index, boxes nested
200,000 deep, a dangling symbolic link among an FFRecord directory's parts.
"""

from __future__ import annotations

import os
import pickle
import struct

import pytest

from ffrecord_testing import ffrecord_bytes
from gulp_testing import make_gulp_dir
from ingest_testing import run_cli

DEEP = 300_000


def deep_json(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def one_line_error(code, out, err, *needles):
    assert code == 1, (code, out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


# -- FFRecord directories -------------------------------------------------------------------------


def test_dangling_symlink_among_ffrecord_parts_is_an_error_naming_it(tmp_path):
    import tensorflow as tf

    import tf_gulp
    from tf_gulp.ffrecord import FileReader

    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.ffr").write_bytes(ffrecord_bytes([b"a0", b"a1"]))
    (parts / "c.ffr").write_bytes(ffrecord_bytes([b"c0"]))
    os.symlink(tmp_path / "moved_away.ffr", parts / "b.ffr")
    link = str(parts / "b.ffr")
    with pytest.raises(FileNotFoundError, match=f"{link}.*dangling"):
        FileReader(parts)
    with pytest.raises(tf.errors.NotFoundError, match=f"{link}.*dangling"):
        list(tf_gulp.FFRecordDataset(parts))
    # A subdirectory is not a part (the listing is not recursive), so it is not an error.
    os.remove(link)
    (parts / "sub.ffr").mkdir()
    with FileReader(parts) as reader:
        assert reader.n == 3


# -- gulp .gmeta ----------------------------------------------------------------------------------


@pytest.fixture
def gulp(tmp_path):
    return make_gulp_dir(tmp_path / "g", num_videos=4, frames_per_video=2, height=8, width=8,
                         videos_per_chunk=2)


def test_deeply_nested_gmeta_is_a_gulp_data_error_naming_it(gulp):
    from tf_gulp.gulp import GulpChunk, GulpDataError, GulpDirectory

    meta = os.path.join(gulp["path"], "meta_1.gmeta")
    with open(meta, "wb") as f:
        f.write(b'{"x": {"frame_info": [], "meta_data": ' + deep_json() + b"}}")
    with pytest.raises(GulpDataError, match=f"{meta}: JSON nested deeper than 1000 levels"):
        GulpDirectory(gulp["path"])
    chunk = GulpChunk(os.path.join(gulp["path"], "data_1.gulp"), meta)
    with pytest.raises(GulpDataError, match=meta):
        len(chunk)
    one_line_error(*run_cli("info", gulp["path"]), meta, "JSON nested deeper than")
    code, out, err = run_cli("check", gulp["path"])
    assert code == 1 and "Traceback" not in err, (out, err)
    assert "error: meta_1.gmeta: JSON nested deeper than 1000 levels" in out, out


def test_deeply_nested_label_map_and_ingest_record(gulp):
    from tf_gulp.gulp.check import check_directory
    from tf_gulp.gulp.ingest import IngestStateError, read_ingest_record

    with open(os.path.join(gulp["path"], "label2idx.json"), "wb") as f:
        f.write(deep_json())
    with open(os.path.join(gulp["path"], ".tf_gulp_ingest.json"), "wb") as f:
        f.write(deep_json())
    with pytest.raises(IngestStateError, match=".tf_gulp_ingest.json: unreadable ingest record"):
        read_ingest_record(gulp["path"])
    report = check_directory(gulp["path"])
    assert any(p.file == "label2idx.json" and "JSON nested deeper than" in p.message
               for p in report.errors), report.problems
    one_line_error(*run_cli("info", gulp["path"]), "label2idx.json")


@pytest.mark.parametrize("make_unreadable", ["directory", "dangling link"])
def test_tf_gulp_check_on_an_unreadable_index_reports_it(gulp, make_unreadable):
    meta = os.path.join(gulp["path"], "meta_0.gmeta")
    os.remove(meta)
    if make_unreadable == "directory":
        os.mkdir(meta)
        expected = "error: meta_0.gmeta: is a directory, expected a regular file"
    else:
        os.symlink(os.path.join(gulp["path"], "nowhere"), meta)
        expected = "error: meta_0.gmeta: cannot open: No such file or directory"
    code, out, err = run_cli("check", gulp["path"])
    assert code == 1 and "Traceback" not in err and not err, (out, err)
    assert expected in out, out
    assert out.rstrip().endswith("FAILED (1 error)"), out


# -- Benzina containers ---------------------------------------------------------------------------


def bzna_with_split_box(path, payload: bytes) -> int:
    """A container with an images track of 0 samples and a split box holding ``payload``;
    returns the file offset of the split box's payload."""
    from tf_gulp.bzna import container as c

    children = c.moov([c.TrackSpec("bzna_input", [], [])])[8:]
    data = c.ftyp() + c.box(b"moov", children, c.box(b"udta", c.box(c.SPLIT_BOX, payload)))
    with open(path, "wb") as f:
        f.write(data)
    return data.rindex(c.SPLIT_BOX) + 4


@pytest.mark.parametrize("payload,reason", [(b'{"splits": {"train": [0, ', "not valid JSON"),
                                            (deep_json(), "nested deeper than 1000"),
                                            (b"\xff\xfe", "not valid JSON"),
                                            (b"[1, 2]", "not a JSON object")])
def test_bad_split_table_is_a_value_error_naming_file_and_offset(tmp_path, payload, reason):
    from tf_gulp.bzna.container import describe

    path = str(tmp_path / "bad.bzna")
    offset = bzna_with_split_box(path, payload)
    with open(path, "rb") as f:
        f.seek(offset)
        assert f.read(len(payload)) == payload  # the offset the message gives is the box's
    with pytest.raises(ValueError, match=f"{path}: the split table \\(bzsp box at byte offset "
                       f"{offset}\\) .*{reason}"):
        describe(path)
    one_line_error(*run_cli("bzna", "info", path), path, reason)


def test_tf_gulp_bzna_info_on_boxes_nested_200000_deep(tmp_path):
    from tf_gulp.bzna import container as c

    depth = 200_000
    hdlr = c.full_box(b"hdlr", 0, 0, bytes(4), b"vide", bytes(12), b"other\0")
    nested = b"".join(struct.pack(">I", 8 * (depth - i) + len(hdlr)) + b"mdia"
                      for i in range(depth)) + hdlr
    path = str(tmp_path / "deep.bzna")
    with open(path, "wb") as f:
        f.write(c.ftyp() + c.box(b"moov", c.box(b"trak", nested)))
    # cc/mp4 (which `tf-gulp bzna info` uses, like the datasets) bounds the nesting: one line naming
    # the file and the box, no crash, no traceback.
    one_line_error(*run_cli("bzna", "info", path), path, "box 'mdia' at byte offset",
                   "nested more than 16 container boxes deep")
    # A box too short for its fields is an error naming the file, not a struct.error traceback.
    with open(path, "wb") as f:
        f.write(c.ftyp() + c.box(b"moov", c.box(b"trak", c.box(b"tkhd", b"\0\0"))))
    one_line_error(*run_cli("bzna", "info", path), path, "tkhd box truncated at byte offset")


# -- packed folders -------------------------------------------------------------------------------


def write_packed(path, index_pickle: bytes, files=(b"hello",)):
    from tf_gulp.ffrecord import FileWriter
    from tf_gulp.ffrecord.packed import MAGIC_BYTES

    with FileWriter(path, len(files) + 1) as w:
        for data in files:
            w.write_one(data)
        w.write_one(MAGIC_BYTES + index_pickle)


def nested_index_pickle(depth: int) -> bytes:
    """A protocol-4 pickle of ``{"d": {"d": ... {"f": 0}}}`` ``depth`` dicts deep, written opcode by
    opcode (pickle.dumps itself recurses and cannot write it)."""
    key = b"\x8c\x01d"  # SHORT_BINUNICODE "d"
    return (b"\x80\x04" + (b"}" + key) * depth + b"}" + b"\x8c\x01f" + b"K\x00" + b"s"
            + b"s" * depth + b".")


def test_packed_index_nested_100000_deep_is_a_value_error(tmp_path):
    from tf_gulp.ffrecord import PackedFolder

    path = str(tmp_path / "deep.ffr")
    write_packed(path, nested_index_pickle(100_000))
    with pytest.raises(ValueError, match=f"{path}: record 1 \\(the packed folder's index\\): "
                       "directories nested deeper than 1024 levels"):
        PackedFolder(path)


def test_packed_index_at_the_depth_limit_reads_and_lists_without_recursion(tmp_path):
    from tf_gulp.ffrecord import PackedFolder
    from tf_gulp.ffrecord.packed import MAX_INDEX_DEPTH

    path = str(tmp_path / "deep_ok.ffr")
    write_packed(path, nested_index_pickle(MAX_INDEX_DEPTH - 1))
    with PackedFolder(path) as folder:
        listed = folder.list(recursive=True)
        assert len(listed) == MAX_INDEX_DEPTH
        assert listed[-1] == "d/" * (MAX_INDEX_DEPTH - 1) + "f"
        assert folder.read_one(listed[-1]).tobytes() == b"hello"


def test_truncated_packed_index_is_an_unpickling_error_naming_file_and_record(tmp_path):
    from tf_gulp.ffrecord import PackedFolder

    full = pickle.dumps({"a": 0, "b": {"c": 0}}, protocol=4)
    for cut in (3, len(full) // 2, len(full) - 1):
        path = str(tmp_path / f"cut{cut}.ffr")
        write_packed(path, full[:cut])
        with pytest.raises(pickle.UnpicklingError,
                           match=f"{path}: record 1 \\(the packed folder's index\\): cannot be "
                           "unpickled, it is truncated or corrupt"):
            PackedFolder(path)


# -- Wrong formats, named (issue 25) --------------------------------------------------------------


def tfrecord_bytes(records) -> bytes:
    """A TFRecord file, written by TensorFlow itself."""
    import tempfile

    import tensorflow as tf

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for r in records:
                w.write(r)
        with open(path, "rb") as f:
            return f.read()


@pytest.mark.parametrize("records", [[b"one record"], [b"a" * 70000, b"b"]],
                         ids=["small", "large first record"])
def test_a_tfrecord_file_given_as_ffrecord_is_named(tmp_path, records):
    import tensorflow as tf

    import tf_gulp
    from tf_gulp.ffrecord import FileReader

    path = tmp_path / "x.ffr"
    path.write_bytes(tfrecord_bytes(records))
    expected = (f"{path} is a TFRecord file, not an FFRecord file or a folder of .ffr files: "
                "read it with tf.data.TFRecordDataset (JPEG bytes in its examples decode fused "
                "with tf_gulp.ops.decode_jpeg_warped)")
    with pytest.raises(ValueError) as e:
        FileReader(path)
    assert str(e.value) == expected
    with pytest.raises(tf.errors.DataLossError) as e:
        list(tf_gulp.FFRecordDataset(str(path)))
    assert expected in e.value.message


def test_an_ffrecord_file_is_still_not_called_a_tfrecord(tmp_path):
    from tf_gulp.ffrecord import FileReader

    path = tmp_path / "x.ffr"
    data = bytearray(ffrecord_bytes([b"a0", b"a1"]))
    data[4:12] = struct.pack("<q", 10 ** 9)  # a damaged record count
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="record count at offset 4 is 1000000000") as e:
        FileReader(path)
    assert "TFRecord" not in str(e.value)


def test_ffrecord_part_whose_name_is_not_utf8(tmp_path):
    """A part's name is bytes on Linux: FileReader reads the folder FFRecordDataset reads, and
    lists the name as os.fsdecode does (it opens again as given)."""
    import tensorflow as tf

    import tf_gulp
    from tf_gulp.ffrecord import FileReader

    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.ffr").write_bytes(ffrecord_bytes([b"a0", b"a1"]))
    odd = os.fsencode(str(parts)) + b"/b\xff\xfe.ffr"
    with open(odd, "wb") as f:
        f.write(ffrecord_bytes([b"b0"]))
    with FileReader(parts) as reader:
        assert reader.n == 3
        assert reader.fnames[1] == os.fsdecode(odd)
        assert [bytes(r) for r in reader.read([0, 1, 2])] == [b"a0", b"a1", b"b0"]
    with FileReader(reader.fnames[1]) as again:
        assert bytes(again.read_one(0)) == b"b0"
    assert [x.numpy() for x in tf_gulp.FFRecordDataset(str(parts))] == [b"a0", b"a1", b"b0"]
    # An error about that part names it, escaped, from both readers.
    with open(odd, "r+b") as f:
        f.write(struct.pack("<I", 12345))  # its metadata checksum
    with pytest.raises(ValueError, match=r"b\\xff\\xfe\.ffr: metadata checksum mismatch"):
        FileReader(parts)
    with pytest.raises(tf.errors.DataLossError, match=r"b\\xff\\xfe\.ffr: metadata checksum"):
        list(tf_gulp.FFRecordDataset(str(parts)))


def test_tf_gulp_info_on_a_bzna_file_points_at_bzna_info(tmp_path):
    from tf_gulp.bzna import container as C

    path = tmp_path / "x.bzna"
    path.write_bytes(C.ftyp() + C.box(b"mdat", b"\0" * 8))
    code, out, err = run_cli("info", path)
    assert code == 2 and "Traceback" not in err, (code, err)
    assert err.strip() == (f"tf-gulp info: error: {path} is a Benzina (.bzna) dataset, not a gulp "
                           "directory: read it with tf_gulp.BenzinaDataset (tf-gulp bzna info "
                           f"{path} describes it)")
    assert "tf-gulp check" not in err


def test_tf_gulp_bzna_create_on_a_missing_input_is_a_usage_error(tmp_path):
    missing = tmp_path / "imgs"
    code, out, err = run_cli("bzna", "create", missing, tmp_path / "out.bzna")
    assert code == 2, (code, err)
    assert err.strip() == (f"tf-gulp bzna: error: {missing}: no such file or folder (INPUT is an "
                           "image folder or a list file)")
    assert not os.path.exists(tmp_path / "out.bzna.parts")
