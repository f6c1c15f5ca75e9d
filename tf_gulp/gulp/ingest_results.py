"""What an ingest reports: its errors (:class:`IngestError`, :class:`IngestStateError`) and results
(:class:`SkippedItem`, :class:`ChunkResult`, :class:`IngestSummary`).

Kept apart from the code that writes, so the chunk writer, the worker pool and the ingest record
share them without importing each other.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["ChunkResult", "IngestError", "IngestStateError", "IngestSummary", "SkippedItem"]


class IngestError(RuntimeError):
    """One item of the adapter could not be ingested.

    Attributes: ``index`` (the item's index in the adapter), ``id`` (None when the adapter failed
    before yielding it), ``source`` (its file, when known), ``reason``.
    """

    def __init__(self, index: int, id_: Optional[str], source: Optional[str],
                 reason: str) -> None:
        self.index = index
        self.id = id_
        self.source = source
        self.reason = reason
        what = f"item {index}" + (f" (id {id_!r})" if id_ is not None else "")
        super().__init__(f"{source}: {reason} [{what}]" if source else f"{what}: {reason}")

    def __reduce__(self) -> Tuple[Any, ...]:
        return (IngestError, (self.index, self.id, self.source, self.reason))


class IngestStateError(Exception):
    """The output folder's state does not allow this ingest (another ingest's leftovers, a
    different interrupted ingest, ids already present, a lock held by another process)."""


@dataclasses.dataclass
class SkippedItem:
    """An item left out by ``skip_bad``."""

    index: int
    id: Optional[str]
    source: Optional[str]
    reason: str

    def to_json(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SkippedItem":
        return cls(int(d["index"]), d.get("id"), d.get("source"), str(d.get("reason", "")))


@dataclasses.dataclass
class ChunkResult:
    """What :meth:`ChunkWriter.write` put into one chunk."""

    items: int = 0
    frames: int = 0
    bytes: int = 0
    skipped: List[SkippedItem] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class IngestSummary:
    """The outcome of :class:`GulpIngestor` (returned by calling it)."""

    output_folder: str
    status: str                 # "complete" or "already complete"
    items: int = 0              # written by this call
    frames: int = 0
    bytes: int = 0
    chunks_written: int = 0
    chunks_total: int = 0       # chunks of this ingest run
    chunks_resumed: int = 0     # chunks that were already complete when this call started
    first_chunk: int = 0
    seconds: float = 0.0
    skipped: List[SkippedItem] = dataclasses.field(default_factory=list)

    @property
    def frames_per_second(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0
