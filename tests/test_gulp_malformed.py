"""One suite of damaged gulp directories that every entry point must judge the same way.

The gulp rules exist once, in the C++ core (``cc/gulp``): GulpDataset uses them directly,
``GulpDirectory``, ``GulpChunk``, ``tf-gulp check`` and ``tf-gulp info`` through ``tf_gulp._core``.
For each directory below every entry point either refuses it, with the same message (``check``
lists it among its errors), or accepts it; on a local directory and on a ``ram://`` copy.

The cases include the five on which the earlier Python and C++ copies disagreed (two files for
one chunk number, padding covering a whole frame, a ``.gulp`` without its ``.gmeta``, a frame of
zero JPEG bytes, an ingest record without its format) and Python's ``NaN`` in a meta, which
gulpio2 writes and reads.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import uuid
from typing import Callable, Dict, List, Optional, Tuple

import pytest
import tensorflow as tf

import tf_gulp
from gulp_testing import make_gulp_dir
from ingest_testing import run_cli
from tf_gulp.gulp import GulpChunk, GulpDirectory
from tf_gulp.gulp.check import check_directory
from tf_gulp.gulp.info import directory_info

RECORD_FORMAT = "tf_gulp ingest record"


def _meta(d: pathlib.Path, n: int) -> Dict:
    return json.loads((d / f"meta_{n}.gmeta").read_text())


def _set_meta(d: pathlib.Path, n: int, meta: Dict) -> None:
    (d / f"meta_{n}.gmeta").write_text(json.dumps(meta))


def _edit_frame(n: int, key: str, frame: int, value: List) -> Callable[[pathlib.Path], None]:
    def edit(d: pathlib.Path) -> None:
        meta = _meta(d, n)
        meta[key]["frame_info"][frame] = value
        _set_meta(d, n, meta)
    return edit


def _record(d: pathlib.Path, runs: List[Dict], with_format: bool = True) -> None:
    record = {"format": RECORD_FORMAT, "version": 1, "runs": runs} if with_format \
        else {"runs": runs}
    (d / ".tf_gulp_ingest.json").write_text(json.dumps(record))


def _two_files_for_chunk_1(d: pathlib.Path) -> None:
    shutil.copy(d / "data_1.gulp", d / "data_01.gulp")


def _padding_covers_frame(d: pathlib.Path) -> None:
    offset, _pad, length = _meta(d, 0)["vid0001"]["frame_info"][1]
    _edit_frame(0, "vid0001", 1, [offset, length, length])(d)


def _zero_byte_frame(d: pathlib.Path) -> None:
    offset = _meta(d, 0)["vid0001"]["frame_info"][1][0]
    _edit_frame(0, "vid0001", 1, [offset, 0, 0])(d)


def _gulp_without_gmeta(d: pathlib.Path) -> None:
    os.unlink(d / "meta_1.gmeta")


def _gulp_without_gmeta_record_without_format(d: pathlib.Path) -> None:
    os.unlink(d / "meta_1.gmeta")
    _record(d, [{"first_chunk": 0, "num_chunks": 2, "complete": False}], with_format=False)


def _gulp_without_gmeta_of_unfinished_ingest(d: pathlib.Path) -> None:
    os.unlink(d / "meta_1.gmeta")
    _record(d, [{"first_chunk": 0, "num_chunks": 2, "complete": False}])


def _gmeta_without_gulp(d: pathlib.Path) -> None:
    os.unlink(d / "data_1.gulp")


def _frame_past_end(d: pathlib.Path) -> None:
    size = os.path.getsize(d / "data_1.gulp")
    _edit_frame(1, "vid0003", 0, [size - 4, 0, 8])(d)


def _frames_share_bytes(d: pathlib.Path) -> None:
    _edit_frame(0, "vid0001", 0, list(_meta(d, 0)["vid0000"]["frame_info"][1]))(d)


def _id_twice_in_one_index(d: pathlib.Path) -> None:
    text = (d / "meta_0.gmeta").read_text()
    entry = json.dumps(_meta(d, 0)["vid0000"])
    (d / "meta_0.gmeta").write_text(text[:-1] + ', "vid0000": ' + entry + "}")


def _id_in_two_chunks(d: pathlib.Path) -> None:
    meta = _meta(d, 1)
    meta["vid0000"] = meta.pop("vid0002")
    _set_meta(d, 1, meta)


def _invalid_json(d: pathlib.Path) -> None:
    (d / "meta_1.gmeta").write_text('{"vid0002": {"frame_info": [[0, ')


def _empty_gmeta(d: pathlib.Path) -> None:
    (d / "meta_1.gmeta").write_text("")


def _not_an_object(d: pathlib.Path) -> None:
    (d / "meta_1.gmeta").write_text("[1, 2, 3]")


def _bad_frame_entry(d: pathlib.Path) -> None:
    _edit_frame(0, "vid0000", 1, ["0", 0, 8])(d)


def _finished_ingest_lost_a_chunk(d: pathlib.Path) -> None:
    _record(d, [{"first_chunk": 0, "num_chunks": 3, "complete": True}])


def _nan_in_meta(d: pathlib.Path) -> None:
    text = (d / "meta_0.gmeta").read_text()
    (d / "meta_0.gmeta").write_text(text.replace('"label":', '"score": NaN, "label":', 1))


def _trailing_bytes(d: pathlib.Path) -> None:
    with open(d / "data_0.gulp", "ab") as f:
        f.write(b"\0" * 12)


def _temporary_files(d: pathlib.Path) -> None:
    (d / "data_2.gulp.tmp").write_bytes(b"interrupted")


def _bytes_not_utf8_in_index(d: pathlib.Path) -> None:
    # JSON's strings are UTF-8: the parser refuses this, and its message quotes what it read.
    (d / "meta_1.gmeta").write_bytes(b'{"vid\xc3\x28": {"frame_info": []}}')


def _control_bytes_in_an_id(d: pathlib.Path) -> None:
    # JSON escapes (\u0000) make ids with control bytes, quoted by the messages about them.
    text = (d / "meta_0.gmeta").read_text()
    entry = json.dumps(_meta(d, 0)["vid0000"])
    key = '"v\\u0000\\u001b[31m"'
    (d / "meta_0.gmeta").write_text(f"{text[:-1]}, {key}: {entry}, {key}: {entry}}}")


def _no_chunks(d: pathlib.Path) -> None:
    for name in os.listdir(d):
        os.unlink(d / name)


def _unrelated_folder(d: pathlib.Path) -> None:
    _no_chunks(d)
    (d / "notes.txt").write_text("not a gulp directory")


# (name, edit, refused): refused cases name a fragment of the one message every reader gives.
CASES: List[Tuple[str, Callable[[pathlib.Path], None], Optional[str]]] = [
    ("two files for one chunk number", _two_files_for_chunk_1, "same chunk number as data_01.gulp"),
    ("padding covers the frame", _padding_covers_frame, "leaves no JPEG bytes"),
    ("frame of zero bytes", _zero_byte_frame, "leaves no JPEG bytes"),
    (".gulp without .gmeta", _gulp_without_gmeta, "chunk has no index file meta_1.gmeta"),
    (".gulp without .gmeta, record without its format",
     _gulp_without_gmeta_record_without_format, "chunk has no index file meta_1.gmeta"),
    (".gmeta without .gulp", _gmeta_without_gulp, "index has no data file data_1.gulp"),
    ("frame past the end", _frame_past_end, "run past the end of the file"),
    ("frames share bytes", _frames_share_bytes, "shares bytes with id 'vid0000' frame 1"),
    ("id twice in one index", _id_twice_in_one_index, "listed twice"),
    ("id in two chunks", _id_in_two_chunks, "ids must be unique across the chunks"),
    ("invalid JSON", _invalid_json, "invalid JSON at byte offset"),
    ("empty index", _empty_gmeta, "empty index file"),
    ("index not an object", _not_an_object, "expected a JSON object"),
    ("bad frame entry", _bad_frame_entry, "is not [offset, pad, length]"),
    ("finished ingest lost a chunk", _finished_ingest_lost_a_chunk, "meta_2.gmeta: missing"),
    (".gulp of an unfinished ingest", _gulp_without_gmeta_of_unfinished_ingest, None),
    ("Python's NaN in a meta", _nan_in_meta, None),
    ("unindexed trailing bytes", _trailing_bytes, None),
    ("temporary files", _temporary_files, None),
    # Bytes that are not UTF-8, and control bytes, come back escaped in the one message (never a
    # UnicodeDecodeError, never raw NUL bytes).
    ("bytes not UTF-8 in an index", _bytes_not_utf8_in_index, "last read: '\"vid\\xc3("),
    ("control bytes in an id", _control_bytes_in_an_id, "id 'v\\x00\\x1b[31m': listed twice"),
    ("empty folder", _no_chunks, "no gulp chunks (data_N.gulp + meta_N.gmeta) found"),
    ("unrelated folder", _unrelated_folder, "no gulp chunks (data_N.gulp + meta_N.gmeta) found"),
]


def _message(call: Callable[[], object]) -> Optional[str]:
    """None when ``call()`` succeeds, else the message of what it raised (for a TensorFlow error,
    without what TensorFlow adds around the kernel's message: the function node and the op)."""
    try:
        call()
    except tf.errors.OpError as e:
        return re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
    except (ValueError, OSError) as e:
        return str(e)
    return None


def _read_dataset(path: str) -> None:
    for _ in tf_gulp.GulpDataset(path, decode=False):
        pass


def _read_directory(path: str) -> None:
    with GulpDirectory(path) as gd:
        for key in gd.merged_meta_dict:
            gd.read_jpegs(key)


def _verdicts(path: str) -> Dict[str, Optional[str]]:
    report = check_directory(path)
    return {
        "GulpDataset": _message(lambda: _read_dataset(path)),
        "GulpDirectory": _message(lambda: _read_directory(path)),
        "tf-gulp info": _message(lambda: directory_info(path)),
        "tf-gulp check": None if report.ok else str(report.errors[0]),
    }


def _copy_to_ram(local: pathlib.Path) -> str:
    remote = f"ram://malformed-{uuid.uuid4().hex}"
    tf.io.gfile.makedirs(remote)
    for name in os.listdir(local):
        tf.io.gfile.copy(str(local / name), f"{remote}/{name}")
    return remote


@pytest.mark.parametrize("where", ["local", "ram"])
@pytest.mark.parametrize("name,edit,refused", CASES, ids=[c[0] for c in CASES])
def test_every_entry_point_judges_alike(tmp_path, name, edit, refused, where):
    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    edit(d)
    path = str(d) if where == "local" else _copy_to_ram(d)
    verdicts = _verdicts(path)
    if refused is None:
        assert verdicts == {k: None for k in verdicts}, verdicts
        return
    reader_messages = [verdicts[k] for k in ("GulpDataset", "GulpDirectory", "tf-gulp info")]
    assert not any("\0" in (m or "") for m in verdicts.values()), verdicts
    assert all(m is not None and refused in m for m in reader_messages), verdicts
    # The same message from every reader, and check lists it (with the file relative).
    assert len(set(reader_messages)) == 1, verdicts
    check_error = verdicts["tf-gulp check"]
    assert check_error is not None and refused in check_error, verdicts


@pytest.mark.parametrize("edit,refused", [
    (_padding_covers_frame, "leaves no JPEG bytes"),
    (_frame_past_end, "run past the end of the file"),
    (_id_twice_in_one_index, "listed twice"),
])
def test_gulp_chunk_judges_its_index_alike(tmp_path, edit, refused):
    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    edit(d)
    n = 0 if edit is _padding_covers_frame or edit is _id_twice_in_one_index else 1
    chunk = GulpChunk(d / f"data_{n}.gulp", d / f"meta_{n}.gmeta")
    chunk_message = _message(lambda: chunk.meta_dict)
    assert chunk_message is not None and refused in chunk_message
    assert chunk_message == _message(lambda: _read_dataset(str(d)))


def _set_first_label(d: pathlib.Path, label) -> None:
    meta = _meta(d, 0)
    meta["vid0000"]["meta_data"][0]["label"] = label
    _set_meta(d, 0, meta)


@pytest.mark.parametrize("label", [2 ** 63, 2 ** 64 - 1])
def test_a_label_past_int64_is_refused(tmp_path, label):
    """nlohmann keeps such an integer unsigned; read as int64 it wrapped (2^64 - 1 came back as -1,
    "no label") silently. It is an error naming the file, the id and the value."""
    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    _set_first_label(d, label)
    message = _message(lambda: _read_dataset(str(d)))
    assert message == (f"{d}/meta_0.gmeta: id 'vid0000' has label {label}, past the largest "
                       "int64 label (2^63 - 1)")
    # tf-gulp check refuses it too (GulpDirectory hands meta_data back as it is: no labels).
    report = check_directory(str(d))
    assert not report.ok and len(report.errors) == 1, report.errors
    assert str(report.errors[0]) == (f"error: meta_0.gmeta: id 'vid0000': has label {label}, "
                                     "past the largest int64 label (2^63 - 1)"), report.errors


LABEL_MAP_CASES = [
    ('"hello"', "label2idx.json: expected a JSON object {label: index}"),
    ('{"cat": 9223372036854775808}',
     "label2idx.json: index of label 'cat' is 9223372036854775808, past the largest int64 label"),
    ('{"cat": 18446744073709551615}',
     "label2idx.json: index of label 'cat' is 18446744073709551615, past the largest int64"),
    (b'{"c\xc3\x28t": 1}', "label2idx.json: invalid JSON at byte offset"),
]


@pytest.mark.parametrize("text,refused", LABEL_MAP_CASES, ids=["string", "2^63", "2^64-1",
                                                               "not UTF-8"])
def test_label_map_judged_alike(tmp_path, text, refused):
    """GulpDataset, tf-gulp info and tf-gulp check read label2idx.json by the same rules (the
    core's LoadLabelMap) and give the same message; the command prints it on one line."""
    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    path = d / "label2idx.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    dataset = _message(lambda: _read_dataset(str(d)))
    info = _message(lambda: directory_info(str(d)))
    report = check_directory(str(d))
    assert dataset is not None and refused in dataset, dataset
    assert info == dataset, (info, dataset)
    assert not report.ok and refused in str(report.errors[0]), report.errors
    code, out, err = run_cli("info", str(d))
    assert code == 1 and "Traceback" not in err and refused in err, (code, err)
    assert len(err.strip().splitlines()) == 1, err


def _picture(mode: str, fmt: str) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new(mode, (8, 8), (10, 20, 30, 40)[:len(mode)]).save(out, fmt)
    return out.getvalue()


def _append_frame(d, picture: bytes) -> None:
    """`picture` as frame 2 of vid0001."""
    data = d / "data_0.gulp"
    offset = os.path.getsize(data)
    with open(data, "ab") as f:
        f.write(picture)
    _edit_frame(0, "vid0001", 2, [offset, 0, len(picture)])(d)


def test_check_decode_refuses_what_gulp_dataset_refuses(tmp_path):
    """A TIFF frame: GulpDataset refuses it (its decoders read what tf.io.decode_image reads:
    JPEG, PNG, BMP, GIF). `tf-gulp check --decode` decodes frames with the core, as the dataset
    does, so it reports the frame instead of passing it, with the dataset's own reason."""
    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    _append_frame(d, _picture("RGB", "TIFF"))
    dataset = _message(lambda: list(tf_gulp.GulpDataset(str(d))))
    assert dataset is not None and "id 'vid0001' frame 2" in dataset, dataset
    report = check_directory(str(d), decode=True)
    errors = [e for e in report.errors if e.id == "vid0001"]
    assert len(errors) == 1 and errors[0].frame == 2, report.errors
    assert "cannot decode the frame, not a JPEG (" in str(errors[0]), errors
    # The reason is the dataset's own.
    assert dataset.split(": ")[-1] in str(errors[0]), (dataset, errors)


def test_cmyk_frames_decode_in_the_dataset_and_pass_check(tmp_path):
    """A CMYK JPEG frame (print workflows write them; ImageNet holds some) decodes as
    tf.io.decode_jpeg decodes it, in GulpDataset and in `tf-gulp check --decode` alike."""
    import numpy as np
    import tensorflow as tf

    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    cmyk = _picture("CMYK", "JPEG")
    _append_frame(d, cmyk)
    frames = {e["id"].numpy().decode(): e["frames"].numpy() for e in tf_gulp.GulpDataset(str(d))}
    want = tf.io.decode_jpeg(cmyk, channels=3).numpy()
    assert np.abs(frames["vid0001"][2].astype(int) - want).max() <= 1
    report = check_directory(str(d), decode=True)
    assert not [e for e in report.errors if e.id == "vid0001"], report.errors


def test_png_frames_decode_in_the_dataset_and_pass_check(tmp_path):
    """A PNG frame (a .jpg that is a PNG: ImageNet holds one) decodes as tf.io.decode_png
    decodes it, in GulpDataset and `tf-gulp check --decode` alike."""
    import numpy as np
    import tensorflow as tf

    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=4, frames_per_video=3, height=8, width=8, videos_per_chunk=2)
    png = _picture("RGB", "PNG")
    _append_frame(d, png)
    frames = {e["id"].numpy().decode(): e["frames"].numpy() for e in tf_gulp.GulpDataset(str(d))}
    np.testing.assert_array_equal(frames["vid0001"][2], tf.io.decode_png(png, channels=3).numpy())
    report = check_directory(str(d), decode=True)
    assert not [e for e in report.errors if e.id == "vid0001"], report.errors
