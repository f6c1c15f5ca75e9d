"""Reading gulp directories: :class:`GulpDirectory`, a gulpio2-compatible, thread-safe reader."""

from __future__ import annotations

import collections
import contextlib
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

from tf_gulp import _args as A
from tf_gulp._files import Closing
from tf_gulp.gulp.chunk import (FrameSelection, GulpChunk, JpegDecoder,
                                check_max_clip_bytes, first_meta, normalize_id, open_data_file,
                                read_element, split_element)
from tf_gulp.gulp.index import DEFAULT_MAX_CLIP_BYTES, load_directory_index, meta_dict

__all__ = ["GulpDirectory", "chunk_file_names", "list_chunk_files", "next_chunk_number"]

# Any file name a chunk writer uses, final or temporary (``data_3.gulp.tmp``).
_ANY_CHUNK_RE = re.compile(r"^(?:data_(\d+)\.gulp|meta_(\d+)\.gmeta)(?:\.tmp)?$")


def chunk_file_names(n: int) -> Tuple[str, str]:
    """The file names of chunk ``n``: ``("data_<n>.gulp", "meta_<n>.gmeta")``."""
    return f"data_{n}.gulp", f"meta_{n}.gmeta"


def list_chunk_files(output_dir: str) -> List[str]:
    """Names of the chunk files in ``output_dir``, final or temporary (``data_3.gulp.tmp``)."""
    return sorted(name for name in os.listdir(output_dir) if _ANY_CHUNK_RE.match(name))


def next_chunk_number(output_dir: str) -> int:
    """One more than the highest chunk number used by any chunk file (final or temporary) in
    ``output_dir``; 0 if there is none."""
    highest = -1
    for name in list_chunk_files(output_dir):
        m = _ANY_CHUNK_RE.match(name)
        assert m is not None
        highest = max(highest, int(m.group(1) or m.group(2)))
    return highest + 1


