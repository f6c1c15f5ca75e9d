"""``checkFsAlign``: the reference's probe for HFAi's file system (3FS), for code that calls it.

The reference asks the file system, with one ioctl, whether ``O_DIRECT`` reads need no alignment
there. Only HFAi's 3FS answers that ioctl; every other file system refuses it, so the answer is
``False`` (as the reference's). Nothing in tf_gulp uses the answer: its readers work on any file
system.
"""

from __future__ import annotations

import errno
import fcntl
import struct
from typing import Any

__all__ = ["checkFsAlign"]

# _IOR('f', 100, int): the request number HFAi's reference issues (read-only: the kernel only
# writes the 4-byte answer into our buffer).
_FS_IOCNUM_CHECK_FS_ALIGN = 2147772004


def checkFsAlign(fd: Any) -> bool:  # noqa: N802 - the reference's name
    """Whether the file system of the open file ``fd`` (an int, or an object with ``fileno()``)
    says it is aligned (HFAi's 3FS); ``False`` on every other file system. Unlike the reference,
    a descriptor that is not open raises OSError (EBADF) instead of answering ``False``."""
    if not isinstance(fd, int):
        fd = fd.fileno()
    buf = bytearray(4)
    try:
        fcntl.ioctl(fd, _FS_IOCNUM_CHECK_FS_ALIGN, buf)
    except OSError as e:
        if e.errno == errno.EBADF:  # not an open file: a caller's mistake, not an answer
            raise OSError(e.errno, f"checkFsAlign: {fd} is not an open file descriptor") from None
        return False
    return struct.unpack("i", bytes(buf))[0] == 1
