"""The compiled core (tf_gulp._core) for the FFRecord readers and writers, with a clear error when it
has not been built."""

from tf_gulp._runtime_libs import import_core

_core = import_core()

DataLossError = _core.DataLossError

__all__ = ["DataLossError", "_core"]
