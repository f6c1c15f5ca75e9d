"""Two-way compatibility with HFAiLab's ffrecord itself, when it is installed beside the project
(set TF_GULP_FFRECORD_REFERENCE to its install folder, or have `ffrecord` importable); skipped
otherwise. The committed fixtures (tests/data/ffrecord, written by it) cover the other direction
in every run."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from ffrecord_testing import sample_records
from tf_gulp.ffrecord import FileReader, FileWriter, PackedFolder, dump, pack_folder


@pytest.fixture(scope="module")
def reference():
    # Skipped per test (not at import) so that the file always collects its tests.
    if os.environ.get("TF_GULP_FFRECORD_REFERENCE"):
        sys.path.insert(0, os.environ["TF_GULP_FFRECORD_REFERENCE"])
    return pytest.importorskip("ffrecord", reason="HFAiLab's ffrecord is not installed")


def test_reference_reads_what_we_write(tmp_path, reference):
    records = sample_records(300)
    dump(records, tmp_path / "parts", 3, progress=False)
    r = reference.FileReader(str(tmp_path / "parts"), True)
    assert r.n == 300
    assert [bytes(a) for a in r.read(list(range(300)))] == records
    floats = np.linspace(0, 1, 10, dtype=np.float32)
    with FileWriter(tmp_path / "f.ffr", 1) as w:
        w.write_one(floats)
    got = reference.FileReader(str(tmp_path / "f.ffr"), True).read_one(0)
    np.testing.assert_array_equal(np.frombuffer(bytes(got), np.float32), floats)


def test_we_read_what_the_reference_writes(tmp_path, reference):
    records = sample_records(200, seed=3)
    with reference.FileWriter(str(tmp_path / "ref.ffr"), len(records)) as w:
        for r in records:
            w.write_one(r)
    assert [a.tobytes() for a in FileReader(tmp_path / "ref.ffr").read(range(200))] == records


def test_packed_folders_both_ways(tmp_path, reference):
    tree = tmp_path / "tree"
    (tree / "d" / "e").mkdir(parents=True)
    (tree / "empty").mkdir()
    (tree / "a.bin").write_bytes(b"\x00" * 10)
    (tree / "d" / "b.txt").write_bytes(b"bee")
    (tree / "d" / "e" / "ç.txt").write_bytes(b"cedilla")
    pack_folder(tree, tmp_path / "ours.ffr")
    reference.pack_folder(str(tree), str(tmp_path / "theirs.ffr"))
    assert (tmp_path / "ours.ffr").read_bytes() == (tmp_path / "theirs.ffr").read_bytes()
    theirs = reference.PackedFolder(str(tmp_path / "ours.ffr"))
    assert bytes(theirs.read_one("d/e/ç.txt")) == b"cedilla"
    assert PackedFolder(tmp_path / "theirs.ffr").read_one("d/b.txt").tobytes() == b"bee"
