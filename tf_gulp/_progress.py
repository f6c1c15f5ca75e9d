"""Progress bars that draw only on a terminal, in Python and in the CLI alike."""

from __future__ import annotations

from typing import Any, Optional


def tqdm_disable(progress: bool) -> Optional[bool]:
    """tqdm's ``disable=`` for a bar ``progress`` asks for: None (tqdm draws it only when its
    stream is a terminal, so a log file or a notebook's captured stderr gets no bar lines), True
    when no bar is wanted."""
    return None if progress else True


def progress_bar(progress: bool, **kwargs: Any) -> Any:
    """A tqdm bar (to stderr) shown only when ``progress`` and stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(disable=tqdm_disable(progress), **kwargs)
