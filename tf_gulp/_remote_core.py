"""The bridge that lets ``tf_gulp._core`` (which has no TensorFlow) read remote paths (``gs://``,
``ram://``, ...): a file-system object over ``tf.io.gfile``, handed to the core once per process the
first time a reader meets a remote path (``tf_gulp/pybind/python_file_system.h``; docs/design.md,
Remote storage)."""

from __future__ import annotations

import os
import threading
from typing import Union

from tf_gulp._files import is_remote

__all__ = ["use_remote_paths_in_core"]


class _GFileSystem:
    """The file-system object ``tf_gulp._core`` reads non-local paths through
    (``tf_gulp/pybind/python_file_system.h``): TensorFlow's file systems via ``tf.io.gfile``."""

    def stat(self, path: str) -> "tuple[bool, int, int]":
        import tensorflow as tf

        try:
            st = tf.io.gfile.stat(path)
        except tf.errors.NotFoundError:
            # Some stores (ram://) know directories only by what is in them.
            if tf.io.gfile.isdir(path):
                return True, 0, 0
            raise FileNotFoundError(f"{path}: no such file or directory") from None
        return bool(st.is_directory), int(st.length), int(st.mtime_nsec)

    def listdir(self, path: str) -> "list[str]":
        import tensorflow as tf

        return [name.rstrip("/") for name in tf.io.gfile.listdir(path)]

    def read(self, path: str, offset: int, size: int) -> bytes:
        import tensorflow as tf

        with tf.io.gfile.GFile(path, "rb") as f:
            f.seek(offset)
            return f.read(size)


_core_file_system_lock = threading.Lock()
_core_file_system_set = False


def use_remote_paths_in_core(path: Union[str, bytes, os.PathLike]) -> None:
    """Lets ``tf_gulp._core`` (which has no TensorFlow) read ``path`` when it is remote, by handing
    it :class:`_GFileSystem` once per process. Local paths need nothing."""
    global _core_file_system_set
    if _core_file_system_set or not is_remote(path):
        return
    with _core_file_system_lock:
        if not _core_file_system_set:
            from tf_gulp._runtime_libs import import_core

            import_core().set_remote_file_system(_GFileSystem())
            _core_file_system_set = True
