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


def test_mismatch_names_the_tensorflow_to_install():
    # A binary wheel's user cannot rebuild from source; the error says which TensorFlow fits.
    with pytest.raises(ImportError, match=r"pip install tensorflow-cpu==2\.21\.0, or tensorflow==2\.21\.0"):
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


# -- A runtime library missing or broken (issue 25) ----------------------------------------------


def _with_broken_liburing(tmp_path, code: str):
    """`code` run in a child whose dynamic loader finds an empty liburing.so.2 first (a stand-in
    for a broken or half-removed install; tf_gulp's modules link liburing, TensorFlow does not)."""
    import subprocess
    import sys

    from ingest_testing import REPO_ROOT, cli_env

    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "liburing.so.2").write_bytes(b"")
    env = cli_env()
    env["LD_LIBRARY_PATH"] = str(libs)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, cwd=str(REPO_ROOT))


def test_a_broken_runtime_library_is_named_with_its_package(tmp_path):
    done = _with_broken_liburing(tmp_path, "\n".join([
        "from tf_gulp.ops import library",
        "try:",
        "    library.load_ops()",
        "except ImportError as e:",
        "    print('OPS', e)",
        "from tf_gulp._runtime_libs import import_core",
        "try:",
        "    import_core()",
        "except ImportError as e:",
        "    print('CORE', e)",
    ]))
    lines = {line.split(" ", 1)[0]: line for line in done.stdout.splitlines()}
    for name in ("OPS", "CORE"):
        line = lines.get(name, "")
        assert "liburing.so.2" in line and "file too short" in line, done
        assert "install the Debian package liburing2" in line, line
        assert "--force-reinstall" not in line, line


def test_tf_gulp_info_with_a_broken_runtime_library_is_one_line(tmp_path):
    from gulp_testing import make_gulp_dir

    d = tmp_path / "g"
    make_gulp_dir(d, num_videos=2, frames_per_video=2, height=8, width=8, videos_per_chunk=2)
    done = _with_broken_liburing(
        tmp_path, "import sys\nfrom tf_gulp.cli.main import main\n"
                  f"sys.exit(main(['info', {str(d)!r}]))")
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("tf-gulp info: error: ") and "liburing.so.2" in error, done.stderr
    assert "install the Debian package liburing2" in error, error


def test_explain_load_error_reads_the_loaders_messages():
    from tf_gulp._runtime_libs import explain_load_error

    missing = explain_load_error("libavcodec.so.59: cannot open shared object file: No such "
                                 "file or directory", "tf_gulp._core")
    assert missing == ("tf_gulp._core cannot load the shared library libavcodec.so.59: cannot "
                       "open shared object file: No such file or directory; it is not installed "
                       "or is broken (rebuilding tf_gulp does not help): install the Debian "
                       "package libavcodec59 (apt-get install libavcodec59); "
                       "tools/apt-packages.txt and docs/building.md list what tf_gulp needs")
    # tf_gulp's own library, or a message already explained, is left alone.
    assert explain_load_error("/x/tf_gulp/ops/_tf_gulp_ops.so: undefined symbol: f", "m") is None
    assert explain_load_error(missing, "tf_gulp") is None