class GulpDirectory(Closing):
    """Read a gulp directory (``data_<N>.gulp`` + ``meta_<N>.gmeta`` chunks).

    API and return values follow gulpio2's ``GulpDirectory``:

    * ``gd[id]``, ``gd[id, slice]``, ``gd[id, [indices]]`` (also ``gd[id, i]``) return ``(frames,
      meta)``: a list of uint8 arrays, (H, W, 3) RGB or (H, W) for grayscale JPEGs, and the video's
      ``meta_data[0]``. Ids may be given as ``str`` or ``int`` (``gd[42]`` reads ``"42"``).
    * ``merged_meta_dict`` (id → ``{"frame_info", "meta_data"}``), ``chunk_lookup`` (id → chunk
      number), ``all_meta_dicts`` (one index per chunk), ``chunk_objs_lookup`` (chunk number →
      :class:`GulpChunk`), ``num_chunks``, ``chunks()`` / ``iter(gd)``, ``new_chunks(n)``.

    Unlike gulpio2, chunks are taken in numeric order of N (0, 1, 2, ..., 10, not 0, 1, 10, 2), a
    missing directory raises FileNotFoundError, and the directory is judged by the same rules as
    :class:`~tf_gulp.GulpDataset` (``tf_gulp.gulp.index``): what the dataset refuses (an id in two
    chunks, two files for one chunk number, a ``.gulp`` without its ``.gmeta`` that no unfinished
    ingest is writing, a damaged index, a folder without chunks) raises the same message here
    (a folder without chunks: ``FileNotFoundError``, as GulpDataset's ``NotFoundError``; pass
    ``require_chunks=False`` for an empty reader to write to with :meth:`new_chunks`). ``output_dir`` may be
    local or on any of TensorFlow's file systems (``gs://``, ``ram://``, ...). One instance may be
    shared by any number of threads: each data file is opened once and read with ``os.pread`` (no
    shared file position, no per-call state; remote files with one read at a time). The index
    (all ``.gmeta`` files) is read when the object is built; chunks added later need a new
    ``GulpDirectory``. Call :meth:`close` (or use ``with``) to close
    the data files early.

    Args:
        output_dir: the gulp directory.
        jpeg_decoder: optional ``bytes -> array`` function replacing the built-in libjpeg-turbo
            decoder (accurate DCT, RGB or gray per the JPEG's components).
        max_clip_bytes: the most bytes one read may return: the decoded frames (checked from the
            JPEG headers before anything is decoded, as are the per-frame limits of
            :func:`tf_gulp._core.jpeg_header_problem`), or the JPEG bytes with :meth:`read_jpegs`. A read over it
            raises :class:`GulpDataError` naming the id. Default 1 GiB.
        require_chunks: refuse a directory without chunks (FileNotFoundError, the default), as
            GulpDataset does; False gives an empty reader, to write to with :meth:`new_chunks`
            (gulpio2 accepted any folder: a mistyped path read as 0 items).
    """

    def __init__(self, output_dir: Union[str, os.PathLike],
                 jpeg_decoder: Optional[JpegDecoder] = None, *,
                 max_clip_bytes: int = DEFAULT_MAX_CLIP_BYTES,
                 require_chunks: bool = True) -> None:
        A.path(output_dir, "output_dir", what="GulpDirectory: ")
        A.optional_callable(jpeg_decoder, "jpeg_decoder", what="GulpDirectory: ",
                            example="simplejpeg.decode_jpeg")
        A.boolean(require_chunks, "require_chunks", what="GulpDirectory: ")
        self.output_dir: str = os.fspath(output_dir)
        self.jpeg_decoder = jpeg_decoder
        self.max_clip_bytes = check_max_clip_bytes(max_clip_bytes)
        # The core judges the directory as GulpDataset does (tf_gulp.gulp.index): a folder
        # without chunks is refused, unless the caller means to write to it (new_chunks).
        chunks = load_directory_index(self.output_dir, require_chunks=require_chunks)
        numbers = [int(c["number"]) for c in chunks]
        self._data_paths: Dict[int, str] = {int(c["number"]): c["data_path"] for c in chunks}
        #: One index per chunk, in chunk order: ``{id: {"frame_info": [...], "meta_data": [...]}}``.
        self.all_meta_dicts: List[Dict[str, Any]] = [meta_dict(c) for c in chunks]
        #: id → chunk number.
        self.chunk_lookup: Dict[str, int] = {}
        #: id → ``{"frame_info": [[offset, pad, total_length], ...], "meta_data": [...]}``.
        self.merged_meta_dict: Dict[str, Dict[str, Any]] = {}
        for n, meta in zip(numbers, self.all_meta_dicts):  # ids are unique: the core checked
            for key, entry in meta.items():
                self.chunk_lookup[key] = n
                self.merged_meta_dict[key] = entry
        #: chunk number → :class:`GulpChunk` (sharing this object's index).
        self.chunk_objs_lookup: "collections.OrderedDict[int, GulpChunk]" = \
            collections.OrderedDict()
        for c, meta in zip(chunks, self.all_meta_dicts):
            chunk = GulpChunk(c["data_path"], c["meta_path"], jpeg_decoder=jpeg_decoder,
                              max_clip_bytes=self.max_clip_bytes)
            chunk._meta_dict = meta
            self.chunk_objs_lookup[int(c["number"])] = chunk
        #: Number of chunks.
        self.num_chunks: int = len(numbers)
        self._files: Dict[int, Any] = {}  # chunk number -> open data file
        self._closed = False

    # -- chunks --------------------------------------------------------------------------------

    def chunks(self) -> Iterator[GulpChunk]:
        """The chunks, in numeric order of their number N."""
        return iter(self.chunk_objs_lookup.values())

    def __iter__(self) -> Iterator[GulpChunk]:
        return self.chunks()

    def new_chunks(self, total_new_chunks: int, *, jpeg_quality: int = 90,
                   jpeg_subsampling: str = "444") -> Iterator[GulpChunk]:
        """``total_new_chunks`` new, not yet written chunks numbered after every chunk file now in
        the directory (including unfinished ones), e.g. ``data_3.gulp``.. when 0..2 exist."""
        start = next_chunk_number(self.output_dir)
        for n in range(start, start + total_new_chunks):
            data_name, meta_name = chunk_file_names(n)
            yield GulpChunk(os.path.join(self.output_dir, data_name),
                            os.path.join(self.output_dir, meta_name), jpeg_quality=jpeg_quality,
                            jpeg_subsampling=jpeg_subsampling, jpeg_decoder=self.jpeg_decoder,
                            max_clip_bytes=self.max_clip_bytes)

    # -- reading -------------------------------------------------------------------------------

    def __contains__(self, id_: Any) -> bool:
        return normalize_id(id_) in self.chunk_lookup

    def _data_file(self, n: int) -> Any:
        file = self._files.get(n)
        if file is not None:
            return file
        if self._closed:
            raise ValueError(f"{self!r} is closed")
        file = open_data_file(self._data_paths[n])
        winner = self._files.setdefault(n, file)  # atomic: one per file even when threads race
        if winner is not file:
            file.close()
        return winner

    def _read(self, element: Any, decode: bool) -> Tuple[List[Any], Any]:
        id_, selection = split_element(element)
        key = normalize_id(id_)
        n = self.chunk_lookup.get(key)
        if n is None:
            raise KeyError(id_)
        entry = self.merged_meta_dict[key]
        frames = read_element(self._data_file(n), self.chunk_objs_lookup[n].meta_file_path, key,
                              entry["frame_info"], selection, decode, self.jpeg_decoder,
                              self.max_clip_bytes)
        return frames, first_meta(entry)

    def __getitem__(self, element: Any) -> Tuple[List[np.ndarray], Any]:
        """``gd[id]``, ``gd[id, slice]``, ``gd[id, [i, j, ...]]`` or ``gd[id, i]``.

        Returns ``(frames, meta_data[0])``. Raises KeyError for an unknown id, IndexError for a
        frame index out of range, and :class:`GulpDataError` (naming file, id, frame and offset)
        when the index points past the end of the data file, a JPEG cannot be decoded, a header
        or the clip is over the limits (``max_clip_bytes``), or the data file is not a regular file
        (e.g. a FIFO: refused at once instead of waiting forever).
        """
        return self._read(element, decode=True)

    def read_jpegs(self, id_: Any, slice_: FrameSelection = None) -> Tuple[List[bytes], Any]:
        """The selected frames' JPEG bytes (padding stripped) and ``meta_data[0]``, undecoded."""
        return self._read((id_, slice_), decode=False)

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the data files. Reads after this raise ValueError. Do not call it while other
        threads are reading."""
        self._closed = True
        files, self._files = self._files, {}
        for reader in files.values():
            with contextlib.suppress(OSError):
                reader.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["_files"] = {}
        return state

    def __repr__(self) -> str:
        return (f"GulpDirectory({self.output_dir!r}: {len(self.chunk_lookup)} ids in "
                f"{self.num_chunks} chunks)")
