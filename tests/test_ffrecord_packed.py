"""Packed folders: the reference's packed.ffr reads here, ours is byte-identical, and the pickled
index cannot run code."""

from __future__ import annotations

import collections
import os
import pickle

import pytest

from ffrecord_testing import EXPECTED, FIXTURES, ffrecord_bytes
from tf_gulp.ffrecord import FileReader, PackedFolder, pack_folder

PACKED = EXPECTED["packed.ffr"]


def make_tree(root):
    """The folder the reference packed into packed.ffr (EXPECTED.json lists it)."""
    for d in PACKED["dirs"]:
        os.makedirs(root / d, exist_ok=True)
    for name, text in PACKED["files"].items():
        data = b"\x00\x01" if name == "sub/c.bin" else text.encode()
        (root / name).write_bytes(data)


def test_reads_the_reference_packed_folder():
    p = PackedFolder(FIXTURES / "packed.ffr")
    assert p.num_files() == 5
    assert p.list() == ["a.txt", "b.txt", "emptydir", "sub"]
    assert p.list(recursive=True) == ["a.txt", "b.txt", "emptydir", "sub", "sub/c.bin", "sub/deep",
                                      "sub/deep/e.txt", "sub/deep/été.txt"]
    assert p.list("sub", list_dir=False) == ["c.bin"]
    assert p.list(list_file=False, recursive=True) == ["emptydir", "sub", "sub/deep"]
    assert p.list("emptydir") == []
    for name, text in PACKED["files"].items():
        want = b"\x00\x01" if name == "sub/c.bin" else text.encode()
        assert p.read_one(name).tobytes() == want
    assert [a.tobytes() for a in p.read(["b.txt", "a.txt"])] == [b"BB", b"A"]
    assert p.is_dir("sub/deep") and p.is_file("sub/deep/e.txt") and not p.is_file("sub")
    assert p.exists("emptydir") and not p.exists("nope") and not p.exists("a.txt/x")
    assert p.read_one("/sub/./c.bin").tobytes() == b"\x00\x01"
    with pytest.raises(FileNotFoundError):
        p.read_one("missing.txt")
    with pytest.raises(IsADirectoryError):
        p.read_one("sub")
    with pytest.raises(NotADirectoryError):
        p.list("a.txt")


def test_pack_folder_is_byte_identical_to_the_reference(tmp_path):
    make_tree(tmp_path / "tree")
    out = tmp_path / "packed.ffr"
    assert pack_folder(tmp_path / "tree", out) == 5
    assert out.read_bytes() == (FIXTURES / "packed.ffr").read_bytes()
    assert PackedFolder(out).list(recursive=True)[-1] == "sub/deep/été.txt"


def hostile_file(path, index: bytes, records=(b"payload",)):
    path.write_bytes(ffrecord_bytes(list(records) + [b"piouhjgbr" + index]))


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def test_a_malicious_pickle_is_refused_without_running_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # The attack works against plain pickle.loads (what the reference uses) ...
    payload = pickle.dumps(collections.OrderedDict(a=Evil()), protocol=4)
    # ... (not run here; the payload is only built). Our reader refuses it:
    hostile_file(tmp_path / "evil.ffr", payload)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load posix.system"):
        PackedFolder(tmp_path / "evil.ffr")
    assert not (tmp_path / "pwned.txt").exists()
    # Other callables and classes are refused too.
    for obj in (collections.Counter(a=1), [1, 2], {1, 2}, b"bytes"):
        hostile_file(tmp_path / "other.ffr", pickle.dumps(collections.OrderedDict(a=obj)))
        with pytest.raises((pickle.UnpicklingError, ValueError)):
            PackedFolder(tmp_path / "other.ffr")


@pytest.mark.parametrize("index", [
    pickle.dumps(collections.OrderedDict(a=5)),           # points past the records
    pickle.dumps(collections.OrderedDict(a=-1)),
    pickle.dumps(collections.OrderedDict(a="x")),
    pickle.dumps(collections.OrderedDict([(1, 0)])),
    pickle.dumps([0]),
    b"not a pickle",
])
def test_bad_indexes_are_errors(tmp_path, index):
    hostile_file(tmp_path / "bad.ffr", index)
    with pytest.raises((ValueError, pickle.UnpicklingError)):
        PackedFolder(tmp_path / "bad.ffr")


def test_a_plain_ffrecord_file_is_not_a_packed_folder():
    with pytest.raises(ValueError, match="not a packed folder"):
        PackedFolder(FIXTURES / "three.ffr")
    # ... but its records are the files plus the index, for FileReader.
    assert FileReader(FIXTURES / "packed.ffr").n == 6
