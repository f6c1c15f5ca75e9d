"""Tests for tf_gulp.ops.library: loading the op library once, and the TensorFlow version check."""

import json
import os
import threading
import types

import pytest
import tensorflow as tf

from tf_gulp.ops import library


def _write_build_info(directory, **info):
    with open(os.path.join(directory, library.BUILD_INFO_NAME), "w", encoding="utf-8") as f:
        json.dump(info, f)


def test_load_ops_returns_the_op_module():
    ops = library.load_ops()
    # tf.load_op_library returns a module of generated Python wrappers, one per registered op.
    assert isinstance(ops, types.ModuleType)
    # (Each op gets a snake_case wrapper and an eager fallback next to it.)
    wrappers = [name for name in dir(ops) if name.endswith("_eager_fallback")]
    assert wrappers, "the op library registers no op"


def test_load_ops_is_cached_and_thread_safe():
    first = library.load_ops()
    results = []
    threads = [threading.Thread(target=lambda: results.append(library.load_ops())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    assert all(r is first for r in results)


def test_build_info_matches_installed_tensorflow():
    info = library.read_build_info()
    assert info["tensorflow_version"] == tf.__version__
    assert info["builder"] in ("setup.py", "bazel")
    assert info["cxx11_abi"] == tf.sysconfig.CXX11_ABI_FLAG
    library.check_build_info(info)  # does not raise


def test_version_mismatch_is_an_import_error_naming_both_versions(tmp_path, monkeypatch):
    monkeypatch.setattr(library, "_ops", None)
    (tmp_path / library.LIBRARY_NAME).write_bytes(b"")  # never loaded: the check comes first
    _write_build_info(tmp_path, tensorflow_version="1.2.3", cxx11_abi=1, builder="setup.py")
    with pytest.raises(ImportError) as e:
        library.load_ops(str(tmp_path))
    message = str(e.value)
    assert "built against TensorFlow 1.2.3" in message
    assert f"TensorFlow {tf.__version__} is installed" in message
    assert "pip install --no-build-isolation --force-reinstall ." in message
    assert library._ops is None


def test_check_build_info_with_fake_installed_version():
    with pytest.raises(ImportError, match=r"built against TensorFlow 2\.21\.0 but TensorFlow 9\.9\.9"):
        library.check_build_info({"tensorflow_version": "2.21.0", "builder": "setup.py"}, "9.9.9")


def test_bazel_build_mismatch_mentions_bazel():
    with pytest.raises(ImportError, match="bazel sync --configure"):
        library.check_build_info({"tensorflow_version": "0.0.1", "builder": "bazel"})


def test_missing_library_says_how_to_build(tmp_path, monkeypatch):
    monkeypatch.setattr(library, "_ops", None)
    _write_build_info(tmp_path, tensorflow_version=tf.__version__, cxx11_abi=1, builder="setup.py")
    with pytest.raises(ImportError, match=r"is not built; build it .*pip install --no-build-isolation -e \."):
        library.load_ops(str(tmp_path))


def test_missing_build_info_is_an_import_error(tmp_path, monkeypatch):
    monkeypatch.setattr(library, "_ops", None)
    (tmp_path / library.LIBRARY_NAME).write_bytes(b"")
    with pytest.raises(ImportError, match="no build record"):
        library.load_ops(str(tmp_path))


def test_unloadable_library_is_an_import_error(tmp_path, monkeypatch):
    monkeypatch.setattr(library, "_ops", None)
    (tmp_path / library.LIBRARY_NAME).write_bytes(b"not an ELF file")
    _write_build_info(tmp_path, tensorflow_version=tf.__version__, cxx11_abi=1, builder="setup.py")
    with pytest.raises(ImportError, match="cannot load tf_gulp's op library"):
        library.load_ops(str(tmp_path))
