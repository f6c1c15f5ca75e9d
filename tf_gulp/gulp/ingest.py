"""Writing gulp directories from an adapter: :class:`ChunkWriter` and :class:`GulpIngestor`."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

from tqdm import tqdm

from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.chunk import GulpChunk
from tf_gulp.gulp.directory import chunk_file_names, list_chunk_files, next_chunk_number

__all__ = ["ChunkWriter", "GulpIngestor", "chunk_slices"]

_IF_EXISTS = ("error", "append")


def chunk_slices(videos_per_chunk: int, num_videos: int) -> List[slice]:
    """Split ``range(num_videos)`` into consecutive slices of ``videos_per_chunk`` (the last one
    may be shorter)."""
    if videos_per_chunk < 1:
        raise ValueError(f"videos_per_chunk must be >= 1, got {videos_per_chunk}")
    return [slice(start, min(start + videos_per_chunk, num_videos))
            for start in range(0, num_videos, videos_per_chunk)]


class ChunkWriter:
    """Writes the adapter items of one slice into one chunk."""

    def __init__(self, adapter: AbstractDatasetAdapter) -> None:
        self.adapter = adapter

    def write_chunk(self, output_chunk: GulpChunk, input_slice: Optional[slice]) -> int:
        """Write ``adapter.iter_data(input_slice)`` into ``output_chunk`` (replacing it if it
        exists; published only once complete, see :class:`GulpChunk`). Returns the number of
        items."""
        count = 0
        with output_chunk.open("wb"):
            for item in self.adapter.iter_data(input_slice):
                output_chunk.append(item["id"], item["meta"], item["frames"])
                count += 1
        return count


# Worker-process state: the adapter is sent once per worker, not once per chunk.
_worker_writer: Optional[ChunkWriter] = None


def _init_worker(adapter: AbstractDatasetAdapter) -> None:
    global _worker_writer
    _worker_writer = ChunkWriter(adapter)


def _write_in_worker(chunk: GulpChunk, input_slice: slice) -> int:
    assert _worker_writer is not None
    return _worker_writer.write_chunk(chunk, input_slice)


class GulpIngestor:
    """Write a whole adapter into ``output_folder`` as chunks ``data_<N>.gulp`` / ``meta_<N>.gmeta``
    of ``videos_per_chunk`` items each, N counting from 0.

    With ``num_workers > 1`` chunks are written in parallel by a process pool (so the adapter must
    be picklable); with 0 or 1 they are written in this process. Each chunk appears only once
    complete, so an interrupted ingest leaves complete chunks and at most some ``*.tmp`` files.

    An output folder that already holds chunk files (complete or not) is refused with
    FileExistsError, unless ``if_exists="append"``: then the new chunks are numbered after the
    existing ones, which gulpio2 does silently. Appended items must not reuse existing ids.

    Args:
        adapter: the source of items (:class:`AbstractDatasetAdapter`).
        output_folder: created if it does not exist.
        videos_per_chunk: items per chunk.
        num_workers: processes writing chunks in parallel.
        if_exists: ``"error"`` (default) or ``"append"``, see above.
        jpeg_quality, jpeg_subsampling: JPEG settings of the chunks (see :class:`GulpChunk`).
        progress: show a tqdm progress bar (one step per chunk).
        mp_context: multiprocessing start method or context for the pool (default: the platform's).
    """

    def __init__(self, adapter: AbstractDatasetAdapter, output_folder: Union[str, os.PathLike],
                 videos_per_chunk: int, num_workers: int, *, if_exists: str = "error",
                 jpeg_quality: int = 90, jpeg_subsampling: str = "444", progress: bool = True,
                 mp_context: Union[None, str, Any] = None) -> None:
        if if_exists not in _IF_EXISTS:
            raise ValueError(f"if_exists must be one of {_IF_EXISTS}, got {if_exists!r}")
        if videos_per_chunk < 1:
            raise ValueError(f"videos_per_chunk must be >= 1, got {videos_per_chunk}")
        self.adapter = adapter
        self.output_folder = os.fspath(output_folder)
        self.videos_per_chunk = int(videos_per_chunk)
        self.num_workers = int(num_workers)
        self.if_exists = if_exists
        self.jpeg_quality = jpeg_quality
        self.jpeg_subsampling = jpeg_subsampling
        self.progress = progress
        self.mp_context = mp_context

    def _plan(self) -> List[Tuple[GulpChunk, slice]]:
        """The (chunk, adapter slice) pairs to write. (Resuming an interrupted ingest will filter
        this plan; it numbers chunks deterministically from the slices.)"""
        existing = list_chunk_files(self.output_folder)
        if existing and self.if_exists == "error":
            shown = ", ".join(existing[:4]) + (", ..." if len(existing) > 4 else "")
            raise FileExistsError(
                f"{self.output_folder} already holds gulp chunk files ({len(existing)}: {shown}); "
                "refusing to mix a new dataset into it. Use an empty folder, delete them, or pass "
                "if_exists='append' to add new chunks after the existing ones.")
        slices = chunk_slices(self.videos_per_chunk, len(self.adapter))
        start = next_chunk_number(self.output_folder)
        plan = []
        for n, input_slice in enumerate(slices, start):
            data_name, meta_name = chunk_file_names(n)
            chunk = GulpChunk(os.path.join(self.output_folder, data_name),
                              os.path.join(self.output_folder, meta_name),
                              jpeg_quality=self.jpeg_quality,
                              jpeg_subsampling=self.jpeg_subsampling)
            plan.append((chunk, input_slice))
        return plan

    def __call__(self) -> None:
        """Write every chunk; raises the first error a chunk writer raised (chunks already
        written stay)."""
        os.makedirs(self.output_folder, exist_ok=True)
        plan = self._plan()
        bar = tqdm(total=len(plan), unit="chunk", desc="gulp ingest", disable=not self.progress)
        try:
            if self.num_workers <= 1:
                writer = ChunkWriter(self.adapter)
                for chunk, input_slice in plan:
                    writer.write_chunk(chunk, input_slice)
                    bar.update(1)
            else:
                self._run_pool(plan, bar)
        finally:
            bar.close()

    def _run_pool(self, plan: Sequence[Tuple[GulpChunk, slice]], bar: tqdm) -> None:
        context = self.mp_context
        if isinstance(context, str):
            context = multiprocessing.get_context(context)
        workers = max(1, min(self.num_workers, len(plan)))
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init_worker,
            initargs=(self.adapter,))
        try:
            futures = [pool.submit(_write_in_worker, chunk, input_slice)
                       for chunk, input_slice in plan]
            for future in concurrent.futures.as_completed(futures):
                future.result()
                bar.update(1)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
