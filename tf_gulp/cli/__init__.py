"""The ``tf-gulp`` command line tool (``tf_gulp.cli.main:main``).

Each command group is a module here with a ``register(subparsers)`` function; :mod:`main` lists
them in ``COMMAND_MODULES``. A command reports a user mistake by raising :class:`UsageError` (exit
code 2) and a failure of the work itself by raising :class:`CommandError` (exit code 1); both print
one line, no traceback.
"""

from tf_gulp.cli._common import CommandError, UsageError

__all__ = ["CommandError", "UsageError"]
