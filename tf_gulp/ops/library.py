"""Loads tf_gulp's op library, `_tf_gulp_ops.so`, once per process.

Both builds put two files next to this module: the op library and `_build_info.json`, which records
the TensorFlow version the library was compiled against (`tensorflow_version`), TensorFlow's libstdc++
ABI flag (`cxx11_abi`) and which build made it (`builder`: "setup.py" or "bazel"). A custom op library
must be loaded by the TensorFlow it was compiled with; loading it into another version fails with
undefined symbols or, worse, crashes later. So the version is checked before the library is loaded, and
a mismatch is an ImportError that says how to rebuild.

Registering the ops when tf_gulp is imported (:func:`install`, called by ``tf_gulp/__init__.py``):
A graph that uses tf_gulp's ops (a SavedModel whose function calls ``similarity_warp``, a dataset
graph run by a tf.data service worker, a pipeline restored from its serialized graph) names them
(``TfGulp>SimilarityWarp``); TensorFlow can only build it in a process where the op library is
loaded, else it fails with ``Op type not registered 'TfGulp>SimilarityWarp'``. The datasets load
the library when they are first made, but loading a saved graph makes none of them, so the
library must be loaded by the import itself.

The package must still import without TensorFlow (the writers, readers and ``tf-gulp`` commands
that need none of it import ``tf_gulp``, in every ingest worker process too), and must not import
TensorFlow just to register ops (seconds, and hundreds of MB per process). So:

- TensorFlow already imported: the library is loaded now (tens of milliseconds);
- not yet: a finder on ``sys.meta_path`` waits for ``import tensorflow`` and loads the library
  right after TensorFlow's own ``__init__`` has run, then removes itself. Until then it costs one
  string comparison per import. (TensorFlow's ``tensorflow-plugins`` folder would register the
  ops too, but a library in it that cannot load breaks ``import tensorflow`` itself: docs/design.md,
  tests/test_tensorflow_hooks.py.)

A library that cannot be loaded (not built, built for another TensorFlow) does not make the import
fail: the package's TensorFlow-free parts still work, a warning names the reason, and the first
dataset or op raises the full ``ImportError``.

This module imports TensorFlow only inside the functions that need it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import warnings
from types import ModuleType
from typing import Any, Dict, Optional, Sequence

from tf_gulp._runtime_libs import explain_load_error

LIBRARY_NAME = "_tf_gulp_ops.so"
BUILD_INFO_NAME = "_build_info.json"

_HERE = os.path.dirname(os.path.abspath(__file__))

_BUILD_HINT = (
    "build it from the source checkout with: pip install --no-build-isolation -e .  "
    "(or pip install --no-build-isolation .), or run `make build`; "
    "see docs/building.md"
)
_REBUILD_HINT = "rebuild it: pip install --no-build-isolation --force-reinstall .  (or pip install -e .)"

_lock = threading.Lock()
_ops: Optional[ModuleType] = None


def library_dir() -> str:
    """The folder that holds the op library and its build info (this module's folder)."""
    return _HERE


def read_build_info(directory: Optional[str] = None) -> Dict[str, Any]:
    """Reads `_build_info.json` from `directory` (default: `library_dir()`).

    Raises:
      ImportError: the file is missing or is not a JSON object with a `tensorflow_version`.
    """
    path = os.path.join(directory or library_dir(), BUILD_INFO_NAME)
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
    except FileNotFoundError:
        raise ImportError(
            f"tf_gulp's op library has no build record ({path} is missing), so it cannot be "
            f"checked against the installed TensorFlow; {_BUILD_HINT}"
        ) from None
    except (OSError, ValueError) as e:
        raise ImportError(f"cannot read tf_gulp's build record {path}: {e}; {_BUILD_HINT}") from e
    if not isinstance(info, dict) or not isinstance(info.get("tensorflow_version"), str):
        raise ImportError(
            f"tf_gulp's build record {path} has no tensorflow_version; {_BUILD_HINT}"
        )
    return info


def check_build_info(info: Dict[str, Any], installed_version: Optional[str] = None) -> None:
    """Raises ImportError unless `info` was built against `installed_version` (default: tf.__version__)."""
    if installed_version is None:
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        installed_version = tf.__version__
    installed = installed_version
    built = info.get("tensorflow_version")
    if built != installed:
        # A binary wheel's user has no source to rebuild: the TensorFlow to install is the way out.
        message = (
            f"tf_gulp's op library was built against TensorFlow {built} but TensorFlow "
            f"{installed} is installed; install the TensorFlow it was built for "
            f"(pip install tensorflow-cpu=={built}, or tensorflow=={built}), or {_REBUILD_HINT} "
            f"(a binary wheel for another TensorFlow: see docs/wheel.md)"
        )
        if info.get("builder") == "bazel":
            message += "; for a Bazel build: bazel sync --configure, then build again"
        raise ImportError(message)


def load_ops(directory: Optional[str] = None) -> ModuleType:
    """Returns the module made by `tf.load_op_library` for tf_gulp's op library.

    The library is loaded once per process; later calls (from any thread) return the same module.
    `directory` overrides where the library and its build record are looked for; it is meant for
    tests and is ignored once the library is loaded.

    Raises:
      ImportError: the library is not built, was built against another TensorFlow version, or
        fails to load.
    """
    global _ops
    ops = _ops
    if ops is not None:
        return ops
    # TensorFlow first, outside the lock: its import may run the import watcher below, which
    # loads the library through this function.
    import tensorflow  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import

    with _lock:
        if _ops is None:
            _ops = _load(directory or library_dir())
        return _ops


def _load(directory: str) -> ModuleType:
    path = os.path.join(directory, LIBRARY_NAME)
    if not os.path.isfile(path):
        raise ImportError(f"tf_gulp's op library {path} is not built; {_BUILD_HINT}")
    check_build_info(read_build_info(directory))
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    try:
        return tf.load_op_library(path)
    except tf.errors.OpError as e:
        # A runtime library missing or broken is not fixed by rebuilding: name it and its package.
        explained = explain_load_error(e.message, f"tf_gulp's op library {path}")
        raise ImportError(
            explained or f"cannot load tf_gulp's op library {path}: {e.message}; {_REBUILD_HINT}"
        ) from e


_TF = "tensorflow"
_registration_lock = threading.Lock()
_registered = False


def register_now() -> None:
    """Loads the op library (once per process); a failure is a warning, not an error."""
    global _registered
    with _registration_lock:
        if _registered:
            return
        _registered = True
    try:
        load_ops()
    except ImportError as e:
        warnings.warn(f"tf_gulp's ops are not registered, so graphs that use them (SavedModels, "
                      f"tf.data service datasets) cannot be loaded in this process: {e}",
                      RuntimeWarning, stacklevel=2)


class _LoadAfterTensorFlow:  # an importlib Loader (importlib.abc costs 20 ms to import)
    """Runs TensorFlow's own loader, then registers the ops; puts the original loader back on the
    module so that nothing else sees this one."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Optional[ModuleType]:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _uninstall()
        register_now()


class _TensorFlowImportWatcher:  # an importlib MetaPathFinder
    """Finds ``tensorflow`` with the other finders and wraps its loader."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Any:
        if fullname != _TF:
            return None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _LoadAfterTensorFlow(spec.loader)
                return spec
        return None


_watcher = _TensorFlowImportWatcher()


def _uninstall() -> None:
    try:
        sys.meta_path.remove(_watcher)
    except ValueError:
        pass


def install() -> None:
    """Registers the ops now if TensorFlow is imported, else when it is."""
    module = sys.modules.get(_TF)
    if module is not None:
        spec = getattr(module, "__spec__", None)
        if not getattr(spec, "_initializing", False):
            register_now()
        # else: TensorFlow is being imported and imports tf_gulp itself (a plugin hook);
        # the first dataset or op loads the library.
        return
    if _watcher not in sys.meta_path:
        sys.meta_path.insert(0, _watcher)
