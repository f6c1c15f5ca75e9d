"""Damaged side tables, from files (tests/data/damaged_tables, issue 45): a Benzina split table
whose "classes" is not a list of names, and gulp ingest records whose runs are not runs. Each wrong
field is a clear error naming the file and the field (the split table: a DataLossError with the
bzsp box's offset, from every entry point); a damaged ingest record never stops a read of the
finished chunks without saying why: GulpDataset warns naming the field and reads them, a chunk
without its index is refused naming the damage, and a resumed ingest refuses the record naming
the field (as it refuses any unreadable record)."""

from __future__ import annotations

import json
import pathlib
import shutil
import warnings

import pytest
import tensorflow as tf

import tf_gulp
from ingest_testing import run_cli
from tf_gulp.bzna.container import read_container
from tf_gulp.gulp.ingest_record import (DamagedIngestRecordError, DamagedIngestRecordWarning,
                                        read_ingest_record)

# resolve(): the source tree, where the record (a dotfile) is whatever runfiles keep.
DATA = pathlib.Path(__file__).resolve().parent / "data" / "damaged_tables"
CLASSES_5 = DATA / "split_table_classes_5.bzna"
RUNS_NULL = DATA / "ingest_record_runs_null"


def _split_box_offset(data: bytes) -> int:
    """The byte offset of the bzsp box's payload (what the errors name)."""
    return data.index(b"bzsp") + 4


def test_split_table_classes_not_a_list_is_data_loss_naming_the_field():
    data = CLASSES_5.read_bytes()
    assert json.loads(data[data.index(b"bzsp") + 4:])["classes"] == 5  # the file is as named
    want = (rf"{CLASSES_5}: \"classes\" in the split table \(bzsp box at byte offset "
            rf"{_split_box_offset(data)}\) is not a list of class names")
    with pytest.raises(tf.errors.DataLossError, match=want):
        tf_gulp.BenzinaDataset(str(CLASSES_5))
    with pytest.raises(ValueError, match=want):
        read_container(str(CLASSES_5))
    code, _out, err = run_cli("bzna", "info", str(CLASSES_5))
    assert code == 1 and "Traceback" not in err and "\"classes\" in the split table" in err, err


def test_a_class_name_that_is_not_a_string_is_named_by_its_index(tmp_path):
    data = CLASSES_5.read_bytes()
    at = data.index(b"bzsp") + 4
    table = {"classes": ["ant", ["bee"]], "splits": json.loads(data[at:])["splits"]}
    payload = json.dumps(table, separators=(",", ":")).encode()
    assert len(payload) <= len(data) - at
    path = tmp_path / "x.bzna"  # the same box, padded with spaces (valid JSON) to its size
    path.write_bytes(data[:at] + payload.ljust(len(data) - at))
    with pytest.raises(tf.errors.DataLossError,
                       match=r"\"classes\"\[1\] in the split table \(bzsp box at byte offset "
                             rf"{at}\) is \[\"bee\"\], not a class name"):
        tf_gulp.BenzinaDataset(str(path))


def _copy(src: pathlib.Path, tmp_path) -> pathlib.Path:
    d = tmp_path / src.name
    shutil.copytree(src, d)
    return d


def _with_runs(d: pathlib.Path, runs) -> None:
    record = json.loads((d / ".tf_gulp_ingest.json").read_text())
    record["runs"] = runs
    (d / ".tf_gulp_ingest.json").write_text(json.dumps(record))


GOOD_RUN = {"first_chunk": 0, "num_chunks": 1, "complete": False, "num_items": 2,
            "videos_per_chunk": 2}
