"""Progress bars that draw only on a terminal, in Python and in the CLI alike."""

from __future__ import annotations

from typing import Any, Optional

# Set by the command line's --progress ("show the progress bar even when stderr is not a
# terminal"): the one way to draw bars into a file.
_forced = False


def force_progress_bars(on: bool = True) -> None:
    """Draw the bars that are asked for even when their stream is not a terminal (`--progress`),
    or (``on=False``) only on a terminal again."""
    global _forced
    _forced = bool(on)


def tqdm_disable(progress: bool) -> Optional[bool]:
    """tqdm's ``disable=`` for a bar ``progress`` asks for: None (tqdm draws it only when its
    stream is a terminal, so a log file or a notebook's captured stderr gets no bar lines), False
    after :func:`force_progress_bars`, True when no bar is wanted."""
    if not progress:
        return True
    return False if _forced else None


def progress_bar(progress: bool, always: bool = False, **kwargs: Any) -> Any:
    """A tqdm bar (to stderr) shown only when ``progress`` and stderr is a terminal; ``always``
    draws it anyway, for a bar asked for by name where the default is none (``dump(...,
    verbose=True)``, as the reference draws it)."""
    from tqdm import tqdm

    return tqdm(disable=False if (progress and always) else tqdm_disable(progress), **kwargs)
