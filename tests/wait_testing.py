"""Waiting for a state instead of sleeping for a time: a test that sleeps and then asserts is
flaky on a loaded machine and slow on an idle one. `wait_for` polls a condition until it holds,
with a generous limit that only a broken program reaches (then the test fails, naming what it
waited for)."""

from __future__ import annotations

import time
from typing import Callable

# Generous: reached only when the awaited state never comes, not on a slow or shared machine.
DEFAULT_TIMEOUT_S = 120.0


def wait_for(condition: Callable[[], bool], what: str, timeout: float = DEFAULT_TIMEOUT_S,
             poll: float = 0.005) -> None:
    """Returns as soon as `condition()` is true; AssertionError naming `what` after `timeout`
    seconds without it."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(poll)
