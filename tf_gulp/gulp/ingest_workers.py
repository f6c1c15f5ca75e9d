"""Writing an ingest's chunks in parallel: a pool of worker processes, each with its own
:class:`~tf_gulp.gulp.chunk_writer.ChunkWriter`.

The adapter is sent to each worker once (the pool's initializer), not once per chunk. Workers report
each item on a queue for the progress bar, die with the ingest process (Linux), ignore Ctrl-C (the
main process decides), and drop the chunk they are writing at the next item once ``stop`` is set.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
import sys
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.chunk import GulpChunk
from tf_gulp.gulp.chunk_writer import Cancelled, ChunkWriter
from tf_gulp.gulp.ingest_progress import Meter
from tf_gulp.gulp.ingest_results import ChunkResult

__all__ = ["write_chunks_in_pool"]


# Worker-process state: the adapter is sent once per worker, not once per chunk.
_worker: Dict[str, Any] = {}


def _die_with_parent(parent_pid: int) -> None:
    """Linux: have the kernel SIGKILL this worker when the ingest process dies, so a killed
    ingest leaves no process writing behind it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover
        return
    if os.getppid() != parent_pid:  # the parent died before prctl
        os._exit(1)


def _init_worker(adapter: AbstractDatasetAdapter, skip_bad: bool, progress: Any, stop: Any,
                 parent_pid: int, skip_empty: bool = True) -> None:
    _die_with_parent(parent_pid)
    # Ctrl-C reaches the whole process group: the main process decides, via `stop`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def on_item(frames: int, size: int) -> None:
        progress.put((frames, size))

    _worker["writer"] = ChunkWriter(adapter, skip_bad=skip_bad, on_item=on_item, stop_event=stop,
                                    skip_empty=skip_empty)


def _write_in_worker(chunk: GulpChunk, input_slice: slice) -> Optional[ChunkResult]:
    try:
        return _worker["writer"].write(chunk, input_slice)
    except Cancelled:
        return None


def write_chunks_in_pool(adapter: AbstractDatasetAdapter, chunks: Sequence[Tuple[GulpChunk, slice]],
                         *, num_workers: int, skip_bad: bool, mp_context: Union[None, str, Any],
                         meter: Meter, on_result: Callable[[ChunkResult], None],
                         skip_empty: bool = True) -> None:
    """Write each ``(chunk, adapter slice)`` of ``chunks`` in a pool of ``num_workers`` processes.

    ``on_result`` is called in this process with each chunk's :class:`ChunkResult`, as chunks
    finish. On any exception (a failed item, Ctrl-C, a worker that died) the other workers drop the
    chunk they are writing, the pool is shut down, and the exception propagates; complete chunks
    stay.
    """
    context = mp_context
    if isinstance(context, str):
        context = multiprocessing.get_context(context)
    elif context is None:
        context = multiprocessing.get_context()
    progress = context.Queue()
    stop = context.Event()
    workers = max(1, min(num_workers, len(chunks)))
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker,
        initargs=(adapter, skip_bad, progress, stop, os.getpid(), skip_empty))
    pending = set()
    try:
        pending = {pool.submit(_write_in_worker, chunk, s) for chunk, s in chunks}
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED)
            meter.drain(progress)
            for future in done:
                try:
                    result = future.result()
                except concurrent.futures.process.BrokenProcessPool:
                    raise RuntimeError(
                        "an ingest worker process died (killed, or out of memory?); the "
                        "complete chunks are kept: run the same ingest again to resume"
                    ) from None
                if result is not None:
                    on_result(result)
    except BaseException:
        stop.set()  # the other workers drop their chunk at the next item
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        meter.drain(progress)
    pool.shutdown(wait=True)
