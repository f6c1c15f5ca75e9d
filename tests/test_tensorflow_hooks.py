"""The two places tf_gulp reaches into TensorFlow without a public hook, and the facts that keep them
there (docs/design.md, "No public hook"). Each test pins TensorFlow's own behaviour: when a future
TensorFlow changes it, the test fails and says which public hook to move to.

- Registering the ops when TensorFlow is imported (``tf_gulp/ops/library.py``'s import finder):
  TensorFlow's public hook is the ``site-packages/tensorflow-plugins`` folder, whose libraries
  ``import tensorflow`` loads. It does register an op library, but a library that cannot be loaded
  (one built for another TensorFlow) makes ``import tensorflow`` itself fail, for every program in
  the environment, before tf_gulp could check the version and explain.
- Warning when tf.distribute auto-shards a tf_gulp source (``_source_dataset.py``'s wrapper of
  ``auto_shard_dataset``): TensorFlow's rewrite falls back to sharding the finished elements without
  a word, and offers no callback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tf_gulp.ops import library

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code: str, env_path: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env_path, _REPO, env.get("PYTHONPATH", ""))
                                        if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=600, check=False)


def _plugin_dir(tmp_path, *libraries: str) -> str:
    # TensorFlow scans every sys.path entry whose name contains "site-packages".
    site = tmp_path / "site-packages"
    plugins = site / "tensorflow-plugins"
    plugins.mkdir(parents=True)
    for lib in libraries:
        shutil.copy(lib, plugins)
    return str(site)


def test_tensorflows_plugin_folder_registers_a_library(tmp_path):
    lib = os.path.join(os.path.dirname(library.__file__), library.LIBRARY_NAME)
    site = _plugin_dir(tmp_path, lib)
    proc = _run("""
        import tensorflow as tf
        from tensorflow.python.framework import op_def_registry
        print("registered", op_def_registry.get("TfGulp>GulpDataset") is not None)
        """, site)
    assert "registered True" in proc.stdout, proc.stderr[-3000:]


def test_a_plugin_that_cannot_load_breaks_import_tensorflow(tmp_path):
    site = _plugin_dir(tmp_path)
    (tmp_path / "site-packages" / "tensorflow-plugins" / "_tf_gulp_ops.so").write_bytes(b"not ELF")
    proc = _run("import tensorflow\nprint('imported')", site)
    assert proc.returncode != 0 and "imported" not in proc.stdout, (
        "import tensorflow now survives a plugin library that cannot be loaded: the "
        "tensorflow-plugins folder may replace tf_gulp's import finder (docs/design.md)")
    assert "_tf_gulp_ops.so" in proc.stderr


@pytest.mark.filterwarnings("ignore")
def test_tensorflows_auto_shard_fallback_says_nothing(tmp_path):
    ffr = tmp_path / "x.ffr"
    proc = _run(f"""
        import warnings
        import tensorflow as tf
        from tensorflow.python.distribute import input_ops
        import tf_gulp
        from tf_gulp.ffrecord import FileWriter
        with FileWriter({str(ffr)!r}, 4) as w:
            for i in range(4):
                w.write_one(bytes([i]) * 8)
        ds = tf_gulp.FFRecordDataset({str(ffr)!r})
        rewrite = getattr(input_ops.auto_shard_dataset, "__wrapped__",
                          input_ops.auto_shard_dataset)  # TensorFlow's own, not tf_gulp's wrapper
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = list(rewrite(ds, 2, 0).as_numpy_iterator())
        print("elements", len(got), "warnings", len(caught))
        """)
    assert "elements 2 warnings 0" in proc.stdout, proc.stderr[-3000:]
    logged = [line for line in proc.stderr.splitlines() if "shard" in line.lower()]
    assert not logged, ("TensorFlow now reports its auto-shard fallback itself; tf_gulp's wrapper "
                        f"of auto_shard_dataset may go (docs/design.md): {logged}")
