"""tf_gulp.ffrecord.FileReader: the reference's fixtures, its API, and every kind of bad file."""

from __future__ import annotations

import pickle
import threading
import warnings

import numpy as np
import pytest

from ffrecord_testing import (EXPECTED, FIXTURES, ffrecord_bytes, fixture_records, offset_field,
                              patch, sample_records, sha256)
from tf_gulp.ffrecord import DataLossError, FFRecordWarning, FileReader
from tf_gulp import _core

MULTI = [FIXTURES / "multi" / "PART_00000.ffr", FIXTURES / "multi" / "PART_00001.ffr"]


def multi_expected():
    a, b = EXPECTED["multi/PART_00000.ffr"], EXPECTED["multi/PART_00001.ffr"]
    return a["sizes"] + b["sizes"], a["sha256"] + b["sha256"]


# --- the reference's files read back exactly ------------------------------------------------------

def test_three_records_match_the_reference_fixture():
    with FileReader(FIXTURES / "three.ffr") as r:
        assert r.n == len(r) == 3
        got = r.read([0, 1, 2])
        assert all(isinstance(a, np.ndarray) and a.dtype == np.uint8 and a.ndim == 1 for a in got)
        assert [a.tobytes() for a in got] == [b"A", b"BBB", b"\x00\x01\x02\x03\xff"]
        assert [sha256(a) for a in got] == EXPECTED["three.ffr"]["sha256"]
        assert r.read_one(1).tobytes() == b"BBB"


@pytest.mark.parametrize("how", ["directory", "list", "str_list"])
def test_two_files_are_one_index_space(how):
    fname = {"directory": FIXTURES / "multi", "list": MULTI,
             "str_list": [str(p) for p in MULTI]}[how]
    sizes, digests = multi_expected()
    with FileReader(fname) as r:
        assert r.n == 40
        assert r.fnames == [str(p) for p in MULTI]
        records = r.read(range(40))
        assert [len(a) for a in records] == sizes
        assert [sha256(a) for a in records] == digests
        assert sizes[0] == 0  # the fixture's empty sample
        # Random order, repeats, and across the file boundary in one batch.
        order = [39, 0, 24, 25, 7, 7, 30]
        assert [sha256(a) for a in r.read(order)] == [digests[i] for i in order]
        assert [sha256(r.read_one(i)) for i in order] == [digests[i] for i in order]


