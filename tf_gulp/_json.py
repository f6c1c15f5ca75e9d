"""JSON from files with a bounded parser: nesting deeper than the interpreter allows is a
``ValueError``, never a ``RecursionError`` (the C++ core's limits are ``cc/util/json_text.h``'s)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads_json"]


def loads_json(data: Any, **kwargs: Any) -> Any:
    """``json.loads(data, **kwargs)``, raising ``ValueError`` (not ``RecursionError``) for input
    nested deeper than the interpreter's recursion limit allows (e.g. ``[[[[...`` 300,000 deep).

    Python's JSON parser recurses once per nesting level, and every level is counted against
    ``sys.getrecursionlimit()``: the depth it reaches is bounded by that limit, not by the input.
    """
    try:
        return json.loads(data, **kwargs)
    except RecursionError:
        raise ValueError("JSON nested too deeply (more levels than Python's recursion limit "
                         "allows)") from None
