"""`FileReader`: random access to the records of FFRecord files, with the reference's API.

The reading is done by the same C++ code as :class:`tf_gulp.FFRecordDataset` (through the
``tf_gulp._core`` module, without TensorFlow): a batch's reads are submitted together (io_uring) straight
into the numpy arrays that are returned, and each record's CRC-32 is checked with a hardware-accelerated
implementation.
"""

from __future__ import annotations

import os
import warnings
from typing import Iterable, List, Sequence, Union

import numpy as np

from tf_gulp import _args as A
from tf_gulp._files import Closing, is_remote
from tf_gulp._runtime_libs import import_core

_core = import_core()  # tf_gulp._core, through its one accessor
#: A damaged file (a ``ValueError``): the core's data-loss error.
DataLossError = _core.DataLossError

__all__ = ["DataLossError", "FFRecordWarning", "FileReader", "PathArg"]

#: What :class:`FileReader` and :class:`tf_gulp.FFRecordDataset` accept as files: a file, a directory
#: (its ``*.ffr`` files, sorted by name, not recursive), or a list of those.
PathArg = Union[str, bytes, os.PathLike, Sequence[Union[str, bytes, os.PathLike]]]


class FFRecordWarning(UserWarning):
    """A file was read, but something about it deserves attention (an old header without a metadata
    checksum)."""


def normalize_paths(fname: PathArg, name: str = "fname", what: str = "") -> List[str]:
    """`fname` (the argument `name` of `what`) as a list of path strings (directories are
    expanded by the C++ reader)."""
    if isinstance(fname, (str, bytes, os.PathLike)):
        return [os.fsdecode(fname)]
    if isinstance(fname, (list, tuple)):
        if not fname:
            raise ValueError(f"{what}{name}: no FFRecord files given (the list is empty)")
        out = []
        for f in fname:
            if not isinstance(f, (str, bytes, os.PathLike)):
                raise TypeError(f"{what}{name}: FFRecord paths must be str or os.PathLike, "
                                f"got {f!r} ({type(f).__name__})")
            out.append(os.fsdecode(f))
        return out
    raise TypeError(
        f"{what}{name} must be a path (str or os.PathLike), a directory, or a list of paths, "
        f"got {fname!r} ({type(fname).__name__})"
    )


def _indices(indices: Iterable[int]) -> List[int]:
    if isinstance(indices, (int, np.integer)):
        raise TypeError("read() takes a sequence of record indices; use read_one(i) for one record")
    if isinstance(indices, np.ndarray):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"record indices must be integers, got an array of {indices.dtype}")
        return indices.ravel().tolist()
    out = []
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"record indices must be integers, got {type(i).__name__}")
        out.append(int(i))
    return out


