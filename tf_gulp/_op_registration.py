"""`import tf_gulp` registers tf_gulp's ops with TensorFlow, whichever of the two is imported first.

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
  string comparison per import.

A library that cannot be loaded (not built, built for another TensorFlow) does not make the import
fail: the package's TensorFlow-free parts still work, a warning names the reason, and the first
dataset or op raises the full ``ImportError``.
"""

from __future__ import annotations

import sys
import threading
import warnings
from types import ModuleType
from typing import Any, Optional, Sequence

_TF = "tensorflow"
_lock = threading.Lock()
_registered = False


def register_now() -> None:
    """Loads the op library (once per process); a failure is a warning, not an error."""
    global _registered
    library = sys.modules.get("tf_gulp.ops.library")
    if library is not None and not hasattr(library, "load_ops"):
        # TensorFlow is being imported by tf_gulp.ops.library itself, which is not yet defined:
        # it calls register_now() again at its end.
        return
    with _lock:
        if _registered:
            return
        _registered = True
    from tf_gulp.ops.library import load_ops  # imports TensorFlow: only once it is there

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
