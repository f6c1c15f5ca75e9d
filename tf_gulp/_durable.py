"""Durable writes, written once for every writer (gulp chunks, the ingest record, label maps,
FFRecord files, Benzina containers and their parts).

A file is written under a temporary name, fsynced, renamed into place, and then its directory is
fsynced: after a crash a reader finds the old file or the whole new one, and a rename that was
reported done is not undone by the crash (the rename lives in the directory, which an fsync of the
file does not flush).
"""

from __future__ import annotations

import contextlib
import os
from typing import Optional

from tf_gulp._output_errors import writing_output

__all__ = ["fsync_dir", "replace_durably", "write_atomically"]


def fsync_dir(path: str) -> None:
    """fsync the directory ``path`` ("" is the working directory), so that renames and unlinks in
    it are durable."""
    fd = os.open(path or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(tmp: str, path: str) -> None:
    """Renames the written and fsynced ``tmp`` to ``path`` and fsyncs the directory of ``path``."""
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def write_atomically(path: str, data: bytes, tmp: Optional[str] = None) -> None:
    """``data`` into ``tmp`` (default ``path + ".tmp"``), fsynced, renamed to ``path``, the
    directory fsynced, so that a reader sees the old file or the whole new one. A failed write is
    an :class:`~tf_gulp._output_errors.OutputError` naming ``path`` and leaves ``path`` as it was
    and no temporary file."""
    tmp = tmp or path + ".tmp"
    with writing_output(path):
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            replace_durably(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
