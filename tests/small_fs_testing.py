"""A small file system for tests of what writers do when the output fails (a helper module).

:class:`SmallFileSystem` gives a test a folder where writes fail once a few bytes are used, and
runs the workload (``tf-gulp ...`` or Python code) in a child process against it:

* where this machine allows it (root with ``CAP_SYS_ADMIN``: a developer machine, a CI VM), a
  **tmpfs** of ``size`` bytes mounted on the folder: writes fail with ``ENOSPC`` once it is full,
  just as on a full disk; :meth:`grow` frees space (remounts it larger), :meth:`make_read_only`
  remounts it read-only (``EROFS``);
* elsewhere (a container without mount rights, Bazel's sandbox), the ordinary file system with the
  child process under ``RLIMIT_FSIZE = size`` (``SIGXFSZ`` ignored): a write past ``size`` bytes
  of a file fails with ``EFBIG``; :meth:`grow` lifts the limit, and :meth:`make_read_only` takes
  write permission away from the folder (a child of root first drops the capabilities that let
  root ignore permission bits, ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``, from its bounding
  set, so the ``tf-gulp`` it runs meets ``EACCES`` like any user).

Either way the writer meets a real failed ``write(2)`` from the kernel, in a real process, and the
test checks the same things: :attr:`strerror` is what the failure says. ``TF_GULP_TEST_NO_MOUNT=1``
forces the second way (to test it on a machine that can mount).
"""

from __future__ import annotations

import errno
import os
import pathlib
import ctypes
import resource
import shutil
import signal
import stat
import subprocess
import sys
from typing import Any, List, Optional

from ingest_testing import REPO_ROOT, cli_command, cli_env


def _mount(*args: str) -> bool:
    try:
        return subprocess.run(["mount", *args], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class SmallFileSystem:
    """``root`` (created) on a file system with room for about ``size`` bytes (a tmpfs), or where
    no file may grow past ``file_limit`` bytes (default ``size``; RLIMIT_FSIZE): see the module
    docstring. Use as a context manager (the tmpfs is unmounted at the end)."""

    def __init__(self, root: Any, size: int, file_limit: Optional[int] = None) -> None:
        self.root = pathlib.Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.size = int(size)
        self.limit: Optional[int] = None
        self.drop_dac = False
        mounted = (os.environ.get("TF_GULP_TEST_NO_MOUNT") != "1"
                   and _mount("-t", "tmpfs", "-o", f"size={self.size},mode=0755", "tmpfs",
                              str(self.root)))
        if mounted:
            self.kind = "tmpfs"
            self.errno = errno.ENOSPC
        else:
            self.kind = "rlimit"
            self.errno = errno.EFBIG
            self.limit = int(file_limit or size)
        self.strerror = os.strerror(self.errno)

    def __enter__(self) -> "SmallFileSystem":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.kind == "tmpfs":
            subprocess.run(["umount", "-l", str(self.root)], capture_output=True, timeout=30)
            self.kind = "closed"
        elif self.kind == "rlimit":
            _make_writable(self.root)

    def grow(self) -> None:
        """Make room: what failed for lack of space now fits."""
        if self.kind == "tmpfs":
            assert _mount("-o", "remount,size=256m", str(self.root)), "tmpfs remount failed"
        else:
            self.limit = None

    def make_read_only(self) -> None:
        """Writes into the folder now fail (EROFS on the tmpfs, else EACCES)."""
        if self.kind == "tmpfs":
            assert _mount("-o", "remount,ro", str(self.root)), "tmpfs remount failed"
            self.errno = errno.EROFS
        else:
            self.limit = None
            for dirpath, dirnames, _files in os.walk(self.root):
                for name in [dirpath] + [os.path.join(dirpath, d) for d in dirnames]:
                    os.chmod(name, stat.S_IMODE(os.stat(name).st_mode) & ~0o222)
            self.drop_dac = os.geteuid() == 0
            self.errno = errno.EACCES
        self.strerror = os.strerror(self.errno)

    def _preexec(self) -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG, no signal
        if self.limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.limit, self.limit))
        if self.drop_dac:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_capbset_drop, cap_dac_override, cap_dac_read_search = 24, 1, 2
            for cap in (cap_dac_override, cap_dac_read_search):
                if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

    def run(self, argv: List[str], timeout: float = 300) -> subprocess.CompletedProcess:
        """Run ``argv`` (a child process) under this file system's limits."""
        env = cli_env()
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=str(REPO_ROOT), preexec_fn=self._preexec)

    def run_cli(self, *args: Any, timeout: float = 300) -> subprocess.CompletedProcess:
        """``tf-gulp ARGS`` in a child process under this file system's limits."""
        return self.run(cli_command(*args), timeout=timeout)

    def run_python(self, code: str, *args: Any,
                   timeout: float = 300) -> subprocess.CompletedProcess:
        """Python ``code`` (its ``sys.argv[1:]`` are ``args``) in a child process."""
        return self.run([sys.executable, "-c", code] + [os.fspath(a) for a in args],
                        timeout=timeout)

    def leftovers(self) -> List[str]:
        """Temporary files and folders anywhere under the folder (relative paths)."""
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                if ".tmp" in name or ".tf_gulp_new." in name:
                    found.append(os.path.relpath(os.path.join(dirpath, name), self.root))
        return sorted(found)


def _make_writable(root: pathlib.Path) -> None:
    for dirpath, dirnames, _files in os.walk(root):
        for name in [dirpath] + [os.path.join(dirpath, d) for d in dirnames]:
            os.chmod(name, stat.S_IMODE(os.stat(name).st_mode) | 0o200)


def no_traceback(text: str) -> bool:
    return "Traceback" not in text


def clear(root: Any) -> None:
    """Remove everything in ``root`` (not ``root``: it may be a mount point)."""
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
