"""The ingest's progress display: a tqdm bar of items with frames/s, fed here or by workers."""

from __future__ import annotations

import queue as queue_module
import time
from typing import Any

from tqdm import tqdm

__all__ = ["Meter"]


class Meter:
    """Progress: items on the bar, frames/s as its postfix."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar
        self.frames = 0
        self.started = time.monotonic()
        self.last_postfix = 0.0

    def item(self, frames: int, size: int) -> None:
        self.frames += frames
        self.bar.update(1)
        self._postfix()

    def _postfix(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.bar.disable or (not force and now - self.last_postfix < 0.5):
            return
        self.last_postfix = now
        rate = self.frames / max(now - self.started, 1e-9)
        self.bar.set_postfix_str(f"{rate:,.0f} frames/s", refresh=False)

    def drain(self, progress: Any) -> None:
        items = 0
        while True:
            try:
                frames, _size = progress.get_nowait()
            except (queue_module.Empty, OSError, ValueError, EOFError):
                break
            items += 1
            self.frames += frames
        if items:
            self.bar.update(items)
            self._postfix()

    def close(self) -> None:
        self._postfix(force=True)
        self.bar.close()
