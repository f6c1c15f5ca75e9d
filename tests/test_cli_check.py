"""``tf-gulp check``: passes good directories (ours, gulpio2's fixture), and reports every kind of
damage with the chunk file, id, frame and byte offset, exiting non-zero."""

import json
import os
import pathlib
import shutil

import pytest

from tf_gulp.gulp.check import check_directory

from gulp_testing import make_gulp_dir
from ingest_testing import run_cli

FIXTURE = pathlib.Path(__file__).parent / "data" / "gulpio2"


@pytest.fixture
def gulp(tmp_path):
    """4 videos of 3 frames in 2 chunks (vid0000, vid0001 | vid0002, vid0003), labels a/b."""
    return make_gulp_dir(tmp_path / "g", 4, 3, 16, 24, 2)


def frame_info(path, chunk, id_):
    meta = json.loads((pathlib.Path(path) / f"meta_{chunk}.gmeta").read_text())
    return meta[id_]["frame_info"]


def check(path, *flags):
    code, out, err = run_cli("check", path, *flags)
    assert "Traceback" not in err
    return code, out


@pytest.mark.parametrize("flags", [[], ["--decode"], ["--decode", "--num-workers", "2"]])
def test_good_directories_pass(gulp, flags):
    for path in (gulp["path"], FIXTURE):
        code, out = check(path, *flags)
        assert code == 0, out
        assert out.strip().splitlines()[-1].endswith(": OK")
    code, out = check(FIXTURE, "--decode")
    assert "3 chunks, 6 ids, 49 frames" in out and "every frame decoded" in out


def expect_error(path, *fragments, flags=()):
    code, out = check(path, *flags)
    assert code == 1, out
    assert "FAILED" in out.splitlines()[-1]
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert any(all(f in line for f in fragments) for line in errors), (fragments, out)
    return out


def test_truncated_data_file(gulp):
    data = os.path.join(gulp["path"], "data_1.gulp")
    offset, _pad, length = frame_info(gulp["path"], 1, "vid0003")[2]
    os.truncate(data, offset + 5)
    expect_error(gulp["path"], "data_1.gulp: id 'vid0003' frame 2",
                 f"bytes [{offset}, {offset + length}) run past the end of the file "
                 f"({offset + 5} bytes)")


def test_trailing_bytes_and_size_mismatch(gulp):
    # Bytes no frame accounts for (an interrupted append): readers ignore them, so a warning.
    data = os.path.join(gulp["path"], "data_0.gulp")
    size = os.path.getsize(data)
    with open(data, "ab") as f:
        f.write(b"\0" * 12)
    code, out = check(gulp["path"])
    assert code == 0, out
    assert (f"warning: data_0.gulp: file is {size + 12} bytes but its index accounts for {size} "
            "(12 unindexed trailing bytes") in out
    assert check(gulp["path"], "--strict")[0] == 1


def test_empty_files(gulp):
    open(os.path.join(gulp["path"], "meta_1.gmeta"), "w").close()
    open(os.path.join(gulp["path"], "data_0.gulp"), "w").close()
    out = expect_error(gulp["path"], "meta_1.gmeta", "empty index file")
    assert "data_0.gulp: empty data file (0 bytes)" in out


def test_invalid_json_and_bad_entries(gulp):
    (pathlib.Path(gulp["path"]) / "meta_0.gmeta").write_text('{"vid0000": {"frame_info": [[0, ')
    expect_error(gulp["path"], "meta_0.gmeta", "invalid JSON at byte offset")
    (pathlib.Path(gulp["path"]) / "meta_0.gmeta").write_text(
        '{"a": {"frame_info": [[0, 5, 2]], "meta_data": [{}]}, "b": {"frame_info": [], '
        '"meta_data": []}, "c": {"frames": []}}')
    out = expect_error(gulp["path"], "meta_0.gmeta: id 'a' frame 0",
                       "padding 5 leaves no JPEG bytes in length 2")
    assert "warning: meta_0.gmeta: id 'b': no frames" in out
    assert "warning: meta_0.gmeta: id 'b': no meta_data" in out
    assert "error: meta_0.gmeta: id 'c': missing or malformed \"frame_info\" list" in out


def test_duplicate_ids(gulp):
    meta0 = json.loads((pathlib.Path(gulp["path"]) / "meta_0.gmeta").read_text())
    meta1_path = pathlib.Path(gulp["path"]) / "meta_1.gmeta"
    meta1 = json.loads(meta1_path.read_text())
    meta1["vid0001"] = meta1.pop("vid0003")
    meta1_path.write_text(json.dumps(meta1))
    expect_error(gulp["path"], "meta_1.gmeta: id 'vid0001'", "also in", "meta_0.gmeta")
    # The same key twice inside one index (json.load would silently keep the last one).
    text = json.dumps(meta0)
    entry = json.dumps(meta0["vid0000"])
    (pathlib.Path(gulp["path"]) / "meta_0.gmeta").write_text(
        text[:-1] + ', "vid0000": ' + entry + "}")
    expect_error(gulp["path"], "meta_0.gmeta: id 'vid0000'", "listed twice")


def test_overlapping_frames(gulp):
    path = pathlib.Path(gulp["path"]) / "meta_0.gmeta"
    meta = json.loads(path.read_text())
    meta["vid0001"]["frame_info"][0] = list(meta["vid0000"]["frame_info"][2])
    path.write_text(json.dumps(meta))
    expect_error(gulp["path"], "data_0.gulp: id 'vid0001' frame 0",
                 "shares bytes with id 'vid0000' frame 2")


def test_unpaired_files(gulp):
    os.unlink(os.path.join(gulp["path"], "data_1.gulp"))
    expect_error(gulp["path"], "meta_1.gmeta", "index has no data file data_1.gulp")


