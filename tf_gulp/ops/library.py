"""Loads tf_gulp's op library, `_tf_gulp_ops.so`, once per process.

Both builds put two files next to this module: the op library and `_build_info.json`, which records
the TensorFlow version the library was compiled against (`tensorflow_version`), TensorFlow's libstdc++
ABI flag (`cxx11_abi`) and which build made it (`builder`: "setup.py" or "bazel"). A custom op library
must be loaded by the TensorFlow it was compiled with; loading it into another version fails with
undefined symbols or, worse, crashes later. So the version is checked before the library is loaded, and
a mismatch is an ImportError that says how to rebuild.
"""

from __future__ import annotations

import json
import os
import threading
from types import ModuleType
from typing import Any, Dict, Optional

import tensorflow as tf

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
    installed = tf.__version__ if installed_version is None else installed_version
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
    with _lock:
        if _ops is None:
            _ops = _load(directory or library_dir())
        return _ops


def _load(directory: str) -> ModuleType:
    path = os.path.join(directory, LIBRARY_NAME)
    if not os.path.isfile(path):
        raise ImportError(f"tf_gulp's op library {path} is not built; {_BUILD_HINT}")
    check_build_info(read_build_info(directory))
    try:
        return tf.load_op_library(path)
    except tf.errors.OpError as e:
        # A runtime library missing or broken is not fixed by rebuilding: name it and its package.
        explained = explain_load_error(e.message, f"tf_gulp's op library {path}")
        raise ImportError(
            explained or f"cannot load tf_gulp's op library {path}: {e.message}; {_REBUILD_HINT}"
        ) from e


# Importing this module imports TensorFlow; when that import was the one tf_gulp's import watcher
# waited for, registering had to wait until load_ops above existed (tf_gulp/_op_registration.py).
from tf_gulp._op_registration import register_now as _register_now  # noqa: E402

_register_now()
