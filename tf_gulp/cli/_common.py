"""Shared pieces of the ``tf-gulp`` commands."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn, Optional

from tf_gulp._args import cli_int


class UsageError(Exception):
    """A user mistake (bad option, missing input, refused output): one line, exit code 2."""


class CommandError(Exception):
    """The command ran but failed (bad input data, failed check): one line, exit code 1."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``tf-gulp ingest: error: ... (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's line breaks; shows defaults written in the help text only."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=min(100, _terminal_width()))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 100


def usable_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: argparse ``type=`` for a count of at least 1 (the flag is named in the error).
positive_int = cli_int(1)


def progress_wanted(flag: Optional[bool]) -> bool:
    """``--progress`` / ``--no-progress``, else only when stderr is a terminal (the Python API's
    default too: tf_gulp/_progress.py)."""
    from tf_gulp._progress import force_progress_bars

    force_progress_bars(bool(flag))  # asked for by name: drawn even into a file
    if flag is not None:
        return flag
    return sys.stderr.isatty()


def add_progress_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show the progress bar even when stderr is not a terminal")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bar")


def echo(*args: Any) -> None:
    print(*args, flush=True)


def require_local(path: str, command: str) -> None:
    """UsageError for a path of one of TensorFlow's file systems (gs://, ram://, ...): the
    command writes local directories only (a crash-safe write needs fsync and rename)."""
    from tf_gulp._files import is_remote

    if is_remote(path):
        raise UsageError(f"{path}: tf-gulp {command} writes to local directories only (a "
                         f"crash-safe write needs fsync and rename); write locally, then copy "
                         f"the directory (see docs/distributed.md)")