def test_interrupted_write_leftovers(gulp):
    # A .gulp without its .gmeta: an error, unless an unfinished ingest is writing that chunk.
    os.unlink(os.path.join(gulp["path"], "meta_1.gmeta"))
    (pathlib.Path(gulp["path"]) / "meta_2.gmeta.tmp").write_text("{")
    out = expect_error(gulp["path"], "data_1.gulp", "chunk has no index file meta_1.gmeta",
                       "no unfinished ingest")
    assert "warning: meta_2.gmeta.tmp: temporary file of an interrupted write" in out
    record = {"format": "tf_gulp ingest record", "version": 1,
              "runs": [{"first_chunk": 0, "num_chunks": 3, "complete": False}]}
    (pathlib.Path(gulp["path"]) / ".tf_gulp_ingest.json").write_text(json.dumps(record))
    code, out = check(gulp["path"])
    assert code == 0, out
    assert "warning: data_1.gulp: data file without its index meta_1.gmeta: a chunk the " \
           "unfinished ingest has not finished writing" in out
    assert "warning: meta_2.gmeta.tmp: temporary file of an interrupted write" in out
    assert "unfinished ingest: 1 of 3 chunks written" in out
    assert out.splitlines()[-1].endswith("OK (3 warnings)")
    code, out = check(gulp["path"], "--strict")
    assert code == 1 and "FAILED" in out
    code, out = check(gulp["path"], "--quiet")
    assert code == 0 and len(out.strip().splitlines()) == 1


def test_corrupt_jpeg_needs_decode(gulp):
    offset, pad, length = frame_info(gulp["path"], 0, "vid0001")[1]
    with open(os.path.join(gulp["path"], "data_0.gulp"), "r+b") as f:
        f.seek(offset + length - pad - 40)
        f.write(b"\xff\xd9" * 19)      # end-of-image markers in the scan data
    assert check(gulp["path"])[0] == 0
    expect_error(gulp["path"], "data_0.gulp: id 'vid0001' frame 1", f"at offset {offset}",
                 "cannot decode JPEG", flags=["--decode"])
    offset2 = frame_info(gulp["path"], 1, "vid0002")[0][0]
    with open(os.path.join(gulp["path"], "data_1.gulp"), "r+b") as f:
        f.seek(offset2)
        f.write(b"\0\0")
    out = expect_error(gulp["path"], "data_1.gulp: id 'vid0002' frame 0", f"at offset {offset2}",
                       "not a JPEG", flags=["--decode", "--num-workers", "2"])
    assert "id 'vid0001' frame 1" in out


def test_labels(gulp):
    label_path = pathlib.Path(gulp["path"]) / "label2idx.json"
    label_path.write_text(json.dumps({"a": 0}))
    code, out = check(gulp["path"])
    assert code == 0 and "has no entry for label 'b'" in out and "id 'vid0001'" in out
    label_path.write_text(json.dumps({"a": "zero"}))
    expect_error(gulp["path"], "label2idx.json", "index of label 'a' is not an integer")


def test_ingest_record(tmp_path):
    from gulp_testing import SyntheticAdapter
    from tf_gulp.gulp.ingest import INGEST_RECORD, GulpIngestor
    out = tmp_path / "out"
    GulpIngestor(SyntheticAdapter([1, 1, 1], 8, 8), out, 1, 1, progress=False,
                 resumable=True)()
    assert check(out)[0] == 0
    # A chunk of a finished ingest disappears (both files): reported.
    os.unlink(out / "meta_1.gmeta")
    os.unlink(out / "data_1.gulp")
    expect_error(out, "meta_1.gmeta", "missing: the ingest that wrote this directory",
                 "finished this chunk")
    # An unfinished ingest: a warning saying how to finish it.
    record = json.loads((out / INGEST_RECORD).read_text())
    record["runs"][0]["complete"] = False
    (out / INGEST_RECORD).write_text(json.dumps(record))
    code, out_text = check(out)
    assert code == 0 and "unfinished ingest: 2 of 3 chunks written" in out_text
    for name in ("meta_0.gmeta", "data_0.gulp", "meta_2.gmeta", "data_2.gulp"):
        os.unlink(out / name)
    # Nothing to read yet: readers refuse it, check says why.
    expect_error(out, "no gulp chunks", "the unfinished ingest has not finished one")


def test_empty_and_missing_directories(tmp_path):
    (tmp_path / "empty").mkdir()
    expect_error(tmp_path / "empty", "no gulp chunks")
    code, _, err = run_cli("check", tmp_path / "missing")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_agrees_with_gulpio2_sanity_checks(gulp, tmp_path):
    sanity = pytest.importorskip("gulpio2.sanity_utils")
    import gulpio2
    # gulpio2 finds nothing wrong with the fixture nor with ours; we agree.
    for path in (FIXTURE, gulp["path"]):
        gd = gulpio2.GulpDirectory(str(path))
        for test in (sanity.check_meta_file_size_larger_zero,
                     sanity.check_data_file_size_larger_zero, sanity.check_data_file_size,
                     sanity.check_for_duplicate_ids):
            assert test(gd) == []
        assert check_directory(str(path)).ok
    # What gulpio2 flags (a data size that does not match the index), we flag too, as a warning:
    # readers ignore bytes no frame accounts for (an interrupted append leaves them).
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE, broken)
    with open(broken / "data_2.gulp", "ab") as f:
        f.write(b"\0" * 8)
    assert sanity.check_data_file_size(gulpio2.GulpDirectory(str(broken))) == [
        str(broken / "data_2.gulp")]
    report = check_directory(str(broken))
    assert report.ok
    assert [p.file for p in report.warnings if "unindexed" in p.message] == ["data_2.gulp"]