class FileReader(Closing):
    """Reads records of one or more FFRecord files, concatenated into one index space.

    Compatible with ``ffrecord.FileReader`` (HFAiLab): ``n``, ``read(indices)`` (a list of uint8
    numpy arrays), ``read_one(i)``, ``validate()``, ``close()``, ``get_offsets`` /
    ``get_checksums``, the context manager, and pickling (for data loader worker processes).

    Args:
      fname: a file, a directory (its ``*.ffr`` files, sorted by name, not recursive), or a list of
        those.
      check_data: verify each file's metadata checksum when opening it, and each record's CRC-32
        when reading it.
      io_engine: ``"auto"`` (io_uring when the kernel allows it, else pread), ``"io_uring"`` or
        ``"pread"``.
      queue_depth: most reads in flight at once. The default, 256, lets a batch of up to 256
        records go to the device at once (a common block-device queue limit): a smaller depth
        reads a large batch in waves and, cold, at the speed of the smaller depth.
      direct_io: read with ``O_DIRECT``, bypassing the page cache.
      access: ``"normal"``, ``"random"`` (no kernel read-ahead: best for random batches on a cold
        cache) or ``"sequential"``.

    Raises:
      FileNotFoundError: a path does not exist, a directory has no ``.ffr`` files, or one of its
        ``.ffr`` entries is a dangling symbolic link.
      ValueError: a path (or a directory's ``.ffr`` entry) is not a regular file, e.g. a FIFO
        (refused at once: reading one would wait for a writer forever).
      DataLossError: (a ``ValueError``) a header is truncated, corrupt, or not FFRecord; a record's
        checksum does not match. The message names the file, the record and the byte offset.
      IndexError: a record index is negative or not below ``n``.
    """

    def __init__(
        self,
        fname: PathArg,
        check_data: bool = True,
        *,
        io_engine: str = "auto",
        queue_depth: int = 256,
        direct_io: bool = False,
        access: str = "normal",
    ) -> None:
        what = "FileReader: "
        paths = normalize_paths(fname, what=what)
        check_data = A.boolean(check_data, "check_data", what=what)
        queue_depth = A.integer(queue_depth, "queue_depth", minimum=1, what=what)
        direct_io = A.boolean(direct_io, "direct_io", what=what)
        for path in paths:
            # Said here, not left to the core: once a gulp reader has handed the core a remote
            # file system (tf_gulp._files), it would open these too, without batched reads.
            if is_remote(path):
                raise ValueError(f"{path}: tf_gulp.ffrecord.FileReader reads local files only; "
                                 "read FFRecord files on TensorFlow's file systems (gs://, "
                                 "s3://, ram://, ...) with tf_gulp.FFRecordDataset")
        self.check_data = bool(check_data)
        self._options = dict(io_engine=io_engine, queue_depth=int(queue_depth),
                             direct_io=bool(direct_io), access=access)
        # As bytes: a name that is not UTF-8 (os.fsdecode's surrogates) reaches the core intact.
        self._reader = _core.FFRecordReader([os.fsencode(p) for p in paths], self.check_data,
                                            **self._options)
        #: The files read, in index order (directories expanded).
        self.fnames: List[str] = list(self._reader.files)
        for message in self._reader.warnings:
            warnings.warn(message, FFRecordWarning, stacklevel=2)

    @property
    def n(self) -> int:
        """Number of records in all files together."""
        return self._reader.n

    def __len__(self) -> int:
        return self._reader.n

    @property
    def io_engine(self) -> str:
        """The engine reads use: ``"io_uring"`` or ``"pread"``."""
        return self._reader.io_engine

    @property
    def closed(self) -> bool:
        return self._reader.closed

    def read(self, indices: Iterable[int]) -> List[np.ndarray]:
        """Reads records ``indices`` (in that order, repeats allowed) with one batched submission.

        Returns one 1-D uint8 array per index, holding the record's bytes.
        """
        return self._reader.read(_indices(indices))

    def read_one(self, index: int) -> np.ndarray:
        """Reads one record: a 1-D uint8 array."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"a record index must be an integer, got {type(index).__name__}")
        return self._reader.read_one(int(index))

    def validate(self, records: bool = False) -> None:
        """Recomputes every file's metadata checksum; with ``records=True`` also reads every record
        and checks its CRC-32 (regardless of ``check_data``).

        Raises:
          DataLossError: naming the file (and record) that does not match.
        """
        self._reader.validate()
        if not records:
            return
        checker = self if self.check_data else FileReader(self.fnames, True, **self._options)
        try:
            batch = 256
            for start in range(0, self.n, batch):
                checker.read(range(start, min(start + batch, self.n)))
        finally:
            if checker is not self:
                checker.close()

    def get_offsets(self, file_index: int) -> np.ndarray:
        """Record offsets of file ``file_index`` (int64), plus the file size as the last entry."""
        return self._reader.offsets(int(file_index))

    def get_checksums(self, file_index: int) -> np.ndarray:
        """Record CRC-32s of file ``file_index`` (uint32), as stored."""
        return self._reader.checksums(int(file_index))

    def close(self) -> None:
        """Closes the files (waiting for reads in other threads). Later reads raise ``ValueError``."""
        self._reader.close()

    def __reduce__(self):
        # Reopened by name in the unpickling process (e.g. a data loader worker).
        return (_reopen, (self.fnames, self.check_data, self._options))

    def __repr__(self) -> str:
        files = self.fnames[0] if len(self.fnames) == 1 else f"{len(self.fnames)} files"
        return f"FileReader({files!r}, n={self.n}, check_data={self.check_data})"


def _reopen(fnames, check_data, options) -> FileReader:
    return FileReader(fnames, check_data, **options)
