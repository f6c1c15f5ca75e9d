"""Saved graphs that use tf_gulp's ops load in a fresh process after a plain ``import tf_gulp``
(or ``import tf_gulp.ops``), whichever of tf_gulp and TensorFlow is imported first
(tf_gulp/ops/library.py): a SavedModel calling ``similarity_warp``, a tf.data service worker
running a ``GulpDataset`` graph, and ``tf.data.Dataset.load`` of a saved pipeline. Each runs in a
child process, since op registration is for the life of a process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

import tf_gulp
from child_testing import run_entry_points
from gulp_testing import make_gulp_dir
from ingest_testing import cli_env
from tf_gulp.ops import similarity_warp
from tf_gulp.service import start_dispatcher


class _Warper(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, None, 3], tf.uint8)])
    def warp(self, image):
        return similarity_warp(image, tf.eye(3), (4, 4))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    gulp = make_gulp_dir(root / "g", 4, 3, 16, 16, 2)["path"]
    tf.saved_model.save(_Warper(), str(root / "model"))
    tf_gulp.GulpDataset(gulp, decode=False).map(lambda e: e["id"]).save(str(root / "ids"))
    return {"root": root, "gulp": gulp}


IMPORTS = {
    "tf_gulp_first": "import tf_gulp\nimport tensorflow as tf",
    "tensorflow_first": "import tensorflow as tf\nimport tf_gulp",
    "ops_after_tensorflow": "import tensorflow as tf\nimport tf_gulp.ops",
    # The library module imports TensorFlow itself, which wakes the import watcher while the
    # module is half made (a circular import until the watcher waited for it).
    "library_first": "from tf_gulp.ops import library\nimport tensorflow as tf",
}


@pytest.mark.parametrize("imports", list(IMPORTS), ids=list(IMPORTS))
def test_saved_model_with_similarity_warp_loads_after_import(saved, imports):
    code = IMPORTS[imports] + textwrap.dedent(f"""
        import numpy as np
        model = tf.saved_model.load({str(saved["root"] / "model")!r})
        out = model.warp(tf.fill([5, 5, 3], tf.constant(7, tf.uint8))).numpy()
        assert out.shape == (4, 4, 3) and np.all(out == 7), out
        import sys
        assert "tf_gulp.gulp.dataset" not in sys.modules  # registering imports no dataset
        """)
    result = run_entry_points([("load", code)])["load"]
    assert result["type"] is None, result["message"]


def test_saved_model_without_tf_gulp_says_op_not_registered(saved):
    """The control: without tf_gulp imported the model does not load (what the import fixes)."""
    code = f"import tensorflow as tf\ntf.saved_model.load({str(saved['root'] / 'model')!r})"
    result = run_entry_points([("load", code)])["load"]
    assert "Op type not registered 'TfGulp>SimilarityWarp'" in result["message"]


def test_import_without_tensorflow_does_not_import_it():
    code = textwrap.dedent("""
        import sys
        import tf_gulp, tf_gulp.gulp, tf_gulp.ffrecord
        assert "tensorflow" not in sys.modules, "import tf_gulp imported TensorFlow"
        """)
    result = run_entry_points([("import", code)])["import"]
    assert result["type"] is None, result["message"]


def test_dataset_load_after_import(saved):
    code = "import tf_gulp\nimport tensorflow as tf\n" + textwrap.dedent(f"""
        ids = sorted(tf.data.Dataset.load({str(saved["root"] / "ids")!r}).as_numpy_iterator())
        assert ids == [b"vid0000", b"vid0001", b"vid0002", b"vid0003"], ids
        """)
    result = run_entry_points([("load", code)])["load"]
    assert result["type"] is None, result["message"]


_WORKER = r'''
import sys
import tf_gulp
import tensorflow as tf
config = tf.data.experimental.service.WorkerConfig(dispatcher_address=sys.argv[1])
worker = tf.data.experimental.service.WorkerServer(config)
print("worker ready", flush=True)
worker.join()
'''


def test_service_worker_with_plain_import_runs_gulp_dataset(saved, tmp_path):
    """A worker started by a script of one's own that only does ``import tf_gulp`` (not
    ``python -m tf_gulp.service``) runs GulpDataset graphs."""
    dispatcher = start_dispatcher()
    address = dispatcher.target.split("://", 1)[1]
    log = open(tmp_path / "worker.log", "w")  # TensorFlow's logs
    worker = subprocess.Popen([sys.executable, "-c", _WORKER, address], env=cli_env(),
                              stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        ready = worker.stdout.readline().strip()
        assert ready == "worker ready", (tmp_path / "worker.log").read_text()[-3000:]
        ds = tf_gulp.GulpDataset(saved["gulp"], decode=False).map(lambda e: e["id"])
        ds = ds.apply(tf.data.experimental.service.distribute(
            tf.data.experimental.service.ShardingPolicy.DYNAMIC, dispatcher.target))
        assert sorted(ds.as_numpy_iterator()) == [b"vid0000", b"vid0001", b"vid0002", b"vid0003"]
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        log.close()
        dispatcher._stop()  # pylint: disable=protected-access


def test_registration_failure_is_a_warning_not_an_import_error(tmp_path):
    """A broken op library must not break ``import tf_gulp`` (its TensorFlow-free parts still
    work); the warning says why saved graphs will not load."""
    code = textwrap.dedent("""
        import warnings
        from tf_gulp.ops import library  # no TensorFlow yet
        def broken(directory=None):  # a library that cannot load
            raise ImportError("no op library here")
        library.load_ops = broken
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tensorflow as tf
        messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
        assert any("tf_gulp's ops are not registered" in m and "no op library here" in m
                   for m in messages), messages
        """)
    result = run_entry_points([("broken", code)])["broken"]
    assert result["type"] is None, result["message"]
