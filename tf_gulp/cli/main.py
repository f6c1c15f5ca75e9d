"""``tf-gulp``: build, check and inspect datasets for tf_gulp.

Commands are registered by the modules in :data:`COMMAND_MODULES`; each defines
``register(subparsers)``, which adds its parser(s) and sets ``func`` (called with the parsed
arguments; returns the exit code). A new format adds its module to the list, e.g.
``tf_gulp.cli.ffrecord`` for ``tf-gulp ffrecord ...``.
"""

from __future__ import annotations

import importlib
import signal
import sys
from typing import List, Optional, Sequence

from tf_gulp import __version__
from tf_gulp._runtime_libs import explain_load_error
from tf_gulp.cli._common import CommandError, HelpFormatter, Parser, UsageError

#: The command modules, in the order ``tf-gulp --help`` lists them.
COMMAND_MODULES: List[str] = [
    "tf_gulp.cli.ingest",
    "tf_gulp.cli.check",
    "tf_gulp.cli.info",
    "tf_gulp.cli.bzna",
]

DESCRIPTION = """\
Build, check and inspect datasets for tf_gulp.

  tf-gulp ingest video-folder ~/videos ~/videos_gulp     # gulp a folder of class folders
  tf-gulp check ~/videos_gulp --decode                    # verify every chunk and frame
  tf-gulp info ~/videos_gulp                              # items, frames, sizes, labels

Run 'tf-gulp COMMAND --help' for a command's options.
"""


def build_parser() -> Parser:
    parser = Parser(prog="tf-gulp", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"tf-gulp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``tf-gulp`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = f"tf-gulp {args.command}"
    # SIGTERM stops like Ctrl-C: the chunk being written is dropped, the rest kept.
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    except CommandError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        # A broken installation (a runtime library missing): one line naming what to install.
        print(f"{prog}: error: {explain_load_error(str(e), 'tf_gulp') or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = getattr(args, "interrupt_hint", "")
        print(f"{prog}: interrupted{hint}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. tf-gulp info | head
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
