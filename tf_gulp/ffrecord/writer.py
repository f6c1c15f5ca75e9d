"""`FileWriter` and `dump`: FFRecord files byte-compatible with the reference implementation.

Unlike the reference writer, every byte of any buffer is stored (the reference stores only
``buf.shape[0]`` bytes, so a float32 array loses three quarters of its data), a wrong record count is a
Python exception rather than an aborted process, and a file only appears under its name once it is
complete: records go to a temporary sibling that is fsynced and renamed into place by ``close()``.
A write that fails for the output's sake (a full disk, a quota, a read-only file system, no
permission) raises :class:`~tf_gulp._output_errors.OutputError` (an ``OSError`` with that errno)
naming the output file, and leaves no temporary file.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import threading
import warnings
from typing import Any, Iterator, List, Optional, Sequence, Union

from tf_gulp._progress import progress_bar
from tf_gulp import _args as A
from tf_gulp._durable import fsync_dir
from tf_gulp._output_errors import OutputError, output_error
from tf_gulp._runtime_libs import import_core

_core = import_core()  # tf_gulp._core, through its one accessor

__all__ = ["FileWriter", "dump"]


@contextlib.contextmanager
def _writing(path: str) -> Iterator[None]:
    """A failed system call while writing ``path`` (the C++ writer's OSError with its errno, or
    Python's) as an :class:`OutputError` naming ``path``; a missing folder stays
    FileNotFoundError."""
    try:
        yield
    except OutputError:
        raise
    except OSError as e:
        if e.errno is None or e.errno in (errno.ENOENT, errno.ENOTDIR):
            raise
        raise output_error(e, path) from None


def _contiguous_view(data: Any) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(
            "write_one() takes a bytes-like object (bytes, bytearray, memoryview, a numpy array of "
            f"any dtype and shape), got {type(data).__name__}"
        ) from None
    if not view.c_contiguous:
        view = memoryview(view.tobytes())  # e.g. a strided numpy slice: its bytes in C order
    return view


class FileWriter:
    """Writes ``n`` records to an FFRecord file.

    ``write_one(data)`` appends one record: all bytes of ``data`` (bytes, bytearray, memoryview, a
    numpy array of any dtype and shape, in C order). ``close()`` writes the header and moves the file
    into place; it raises ``ValueError`` (and leaves no file) when fewer than ``n`` records were
    written. Used as a context manager, an exception inside the ``with`` block discards the file.

    Args:
      fname: the file to write; replaced atomically if it exists.
      n: the number of records that will be written.

    Example::

        with FileWriter("train.ffr", len(samples)) as w:
            for sample in samples:
                w.write_one(pickle.dumps(sample))
    """

    def __init__(self, fname: Union[str, os.PathLike], n: int) -> None:
        self.fname = A.path(fname, "fname", what="FileWriter: ")
        self.n = A.integer(n, "n", minimum=0, what="FileWriter: ")
        with _writing(self.fname):
            self._writer = _core.FFRecordWriter(self.fname, self.n)

    @property
    def count(self) -> int:
        """Records written so far."""
        return self._writer.count

    @property
    def closed(self) -> bool:
        return not self._writer.open

    def write_one(self, data: Any) -> None:
        """Appends one record. ``ValueError`` once ``n`` records have been written (the extra record
        is not written). :class:`~tf_gulp._output_errors.OutputError` when the output cannot be
        written (the file is discarded)."""
        view = _contiguous_view(data)
        with _writing(self.fname):
            self._writer.write(view)

    def close(self) -> None:
        """Finishes the file: header, fsync, rename into place. Idempotent.

        Raises:
          ValueError: fewer records than ``n`` were written; the temporary file is removed and
            ``fname`` is not created (an existing file of that name is left as it was).
        """
        if self._writer.open:
            with _writing(self.fname):
                self._writer.finish()

    def discard(self) -> None:
        """Abandons the file: the temporary file is removed, ``fname`` is not touched."""
        self._writer.discard()

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()
        else:
            self.close()

    def __del__(self) -> None:
        writer = getattr(self, "_writer", None)
        if writer is None or not writer.open:
            return
        # Like the reference, a complete writer that was never closed is finished when collected; an
        # incomplete one leaves nothing behind.
        if writer.count == writer.n:
            try:
                writer.finish()
                return
            except Exception:  # noqa: BLE001 - nothing to raise to in a finalizer
                pass
        writer.discard()
        warnings.warn(
            f"FileWriter({self.fname!r}) was never closed and holds {writer.count} of {writer.n} "
            "records: nothing was written",
            ResourceWarning,
            stacklevel=2,
        )

    def __repr__(self) -> str:
        return f"FileWriter({self.fname!r}, n={self.n}, count={self.count})"


def _part_bounds(n: int, nfiles: int) -> List[range]:
    return [range(k * n // nfiles, (k + 1) * n // nfiles) for k in range(nfiles)]


def dump(
    records: Sequence[Any],
    out_dir: Union[str, os.PathLike],
    nfiles: int,
    verbose: bool = False,
    *,
    progress: Optional[bool] = None,
    workers: Optional[int] = None,
) -> List[str]:
    """Writes ``records`` (anything with ``len()`` and ``[i]`` giving bytes-like objects) as
    ``nfiles`` FFRecord files ``out_dir/PART_00000.ffr``, ``PART_00001.ffr``, ..., which read back
    (as the directory, with :class:`FileReader` or :class:`tf_gulp.FFRecordDataset`) in the same
    order.

    The files are written in parallel by ``workers`` threads (default: one per file, at most one per
    CPU; writing and checksumming run without the GIL), each file crash-safe as with
    :class:`FileWriter`. Record ``i`` goes to part ``k`` with ``k * n // nfiles <= i < (k + 1) * n //
    nfiles``, so every part is written even when ``n`` is small. As in the reference, ``nfiles == 1``
    with an ``out_dir`` ending in ``.ffr`` writes that single file.

    A failure to write the output (a full disk, a read-only file system, no permission) raises
    :class:`~tf_gulp._output_errors.OutputError` naming the part of ``out_dir`` that could not be
    written; nothing is left behind, and the same dump completes once there is room.

    Crash safety: the parts are written in a directory beside ``out_dir`` (``<out_dir>.tmp-*``) and
    appear only once every one of them is complete: when ``out_dir`` does not exist or is empty,
    by one rename of that directory (a reader never sees some parts without the others); else
    moved in one by one. A dump that is killed leaves nothing in ``out_dir``; the next dump to the
    same ``out_dir`` removes what it left.

    Silent by default, as the reference: ``verbose=True`` (the reference's fourth argument) shows a
    progress bar on stderr; ``progress`` (keyword) overrides ``verbose`` when given.

    Returns:
      The paths written, in index order.
    """
    verbose = A.boolean(verbose, "verbose", what="dump: ")
    progress = verbose if progress is None else A.boolean(progress, "progress", what="dump: ")
    n = len(records)
    nfiles = A.integer(nfiles, "nfiles", minimum=1, what="dump: ")
    workers = A.optional_integer(workers, "workers", minimum=1, what="dump: ")
    out = A.path(out_dir, "out_dir", what="dump: ")
    stage = None
    if nfiles == 1 and out.endswith(".ffr"):
        paths = [out]
        parent = os.path.dirname(os.path.abspath(out))
        with _writing(parent):
            os.makedirs(parent, exist_ok=True)
        targets = paths
    else:
        names = [f"PART_{k:05d}.ffr" for k in range(nfiles)]
        paths = [os.path.join(out, name) for name in names]
        stage = _Staging(out)
        targets = [os.path.join(stage.path, name) for name in names]
    try:
        _write_parts(records, targets, out, n, nfiles, progress, workers)
        if stage is not None:
            with _writing(out):
                stage.publish(names)
    except OutputError as e:
        if stage is not None and e.path.startswith(stage.path + os.sep):
            # Name the part as the user knows it, not by the staging folder's name.
            e.path = os.path.join(out, e.path[len(stage.path) + 1:])
        raise
    finally:
        if stage is not None:
            stage.close()
    return paths


def _write_parts(records: Sequence[Any], paths: List[str], out: str, n: int, nfiles: int,
                 progress: bool, workers: Optional[int]) -> None:
    bounds = _part_bounds(n, nfiles)
    lock = threading.Lock()
    bar = None
    if progress:
        # Asked for by name (the default is silent, as the reference's): drawn like the reference's.
        bar = progress_bar(True, always=True, total=n, unit="rec",
                           desc=f"dump {os.path.basename(out) or out}")
    stop = threading.Event()

    def write_part(k: int) -> None:
        with FileWriter(paths[k], len(bounds[k])) as writer:
            done = 0
            for i in bounds[k]:
                if stop.is_set():
                    raise RuntimeError("stopped: another part failed")
                writer.write_one(records[i])
                done += 1
                if bar is not None and done % 64 == 0:
                    with lock:
                        bar.update(64)
            if bar is not None:
                with lock:
                    bar.update(done % 64)

    if workers is None:
        workers = min(nfiles, os.cpu_count() or 1)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
            futures = [pool.submit(write_part, k) for k in range(nfiles)]
            concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            stop.set()  # a no-op when all finished; otherwise the other parts stop early
            concurrent.futures.wait(futures)
        errors = [f.exception() for f in futures if f.exception() is not None]
        first = [e for e in errors if not (isinstance(e, RuntimeError) and "stopped:" in str(e))]
        if errors:
            raise (first or errors)[0]
    finally:
        if bar is not None:
            bar.close()


class _Staging:
    """A directory ``<out>.tmp-XXXXXXXX`` beside ``out`` where :func:`dump` writes all its parts
    before any of them appears in ``out``.

    ``publish`` then renames the whole directory to ``out`` when ``out`` does not exist or is empty
    (one atomic step: a reader sees no part or every part), else moves the parts in one by one
    (each atomically). A dump killed before that leaves only the staging directory, which the next
    dump to the same ``out`` removes: each live dump holds an ``flock`` on its own, so only those of
    dead dumps go.
    """

    def __init__(self, out: str) -> None:
        self.out = os.path.abspath(out)
        parent, base = os.path.split(self.out)
        with _writing(out):
            os.makedirs(parent, exist_ok=True)
        if os.path.exists(self.out) and not os.path.isdir(self.out):
            raise NotADirectoryError(f"{out}: exists and is not a directory")
        self.prefix = base + ".tmp-"
        self.parent = parent
        while True:
            with _writing(out):
                path = _make_directory(parent, self.prefix)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _still_names(path, fd):
                break
            os.close(fd)  # another dump took it for a stale one and removed it: again
        self.path, self._fd = path, fd
        self._remove_stale()

    def _remove_stale(self) -> None:
        stage_name = re.compile(re.escape(self.prefix) + r"[a-z0-9_]{8}")
        for name in os.listdir(self.parent):
            candidate = os.path.join(self.parent, name)
            if not stage_name.fullmatch(name) or candidate == self.path:
                continue
            try:  # only what a dump writes there: never a folder of someone else's
                if not all(_PART_FILE.fullmatch(f) for f in os.listdir(candidate)):
                    continue
            except OSError:
                continue
            try:
                fd = os.open(candidate, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW |
                             os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _still_names(candidate, fd):
                    shutil.rmtree(candidate, ignore_errors=True)
            except OSError:
                pass  # a live dump holds it
            finally:
                os.close(fd)

    def publish(self, names: Sequence[str]) -> None:
        try:
            os.rename(self.path, self.out)  # also replaces an empty directory
            published = True
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            published = False
        if not published:
            for name in names:
                os.replace(os.path.join(self.path, name), os.path.join(self.out, name))
            fsync_dir(self.out)
            os.rmdir(self.path)
        fsync_dir(self.parent)

    def close(self) -> None:
        """Removes the staging directory if it is still there (an error stopped the dump)."""
        if os.path.isdir(self.path) and _still_names(self.path, self._fd):
            shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._fd)


def _make_directory(parent: str, prefix: str) -> str:
    """A new directory ``parent/<prefix>XXXXXXXX`` (a name no one else took) created with the
    umask's permissions: it becomes the output folder (``tempfile.mkdtemp`` would make it
    ``drwx------`` whatever the umask)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
    for _ in range(1000):
        name = prefix + "".join(secrets.choice(alphabet) for _ in range(8))
        path = os.path.join(parent, name)
        try:
            os.mkdir(path, 0o777)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free name for a staging directory", parent)


_PART_FILE = re.compile(r"PART_\d{5,}\.ffr(?:\.tmp-[a-z0-9]{8})?")


def _still_names(path: str, fd: int) -> bool:
    try:
        a, b = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