# runs -> the field the warning and the error name.
DAMAGED_RUNS = {
    "null_run": ([None], "run 0: null, not a run object"),
    "a_number_for_a_run": ([GOOD_RUN, 5], "run 1: 5, not a run object"),
    "first_chunk_a_string": ([dict(GOOD_RUN, first_chunk="0")],
                             'run 0: "first_chunk" is "0", not an integer >= 0'),
    "num_chunks_missing": ([{k: v for k, v in GOOD_RUN.items() if k != "num_chunks"}],
                           'run 0: "num_chunks" is null, not an integer >= 0'),
    "complete_a_string": ([dict(GOOD_RUN, complete="no")],
                          'run 0: "complete" is "no", not true or false'),
    "num_items_a_string": ([dict(GOOD_RUN, num_items="two")],
                           'run 0: "num_items" is "two", not an integer >= 0'),
    "videos_per_chunk_negative": ([dict(GOOD_RUN, videos_per_chunk=-1)],
                                  'run 0: "videos_per_chunk" is -1, not an integer >= 0'),
    "skipped_not_a_list": ([dict(GOOD_RUN, skipped={"0": "bad"})],
                           '"skipped" is not a list of objects with an integer "index"'),
}


def test_the_runs_null_file_is_as_named():
    record = json.loads((RUNS_NULL / ".tf_gulp_ingest.json").read_text())
    assert record["runs"] == [None]


@pytest.mark.parametrize("name", sorted(DAMAGED_RUNS) + ["file"])
def test_gulp_dataset_warns_naming_the_field_and_reads_the_finished_chunks(name, tmp_path):
    d = _copy(RUNS_NULL, tmp_path)
    field = "run 0: null, not a run object"
    if name != "file":
        runs, field = DAMAGED_RUNS[name]
        _with_runs(d, runs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = tf_gulp.GulpDataset(str(d))
    damaged = [w for w in caught if issubclass(w.category, DamagedIngestRecordWarning)]
    assert len(damaged) == 1, [str(w.message) for w in caught]
    message = str(damaged[0].message)
    assert message.startswith(f"{d / '.tf_gulp_ingest.json'}: damaged ingest record ("), message
    assert field in message and "reading the chunks whose meta_N.gmeta exists" in message
    assert sorted(e["id"].numpy().decode() for e in ds) == ["vid0000", "vid0001"]


@pytest.mark.parametrize("record,damage", [
    (None, r"\.tf_gulp_ingest\.json: its last run, run 0, is malformed and ignored"),
    ({"runs": []}, r"\.tf_gulp_ingest\.json is damaged and ignored: .*not a tf_gulp ingest record"),
], ids=["runs_null", "no_format"])
def test_a_chunk_without_its_index_is_refused_naming_the_damaged_record(record, damage, tmp_path):
    """A killed ingest leaves data_1.gulp without meta_1.gmeta; with the record damaged nothing
    says an unfinished ingest is writing it: refused, and the error says why."""
    d = _copy(RUNS_NULL, tmp_path)
    if record is not None:
        (d / ".tf_gulp_ingest.json").write_text(json.dumps(record))
    (d / "data_1.gulp").write_bytes((d / "data_0.gulp").read_bytes())
    with pytest.warns(DamagedIngestRecordWarning):
        with pytest.raises(tf.errors.NotFoundError,
                           match=r"chunk has no index file meta_1.gmeta, .* \(.*" + damage +
                                 r"\); restore the index or remove the chunk, or re-run the "
                                 r"ingest with --overwrite"):
            next(iter(tf_gulp.GulpDataset(str(d))))


@pytest.mark.parametrize("name", sorted(DAMAGED_RUNS))
def test_resuming_an_ingest_refuses_the_record_naming_the_field(name, tmp_path):
    d = _copy(RUNS_NULL, tmp_path)
    runs, field = DAMAGED_RUNS[name]
    _with_runs(d, runs)
    with pytest.raises(DamagedIngestRecordError) as e:
        read_ingest_record(str(d))  # what GulpIngestor reads before it resumes
    assert str(e.value).startswith(f"{d / '.tf_gulp_ingest.json'}: unreadable ingest record ("), \
        str(e.value)
    assert field in str(e.value) and str(e.value).endswith("; delete it, or use overwrite")
