"""Opening data files safely: only regular files are read, and a FIFO never blocks the reader.

``open(2)`` of a FIFO (named pipe) for reading waits until some process opens it for writing, which
may be never: a ``.gmeta`` or ``.gulp`` that is a FIFO would hang a reader forever. Every data file
is therefore opened with ``O_NONBLOCK`` (which makes that ``open`` return at once), checked with
``fstat`` to be a regular file (checking the descriptor, not the name, leaves no window for the file
to be swapped in between), and only then read. The C++ core does the same (``cc/io``).

Paths with a URI scheme other than ``file://`` (``gs://bucket/x``, ``s3://``, ``ram://``, ...) name
files of TensorFlow's file systems: :func:`is_remote` tells them apart, :func:`absolute` leaves them
as they are, and :func:`open_binary` / :func:`read_regular` read them through ``tf.io.gfile`` (the
C++ core reads them through ``tensorflow::Env``, see ``cc/io/file_system.h``).

(Beside it, by job: ``tf_gulp/_json.py``, JSON parsing whose depth the interpreter bounds;
``tf_gulp/_remote_core.py``, the bridge that lets ``tf_gulp._core`` read those remote paths.)
"""

from __future__ import annotations

import os
import re
import stat
import threading
from typing import Any, BinaryIO, Optional, Type, TypeVar, Union

__all__ = ["Closing", "PositionalReader", "absolute", "check_regular_file", "exists", "file_kind", "file_size",
           "isdir", "is_remote", "join", "open_binary", "open_regular",
           "read_regular"]

# "scheme://": a letter, then letters, digits, '+', '-' or '.' (RFC 3986), as cc/io/file_system.cc.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_remote(path: Union[str, bytes, os.PathLike]) -> bool:
    """True when ``path`` names a file of one of TensorFlow's file systems (``gs://``, ``s3://``,
    ``ram://``, ...) rather than a local file; ``file://`` paths are local."""
    path = os.fsdecode(path)
    return bool(_SCHEME.match(path)) and not path.startswith("file://")


def absolute(path: Union[str, bytes, os.PathLike]) -> str:
    """``path`` made absolute when it is local (so a tf.data service worker with another working
    directory resolves it the same way); a remote path or ``file://`` URI unchanged."""
    path = os.fsdecode(path)
    if _SCHEME.match(path):
        return path
    return os.path.abspath(path)


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def exists(path: Union[str, bytes, os.PathLike]) -> bool:
    """Whether ``path`` (local, or on one of TensorFlow's file systems) exists."""
    path = os.fsdecode(path)
    if is_remote(path):
        import tensorflow as tf

        return bool(tf.io.gfile.exists(path))
    return os.path.exists(_local(path))


def isdir(path: Union[str, bytes, os.PathLike]) -> bool:
    """Whether ``path`` (local or remote) is a directory."""
    path = os.fsdecode(path)
    if is_remote(path):
        import tensorflow as tf

        return bool(tf.io.gfile.isdir(path))
    return os.path.isdir(_local(path))


def join(directory: str, name: str) -> str:
    """``directory/name`` for local and remote directories alike."""
    if is_remote(directory):
        return directory.rstrip("/") + "/" + name
    return os.path.join(directory, name)


def _remote_file_size(path: str, error: Type[Exception]) -> int:
    """The size of the remote regular file ``path``, from one stat (one round trip):
    ``FileNotFoundError`` when it does not exist, ``error`` when it is a directory."""
    import tensorflow as tf

    try:
        st = tf.io.gfile.stat(path)
    except tf.errors.NotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if st.is_directory:
        raise error(f"{path}: is a directory, expected a regular file")
    return int(st.length)


def file_size(path: str, error: Type[Exception] = ValueError) -> int:
    """The size of the regular file ``path``, local or remote, without opening it."""
    if is_remote(path):
        return _remote_file_size(path, error)
    st = os.stat(_local(path))
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: is {file_kind(st.st_mode)}, expected a regular file")
    return st.st_size


def check_regular_file(path: str, error: Type[Exception] = ValueError) -> None:
    """Raises ``FileNotFoundError`` when ``path`` (local or remote) does not exist, ``error`` when
    it is not a regular file (a directory; locally also a FIFO, a device, a socket)."""
    if is_remote(path):
        _remote_file_size(path, error)  # only remote paths need TensorFlow here
        return
    os.close(open_regular(_local(path), error))


def open_binary(path: str, error: Type[Exception] = ValueError) -> BinaryIO:
    """A binary file object for reading the regular file ``path``: local (see
    :func:`open_regular`) or on one of TensorFlow's file systems (``tf.io.gfile.GFile``)."""
    if is_remote(path):
        import tensorflow as tf

        check_regular_file(path, error)
        return tf.io.gfile.GFile(path, "rb")
    return os.fdopen(open_regular(_local(path), error), "rb")

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def file_kind(mode: int) -> str:
    """``"a FIFO (named pipe)"``, ``"a directory"``, ... for an ``st_mode``, for error messages."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str, error: Type[Exception] = ValueError) -> int:
    """A read-only descriptor (``O_CLOEXEC``) of the regular file ``path``; the caller closes it.

    Raises:
      FileNotFoundError / other OSError: ``path`` cannot be opened.
      error (``ValueError`` unless given): ``path`` is a FIFO, a device, a socket or a directory;
        the message names it and says what it is. Never blocks.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{path}: is {file_kind(mode)}, expected a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str, error: Type[Exception] = ValueError) -> bytes:
    """The whole contents of the regular file ``path``, local or remote (:func:`open_binary`)."""
    with open_binary(path, error) as f:
        return f.read()


_Self = TypeVar("_Self", bound="Closing")


class Closing:
    """What every reader of files is besides: a context manager whose ``with`` block ends by
    calling the reader's ``close()``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class PositionalReader(Closing):
    """Byte ranges of one regular file, local or remote, safe to share between threads.

    A local file is opened once (:func:`open_regular`: never a FIFO) and read with ``os.pread``,
    which keeps no file position; a remote one (``gs://``, ``ram://``, ...) through one
    ``tf.io.gfile.GFile``, a read at a time.
    """

    def __init__(self, path: str, error: Type[Exception] = ValueError) -> None:
        self.path = path
        self._fd: Optional[int] = None
        self._file: Any = None
        self._lock = threading.Lock()
        if is_remote(path):
            self._size = _remote_file_size(path, error)
            import tensorflow as tf

            self._file = tf.io.gfile.GFile(path, "rb")
        else:
            self._fd = open_regular(_local(path), error)

    def size(self) -> int:
        """The file's size now (local) or when it was opened (remote)."""
        if self._fd is not None:
            return os.fstat(self._fd).st_size
        return self._size

    def pread(self, size: int, offset: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer only at the end of the file)."""
        if self._fd is not None:
            return os.pread(self._fd, size, offset)
        if self._file is None:
            raise ValueError(f"{self.path}: reader is closed")
        with self._lock:
            self._file.seek(offset)
            return self._file.read(size)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        f, self._file = self._file, None
        if f is not None:
            f.close()

