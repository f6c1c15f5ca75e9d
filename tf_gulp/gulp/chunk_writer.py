"""Writing one chunk of an ingest: :class:`ChunkWriter` and the slices chunks are cut into.

The only code that puts adapter items into a :class:`~tf_gulp.gulp.GulpChunk`: both the serial
ingest and the worker processes (:mod:`tf_gulp.gulp.ingest_workers`) run it.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, List, Optional

from tf_gulp._output_errors import OutputError, is_disk_full
from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.chunk import GulpChunk, normalize_id
from tf_gulp.gulp.ingest_results import ChunkResult, IngestError, SkippedItem
from tf_gulp.gulp.video import InputError

__all__ = ["Cancelled", "ChunkWriter", "chunk_slices"]


def chunk_slices(videos_per_chunk: int, num_videos: int) -> List[slice]:
    """Split ``range(num_videos)`` into consecutive slices of ``videos_per_chunk`` (the last one
    may be shorter)."""
    if videos_per_chunk < 1:
        raise ValueError(f"videos_per_chunk must be >= 1, got {videos_per_chunk}")
    return [slice(start, min(start + videos_per_chunk, num_videos))
            for start in range(0, num_videos, videos_per_chunk)]


class Cancelled(Exception):
    """Raised inside a worker to drop its chunk when the ingest is stopping."""


class ChunkWriter:
    """Writes the adapter items of one slice into one chunk.

    Args:
        adapter: the source of items.
        skip_bad: leave out items that fail (recorded in :attr:`ChunkResult.skipped`) instead of
            raising :class:`IngestError`. An adapter whose ``iter_data`` raises is restarted at the
            next index (``iter_data(slice(next, stop))``), so this needs an adapter that yields one
            item per index, as the contract says.
        on_item: called as ``on_item(frames, bytes)`` after each item is written.
        stop_event: an ``Event``; when set, the chunk being written is dropped at the next item.
        skip_empty: an item without frames is left out with gulpio2's message on stdout
            (``Failed to write video with id: <id>; no frames``) and listed in
            :attr:`ChunkResult.skipped` (default, gulpio2's behaviour); with ``False`` it is a
            failed item like any other (``tf-gulp ingest``: an error unless ``skip_bad``).
    """

    def __init__(self, adapter: AbstractDatasetAdapter, skip_bad: bool = False,
                 on_item: Optional[Callable[[int, int], None]] = None,
                 stop_event: Any = None, *, skip_empty: bool = True) -> None:
        self.adapter = adapter
        self.skip_bad = skip_bad
        self.on_item = on_item
        self.stop_event = stop_event
        self.skip_empty = skip_empty

    def write_chunk(self, output_chunk: GulpChunk, input_slice: Optional[slice]) -> int:
        """Write ``adapter.iter_data(input_slice)`` into ``output_chunk`` (replacing it if it
        exists; published only once complete, see :class:`GulpChunk`). Returns the number of
        items written."""
        return self.write(output_chunk, input_slice).items

    def _source(self, index: int, error: BaseException) -> Optional[str]:
        path = getattr(error, "path", None)
        if isinstance(error, InputError) or path:
            return path
        item_source = getattr(self.adapter, "item_source", None)
        if item_source is not None:
            with contextlib.suppress(Exception):
                return item_source(index)
        return None

    def _bad(self, result: ChunkResult, index: int, id_: Optional[str],
             error: BaseException) -> None:
        if isinstance(error, OutputError) or is_disk_full(error):
            # The output failed (or a full disk, whoever met it): not this item's fault, never
            # skipped or reported as a bad input. The chunk is dropped; the ingest stops.
            raise error
        reason = error.reason if isinstance(error, InputError) else (
            str(error) or type(error).__name__)
        if not isinstance(error, (InputError, IngestError)):
            reason = f"{type(error).__name__}: {reason}"
        if id_ is None:
            with contextlib.suppress(Exception):
                if hasattr(self.adapter, "item_id"):
                    id_ = normalize_id(self.adapter.item_id(index))
                elif hasattr(self.adapter, "item_ids"):
                    id_ = normalize_id(self.adapter.item_ids()[index])
        skipped = SkippedItem(index, id_, self._source(index, error), reason)
        if not self.skip_bad:
            raise IngestError(skipped.index, skipped.id, skipped.source, skipped.reason) \
                from error
        result.skipped.append(skipped)

    def write(self, output_chunk: GulpChunk, input_slice: Optional[slice]) -> ChunkResult:
        """Like :meth:`write_chunk`, returning a :class:`ChunkResult`."""
        result = ChunkResult()
        indices = range(len(self.adapter))[input_slice or slice(None)]
        with output_chunk.open("wb"):
            position = 0  # within indices
            items = iter(self.adapter.iter_data(input_slice))
            while True:
                if self.stop_event is not None and self.stop_event.is_set():
                    raise Cancelled()
                index = indices[position] if position < len(indices) else \
                    (indices.start + position * indices.step)
                try:
                    item = next(items)
                except StopIteration:
                    break
                except Exception as e:  # the adapter failed to produce item `index`
                    self._bad(result, index, None, e)
                    position += 1
                    if position >= len(indices) or indices.step != 1:
                        break
                    items = iter(self.adapter.iter_data(slice(indices[position], indices.stop)))
                    continue
                position += 1
                id_ = None
                try:
                    id_ = normalize_id(item["id"])
                    if id_ in output_chunk:
                        raise ValueError(f"id {id_!r} appears twice")
                    frames = list(item["frames"])
                    if not frames and self.skip_empty:
                        # gulpio2's message, on stdout as gulpio2 prints it.
                        print(f"Failed to write video with id: {item['id']}; no frames")
                        result.skipped.append(SkippedItem(index, id_, None, "no frames"))
                        continue
                    if not frames:
                        raise ValueError("no frames")
                    # The id as the adapter gave it: append stores str(id), as gulpio2.
                    output_chunk.append(item["id"], item["meta"], frames)
                except Exception as e:
                    self._bad(result, index, id_, e)
                    continue
                infos = output_chunk.meta_dict[id_]["frame_info"]
                size = sum(info[2] for info in infos)
                result.items += 1
                result.frames += len(frames)
                result.bytes += size
                if self.on_item is not None:
                    self.on_item(len(frames), size)
        return result