def test_old_file_without_meta_crc_reads_with_a_warning():
    with pytest.warns(FFRecordWarning, match="meta_crc == 0"):
        r = FileReader(FIXTURES / "old_no_meta_crc.ffr")
    assert [a.tobytes() for a in r.read([0, 1, 2])] == [b"A", b"BBB", b"\x00\x01\x02\x03\xff"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FileReader(FIXTURES / "old_no_meta_crc.ffr", check_data=False)  # nothing checked: silent


def test_offsets_and_checksums_as_stored():
    r = FileReader(FIXTURES / "three.ffr")
    assert r.get_offsets(0).tolist() == [48, 49, 52, 57]
    assert r.get_checksums(0).tolist()[0] == 0xD3D99E8B
    with pytest.raises(IndexError):
        r.get_offsets(1)


# --- API ------------------------------------------------------------------------------------------

def test_index_errors_and_types():
    r = FileReader(FIXTURES / "three.ffr")
    for bad in (3, -1, 10**12):
        with pytest.raises(IndexError, match="out of range"):
            r.read_one(bad)
        with pytest.raises(IndexError):
            r.read([0, bad])
    with pytest.raises(TypeError):
        r.read(1)
    with pytest.raises(TypeError):
        r.read([0.5])
    with pytest.raises(TypeError):
        r.read_one("0")
    assert [a.tobytes() for a in r.read(np.array([2, 0], dtype=np.int32))] == [
        b"\x00\x01\x02\x03\xff", b"A"]
    assert r.read([]) == []


def test_pickle_reopens_by_name(tmp_path):
    path = tmp_path / "d.ffr"
    records = sample_records(50)
    path.write_bytes(ffrecord_bytes(records))
    r = FileReader(path, check_data=False)
    clone = pickle.loads(pickle.dumps(r))
    assert clone.fnames == r.fnames and clone.check_data is False and clone.n == 50
    assert [a.tobytes() for a in clone.read([3, 49])] == [records[3], records[49]]


def test_close_then_read_raises():
    r = FileReader(FIXTURES / "three.ffr")
    r.close()
    assert r.closed
    with pytest.raises(ValueError, match="closed"):
        r.read([0])
    r.close()  # idempotent


@pytest.mark.parametrize("engine", ["io_uring", "pread"])
@pytest.mark.parametrize("direct_io", [False, True])
def test_engines_and_direct_io_read_the_same_bytes(tmp_path, engine, direct_io):
    if engine == "io_uring" and not _core.io_uring_available():
        pytest.skip("io_uring is not available here")
    records = sample_records(500) + [bytes(range(256)) * 4096]  # one 1 MiB record
    path = tmp_path / "d.ffr"
    path.write_bytes(ffrecord_bytes(records))
    rng = np.random.default_rng(0)
    with FileReader(path, io_engine=engine, direct_io=direct_io, queue_depth=8,
                    access="random") as r:
        assert r.io_engine == engine
        for _ in range(3):
            idx = rng.integers(0, len(records), 100).tolist() + [500]
            assert [a.tobytes() for a in r.read(idx)] == [records[i] for i in idx]


def test_missing_paths_and_empty_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        FileReader(tmp_path / "missing.ffr")
    with pytest.raises(FileNotFoundError, match="no .ffr files"):
        FileReader(tmp_path)
    with pytest.raises(TypeError):
        FileReader(42)
    with pytest.raises(ValueError, match="empty"):
        FileReader([])


def test_threads_read_concurrently(tmp_path):
    records = sample_records(300)
    path = tmp_path / "d.ffr"
    path.write_bytes(ffrecord_bytes(records))
    r = FileReader(path)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            idx = rng.integers(0, 300, 32).tolist()
            if [a.tobytes() for a in r.read(idx)] != [records[i] for i in idx]:
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_validate_checks_metadata_and_optionally_every_record(tmp_path):
    FileReader(FIXTURES / "three.ffr").validate(records=True)
    r = FileReader(FIXTURES / "corrupt_sample.ffr", check_data=False)
    r.validate()  # the header is fine
    with pytest.raises(DataLossError, match="record 1"):
        r.validate(records=True)
    with pytest.raises(DataLossError, match="metadata checksum mismatch"):
        FileReader(FIXTURES / "corrupt_meta.ffr", check_data=False).validate()


# --- bad files: a clear exception naming the file, the record and the byte offset -----------------

def test_sample_checksum_mismatch_fixture():
    path = str(FIXTURES / "corrupt_sample.ffr")
    r = FileReader(path)
    assert r.read([0, 2])[0].tobytes() == b"A"
    with pytest.raises(DataLossError) as e:
        r.read([0, 1])
    assert f"{path}: record 1 at offset 49" in str(e.value)
    assert "checksum mismatch" in str(e.value)
    assert isinstance(e.value, ValueError)
    # Unchecked, the corrupt bytes come through.
    assert len(FileReader(path, check_data=False).read_one(1)) == 3


def test_metadata_checksum_mismatch_fixture():
    path = str(FIXTURES / "corrupt_meta.ffr")
    with pytest.raises(DataLossError, match="metadata checksum mismatch.*offset 0") as e:
        FileReader(path)
    assert path in str(e.value)


RECORDS = [b"first", b"second!", b"", b"fourth record"]
GOOD = ffrecord_bytes(RECORDS)


@pytest.mark.parametrize("name,data,message", [
    ("truncated_header", GOOD[:30], "record count at offset 4 is 4, which needs 60 bytes"),
    ("truncated_records", GOOD[:70], "record 2: offset 72 (stored at byte 44) is past the end"),
    ("tiny", b"FFR", "shorter than the 12-byte header"),
    ("huge_count", patch(GOOD, 4, "<q", 10**15, reseal=False), "record count at offset 4 is"),
    ("negative_count", patch(GOOD, 4, "<q", -3, reseal=False), "negative record count"),
    ("decreasing", patch(GOOD, offset_field(4, 2), "<q", 61),
     "record 2: offset 61 (stored at byte 44) is before record 1"),
    ("past_end", patch(GOOD, offset_field(4, 3), "<q", 10**9),
     "record 3: offset 1000000000 (stored at byte 52) is past the end"),
    ("into_header", patch(GOOD, offset_field(4, 0), "<q", 20), "record 0: offset 20"),
    ("meta_crc", patch(GOOD, 12, "<I", 12345, reseal=False), "metadata checksum mismatch"),
    ("not_ffrecord", b"\x89PNG\r\n\x1a\n" + bytes(range(200)), "not an FFRecord file"),
])
def test_bad_headers_raise_data_loss_naming_file_and_offset(tmp_path, name, data, message):
    path = tmp_path / f"{name}.ffr"
    path.write_bytes(data)
    with pytest.raises(DataLossError) as e:
        FileReader(path)
    assert str(path) in str(e.value)
    assert message in str(e.value)


def test_truncated_inside_the_last_record_is_a_checksum_error(tmp_path):
    path = tmp_path / "t.ffr"
    path.write_bytes(GOOD[:-3])
    r = FileReader(path)
    assert [a.tobytes() for a in r.read([0, 1, 2])] == RECORDS[:3]
    with pytest.raises(DataLossError, match=r"record 3 at offset 72 \(10 bytes\): checksum mismatch"):
        r.read_one(3)


def test_reads_what_struct_parses():
    # The fixture parsed with struct alone agrees with the reader.
    for name in ("three.ffr", "multi/PART_00001.ffr", "packed.ffr"):
        assert [a.tobytes() for a in FileReader(FIXTURES / name).read(
            range(len(fixture_records(name))))] == fixture_records(name)
