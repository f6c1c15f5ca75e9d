"""An exclusive lock on an ingest's output folder, so two ingests never write into it at once."""

from __future__ import annotations

import errno
import os
from typing import Any, Optional

from tf_gulp.gulp.ingest_results import IngestStateError

__all__ = ["DirectoryLock"]


class DirectoryLock:
    """An exclusive ``flock`` on the output folder for the duration of an ingest."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.fd: Optional[int] = None

    def __enter__(self) -> "DirectoryLock":
        import fcntl
        self.fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                          | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(self.fd)
            self.fd = None
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise IngestStateError(f"{self.folder}: another ingest is writing to this folder "
                                       "right now") from None
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None
