"""Errors of the output side: a full disk, a quota, a read-only file system, no permission.

A writer (``tf-gulp ingest``, ``tf-gulp bzna create``, ``tf_gulp.ffrecord.dump``) that fails to
write its output must say so, naming the output and what to do, and must never take it for a fault
of the input it was reading (an ingest that counted a full disk as a bad video would tell the user
to fix or remove a good file, or with ``--skip-bad`` leave good videos out).

:class:`OutputError` is that error: an ``OSError`` (same ``errno``) raised where the output is
written, by :func:`writing_output` around the writes. Code that judges inputs (the ingest's chunk
writer) lets it through instead of counting a bad item.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from typing import Iterator, Optional, Tuple, Union

__all__ = ["OutputError", "advice_for", "is_disk_full", "output_error", "writing_output"]

#: errnos that mean the output's file system has no room for what is written.
DISK_FULL_ERRNOS = frozenset(e for e in (errno.ENOSPC, getattr(errno, "EDQUOT", None),
                                         errno.EFBIG) if e is not None)
_NO_PERMISSION = frozenset((errno.EACCES, errno.EPERM))
# The temporary names the writers use: x.tmp, x.tmp-abcd1234 (FFRecord), x.tmp.<pid> (bzna parts).
_TMP_SUFFIX = re.compile(r"\.tmp(?:[.-][A-Za-z0-9_]+)?$")


def advice_for(err: Optional[int]) -> str:
    """What a user can do about output errno ``err``."""
    if err == errno.ENOSPC:
        return "free space on that file system, or choose another output"
    if err == getattr(errno, "EDQUOT", None):
        return "free space within your disk quota (or have it raised), or choose another output"
    if err == errno.EFBIG:
        return ("the file is over the file size limit (ulimit -f) or the file system's largest "
                "file: raise the limit, or choose another output")
    if err == errno.EROFS:
        return "that file system is mounted read-only: choose another output"
    if err in _NO_PERMISSION:
        return "fix the permissions of the output folder, or choose another output"
    return "check the output's file system, or choose another output"


class OutputError(OSError):
    """Writing the output failed: ``path`` (the file or folder being written) could not be written
    because of ``errno`` (``ENOSPC``, ``EDQUOT``, ``EROFS``, ``EACCES``, ...): not the input's
    fault.

    ``str()`` is one line naming the path, the reason and what to do, plus ``hint`` when given
    (e.g. how to resume).
    """

    def __init__(self, err: Optional[int], reason: str, path: str, hint: str = "") -> None:
        super().__init__(err, reason)
        self.path = path
        self.hint = hint

    def __str__(self) -> str:
        text = f"cannot write the output {self.path}: {self.strerror}; {advice_for(self.errno)}"
        return f"{text}; {self.hint}" if self.hint else text

    def __reduce__(self) -> Tuple[type, Tuple[Optional[int], str, str, str]]:
        # Crosses process boundaries (ingest workers, bzna create's encoders) intact.
        return (OutputError, (self.errno, self.strerror, self.path, self.hint))


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says a file system is full (``ENOSPC``, ``EDQUOT``, ``EFBIG``): never the
    fault of the input being read, whatever raised it."""
    return isinstance(error, OSError) and error.errno in DISK_FULL_ERRNOS


def _strip_tmp(path: str) -> str:
    """The name a temporary file is published under (``x.gulp.tmp`` -> ``x.gulp``): the user
    knows the output's names, not its temporary ones."""
    return _TMP_SUFFIX.sub("", path) or path


def output_error(error: OSError, path: Union[str, os.PathLike], hint: str = "") -> OutputError:
    """``error`` (raised while writing ``path``) as an :class:`OutputError`; one already is one
    passes through."""
    if isinstance(error, OutputError):
        return error
    # os.strerror: an error from the C++ writer carries its own message (the temporary name).
    reason = os.strerror(error.errno) if error.errno else (str(error) or type(error).__name__)
    return OutputError(error.errno, reason, _strip_tmp(os.fspath(path)), hint)


@contextlib.contextmanager
def writing_output(path: Union[str, os.PathLike], hint: str = "") -> Iterator[None]:
    """Turns an ``OSError`` raised inside the block into an :class:`OutputError` naming ``path``."""
    try:
        yield
    except OutputError:
        raise
    except OSError as e:
        raise output_error(e, path, hint) from e
