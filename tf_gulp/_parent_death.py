"""Worker processes that end with their parent.

A ``ProcessPoolExecutor`` worker outlives a parent killed with SIGKILL: it goes on with the tasks
already queued to it (and writes their output) before it notices. :func:`end_with_parent`, run as a
pool's ``initializer`` with the parent's pid, asks Linux to SIGKILL the worker when the parent ends
(``prctl(PR_SET_PDEATHSIG)``), and :func:`parent_alive` lets a task check before it writes
anything, which also covers systems without ``prctl`` and workers started by a fork server
(Python 3.14's default start method on Linux), whose parent is the server, not the pool's owner.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
from typing import Optional

__all__ = ["end_with_parent", "parent_alive"]

_PR_SET_PDEATHSIG = 1
_parent_pid: Optional[int] = None
_direct_child = False  # started by the parent itself (fork, spawn), not by a fork server


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (an exited, unreaped one is a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: whether the pid exists at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def end_with_parent(parent_pid: int) -> None:
    """In a worker: be killed (SIGKILL) when the process ``parent_pid`` ends, when it is this
    process's parent; exit now if it has already ended (it may die between the start of this
    process and this call, before the request is in place)."""
    global _parent_pid, _direct_child
    _parent_pid = parent_pid
    _direct_child = os.getppid() == parent_pid
    if _direct_child:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # not Linux: parent_alive() is the guard left
            pass
    if not parent_alive():
        os._exit(1)


def parent_alive() -> bool:
    """False in a worker whose parent (given to :func:`end_with_parent`) has ended."""
    if _parent_pid is None:
        return True
    if _direct_child:  # an orphan is given another parent at once, even while its old one is
        return os.getppid() == _parent_pid  # a zombie
    return _running(_parent_pid)
