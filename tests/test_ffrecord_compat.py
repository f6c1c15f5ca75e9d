"""The reference ffrecord's public names that its users import (docs/compat.md): ``__version__``,
``ffrecord.utils.dump`` with ``verbose`` (silent by default), ``checkFsAlign``."""

import os
import pickle

import pytest

import tf_gulp
import tf_gulp.ffrecord as ffrecord
from tf_gulp.ffrecord import FileReader


def test_version_is_tf_gulps():
    # The reference's test modules print ffrecord.__version__ on import.
    assert ffrecord.__version__ == tf_gulp.__version__
    assert "__version__" in ffrecord.__all__


def test_utils_module_exports_dump():
    from tf_gulp.ffrecord.utils import dump
    assert dump is ffrecord.dump
    assert ffrecord.utils.dump is ffrecord.dump


def test_dump_is_silent_by_default_and_verbose_shows_progress(tmp_path, capfd):
    records = [pickle.dumps(i) for i in range(50)]
    ffrecord.dump(records, tmp_path / "quiet", 3)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    # The reference's fourth positional argument.
    ffrecord.dump(records, tmp_path / "loud", 3, True)
    _out, err = capfd.readouterr()
    assert "50/50" in err
    # verbose=False given by keyword, as the reference's callers write it.
    ffrecord.dump(records, tmp_path / "kw.ffr", 1, verbose=False)
    assert capfd.readouterr() == ("", "")
    # progress (ours) overrides verbose.
    ffrecord.dump(records, tmp_path / "forced", 2, verbose=True, progress=False)
    assert capfd.readouterr() == ("", "")
    for name in ("quiet", "loud", "kw.ffr", "forced"):
        reader = FileReader(str(tmp_path / name))
        assert [pickle.loads(r) for r in reader.read(list(range(reader.n)))] == list(range(50))
        reader.close()


def test_check_fs_align_is_false_off_hfai(tmp_path):
    path = tmp_path / "f.ffr"
    path.write_bytes(b"x" * 4096)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert ffrecord.checkFsAlign(fd) is False
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        assert ffrecord.checkFsAlign(f) is False
    with pytest.raises(OSError):
        ffrecord.checkFsAlign(10**6)  # not an open descriptor: EBADF is not "not aligned"
