"""Worker processes that end with their parent.

A ``ProcessPoolExecutor`` worker outlives a parent killed with SIGKILL: it goes on with the tasks
already queued to it (and writes their output) before it notices. :func:`end_with_parent`, run as a
pool's ``initializer`` with the parent's pid, asks Linux to SIGKILL the worker when the parent ends
(``prctl(PR_SET_PDEATHSIG)``), and :func:`parent_alive` lets a task check before it writes
anything, which also covers systems without ``prctl``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

__all__ = ["end_with_parent", "parent_alive"]

_PR_SET_PDEATHSIG = 1
_parent_pid = None


def end_with_parent(parent_pid: int) -> None:
    """In a worker: be killed (SIGKILL) when the process ``parent_pid`` ends; exit now if it has
    already ended (it may die between the fork and this call, before the request is in place)."""
    global _parent_pid
    _parent_pid = parent_pid
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: parent_alive() is the guard left
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def parent_alive() -> bool:
    """False in a worker whose parent (given to :func:`end_with_parent`) has ended."""
    return _parent_pid is None or os.getppid() == _parent_pid
