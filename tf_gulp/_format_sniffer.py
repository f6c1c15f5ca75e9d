"""The format sniffer of the C++ core (cc/io/format_sniffer.h) for Python's own checks, which
refuse a path before any reader opens it: they name what the path is and what reads it, as every
reader does."""

from __future__ import annotations

import os
from typing import Optional


def wrong_reader_message(path: str, reader_wants: str, reads: str) -> Optional[str]:
    """``"<path> is <what it is>, not <reader_wants>: <what reads it>"`` when the sniffer knows
    `path` as a format other than `reads` (its name, e.g. ``"a gulp directory"``), else None."""
    from tf_gulp._runtime_libs import import_core  # the one accessor of tf_gulp._core

    name, advice = import_core().sniff_path(os.fspath(path))
    if not advice or name == reads:
        return None
    return f"{path} is {name}, not {reader_wants}: {advice}"
