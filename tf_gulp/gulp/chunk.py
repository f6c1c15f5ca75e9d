"""One gulp chunk: a ``.gulp`` data file and its ``.gmeta`` JSON index.

Byte layout (identical to gulpio2's, so either implementation reads the other's files):

* ``data_<N>.gulp``: the frames' JPEG bytes back to back, no header; each JPEG is followed by
  ``\\0`` bytes up to a multiple of 4 (0 to 3 of them).
* ``meta_<N>.gmeta``: one JSON object written with Python's ``json.dump`` defaults::

      {"<id>": {"frame_info": [[offset, pad, total_length], ...], "meta_data": [meta, ...]}, ...}

  ``total_length`` includes the ``pad`` bytes, so a frame's JPEG is
  ``data[offset : offset + total_length - pad]``. Ids are stored as ``str(id)``; appending the same
  id twice to one chunk concatenates its frame lists and stores two meta entries; readers return
  ``meta_data[0]``.

Writing is crash safe: a chunk appears under its final names only once it is complete. ``'wb'``
writes ``<name>.tmp`` files, fsyncs them and renames them into place (the ``.gulp`` first, the
``.gmeta`` last, with the directory fsynced in between and after); a chunk being replaced disappears
(its ``.gmeta`` is removed) before the new one appears, so a reader sees the old chunk, no chunk, or
the new chunk, never a mix. ``'ab'`` appends the new JPEG bytes to the end of the existing ``.gulp``
and renames a complete new ``.gmeta`` into place, so an interrupted append leaves only unindexed
trailing bytes, which readers ignore. An exception inside ``with chunk.open(...)`` removes the
temporary files (or truncates an append back) and leaves what was there before.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import threading
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple,
                    Union)

import numpy as np
import simplejpeg

from tf_gulp import _args as A
from tf_gulp._files import PositionalReader, exists, is_remote
from tf_gulp._remote_core import use_remote_paths_in_core
from tf_gulp._durable import replace_durably
from tf_gulp._output_errors import writing_output
from tf_gulp.gulp.index import (DEFAULT_MAX_CLIP_BYTES, GulpDataError, _core, load_chunk_index,
                                meta_dict)
from tf_gulp.gulp.serializers import JSONSerializer, is_serializer, json_serializer

__all__ = ["GulpChunk", "GulpDataError", "UnsupportedModeError", "encode_frame", "decode_jpeg"]

#: A frame given to :meth:`GulpChunk.append`: a uint8 array or the bytes of an encoded JPEG.
Frame = Union[np.ndarray, bytes, bytearray, memoryview, Any]
#: What a frame selection may be: ``None`` (all frames), a slice, an int, or a sequence of ints.
FrameSelection = Union[None, slice, int, Sequence[int], np.ndarray]
#: A function decoding one JPEG's bytes into an image array.
JpegDecoder = Callable[[bytes], np.ndarray]

_SUBSAMPLINGS = ("444", "422", "420", "440", "411")
_TMP_SUFFIX = ".tmp"


# --------------------------------------------------------------------------------------------------
# Helpers shared with directory.py


def normalize_id(id_: Any) -> str:
    """The key under which ``id_`` is stored in a ``.gmeta`` file (``str(id_)``)."""
    return id_ if isinstance(id_, str) else str(id_)


def split_element(element: Any) -> Tuple[Any, FrameSelection]:
    """Split a ``__getitem__`` argument: ``id`` or ``(id, selection)``."""
    if isinstance(element, tuple):
        if len(element) != 2:
            raise TypeError(f"expected id or (id, frame selection), got a tuple of {len(element)}")
        return element[0], element[1]
    return element, None


def _selection_args(selection: FrameSelection) -> Tuple[str, Any, Any, int, List[int]]:
    """``selection`` as the core's frame selection (mode, start, stop, step, indices), with
    Python's type rules: a slice, an int or a sequence of ints (TypeError otherwise)."""
    if selection is None:
        return "all", None, None, 1, []
    if isinstance(selection, slice):
        bounds = [None if b is None else operator.index(b)
                  for b in (selection.start, selection.stop, selection.step)]
        if bounds[2] == 0:
            raise ValueError("frame slice step cannot be zero")  # an argument, not the data's
        return "slice", bounds[0], bounds[1], 1 if bounds[2] is None else bounds[2], []
    if isinstance(selection, (int, np.integer)) and not isinstance(selection, bool):
        return "indices", None, None, 1, [int(selection)]
    if isinstance(selection, (str, bytes)):
        raise TypeError(f"frame selection must be a slice, an int or a list of ints, "
                        f"not {type(selection).__name__}")
    indices = []
    for raw in selection:
        if isinstance(raw, bool) or not isinstance(raw, (int, np.integer)):
            raise TypeError(f"frame indices must be ints, got {raw!r}")
        indices.append(int(raw))
    return "indices", None, None, 1, indices


def pread_exact(file: PositionalReader, size: int, offset: int, path: str, key: str,
                index: int) -> bytes:
    """Read exactly ``size`` bytes at ``offset`` (positionless, so safe across threads); for
    ``tf-gulp check`` and ``info``, which read frames one by one."""
    data = file.pread(size, offset)
    if len(data) == size:
        return data
    parts = [data]
    got = len(data)
    while data and got < size:
        data = file.pread(size - got, offset + got)
        parts.append(data)
        got += len(data)
    if got < size:
        file_size = file.size()
        raise GulpDataError(
            f"{path}: id {key!r} frame {index}: offset {offset} + length {size} ends past the end "
            f"of the file ({file_size} bytes)")
    return b"".join(parts)


def open_data_file(path: str) -> Any:
    """A chunk's data file opened by the core (``_core.GulpDataFile``: ``pread``, ``size``,
    ``close``, ``read_element``), local or remote. A file that is not a regular file (a FIFO:
    refused at once, never waited on) raises GulpDataError, a missing one FileNotFoundError."""
    use_remote_paths_in_core(path)
    try:
        return _core().GulpDataFile(path)
    except ValueError as e:
        raise GulpDataError(str(e)) from None


def read_element(file: Any, meta_path: str, key: str, frame_info: Sequence[Any],
                 selection: FrameSelection, decode: bool, decoder: Optional[JpegDecoder],
                 max_bytes: int) -> List[Any]:
    """The frames of id ``key`` picked by ``selection``, read by the core's element reader
    (``cc/gulp/element_reader.h``) exactly as :class:`~tf_gulp.GulpDataset` reads them: JPEG bytes,
    or decoded with GulpDataset's decoder (uint8 (H, W, 3) RGB, (H, W) for a grayscale JPEG), or
    with ``decoder`` (a user's ``bytes -> array`` function, given the bytes as stored).

    Raises IndexError for a frame index out of range and GulpDataError (naming file, id, frame and
    offset) for a frame past the end of the file, a damaged JPEG, or a clip over ``max_bytes``.
    """
    mode, start, stop, step, indices = _selection_args(selection)
    try:
        rows = np.asarray(frame_info, dtype=np.int64).reshape(-1, 3)
    except (TypeError, ValueError) as e:  # another serializer's index the core did not judge
        raise GulpDataError(f"{file_path(file)}: id {key!r}: frame_info is not a list of "
                            f"[offset, pad, length] integers ({e})") from None
    core_decodes = decode and decoder is None
    try:
        frames, selected = file.read_element(meta_path, key, rows, mode, start, stop, step,
                                             indices, core_decodes, max_bytes)
    except IndexError:
        raise
    except ValueError as e:  # _core.DataLossError and InvalidArgument
        raise GulpDataError(str(e)) from None
    if not decode or core_decodes:
        return frames
    out = []
    for index, jpeg in zip(selected, frames):
        try:
            out.append(decoder(jpeg))
        except ValueError as e:
            raise GulpDataError(f"{file_path(file)}: id {key!r} frame {index} at offset "
                                f"{int(rows[index][0])}: cannot decode JPEG ({e})") from e
    return out


def file_path(file: Any) -> str:
    """The path a core data file was opened with."""
    return file.path


def decode_jpeg(data: Union[bytes, bytearray, memoryview]) -> np.ndarray:
    """Decode one JPEG as :class:`~tf_gulp.GulpDataset` and the Python readers do (the core's
    libjpeg-turbo decode, GulpDataset's default settings).

    Returns a uint8 array: (H, W) for a one-component (grayscale) JPEG, (H, W, 3) RGB otherwise.
    A header over the decoder's limits raises ValueError before anything of its size is allocated.
    """
    return _core().gulp_decode_jpeg(bytes(data))


def check_max_clip_bytes(value: Any) -> int:
    """``max_clip_bytes`` as a positive int, or ValueError (a WrongTypeError for a non-integer)."""
    return A.integer(value, "max_clip_bytes", minimum=1)


def first_meta(entry: Dict[str, Any]) -> Any:
    """``meta_data[0]`` of a ``.gmeta`` entry (``None`` if the list is empty)."""
    meta = entry.get("meta_data")
    return meta[0] if meta else None


def load_meta_file(meta_path: str, data_path: str) -> Dict[str, Any]:
    """The index of the chunk ``meta_path`` + ``data_path`` as gulpio2's dict, judged by the core's
    rules (:mod:`tf_gulp.gulp.index`): GulpDataError naming the file if it is damaged."""
    return meta_dict(load_chunk_index(meta_path, data_path))


#: JPEG quality of frames appended as arrays when none is given: gulpio2's.
DEFAULT_JPEG_QUALITY = 90
_jpeg_write_quality = DEFAULT_JPEG_QUALITY


def default_jpeg_quality() -> int:
    """The JPEG quality used when none is given (read when a chunk or an ingestor is made): 90
    unless changed by :func:`set_default_jpeg_quality`, which gulpio2-compatible code reaches as
    ``tf_gulp.gulp.utils._JPEG_WRITE_QUALITY = q`` (gulpio2's tests set that module setting)."""
    return _jpeg_write_quality


def set_default_jpeg_quality(quality: int) -> None:
    """Sets what :func:`default_jpeg_quality` returns."""
    global _jpeg_write_quality
    _jpeg_write_quality = int(quality)


def _picture_kind(data: bytes) -> Optional[str]:
    """The picture format other than JPEG that `data` starts with, by the signatures
    cc/codec/picture.h sniffs, or None."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    for magic, kind in ((b"\x89PNG\r\n\x1a\n", "PNG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"),
                        (b"BM", "BMP"), (b"II*\0", "TIFF"), (b"MM\0*", "TIFF")):
        if data.startswith(magic):
            return kind
    return None


def encode_frame(frame: Frame, quality: int = 90, subsampling: str = "444") -> bytes:
    """JPEG bytes for one frame, as :meth:`GulpChunk.append` stores it.

    Accepts uint8 arrays shaped (H, W, 3) RGB, (H, W) or (H, W, 1) gray, (H, W, 4) RGBA (the alpha
    channel is dropped), in any memory layout; PIL images (palette and other modes are converted to
    RGB, ``L``/``LA``/``1`` to gray); and ``bytes`` of an already-encoded JPEG, returned unchanged.
    RGB is encoded with ``subsampling`` chroma subsampling, gray as a one-component JPEG.
    """
    if isinstance(frame, (bytes, bytearray, memoryview)):
        data = bytes(frame)
        if data[:2] != b"\xff\xd8":
            kind = _picture_kind(data)
            if kind is not None:
                raise ValueError(f"frame given as bytes is a {kind} picture, not a JPEG: pass it "
                                 "decoded (a PIL image or a uint8 array), to be encoded as JPEG")
            raise ValueError("frame given as bytes is not a JPEG (it does not start with the "
                             "FF D8 start-of-image marker)")
        return data
    if not isinstance(frame, np.ndarray) and hasattr(frame, "mode") and hasattr(frame, "convert"):
        # A PIL image; duck-typed so PIL is not a dependency.
        if frame.mode in ("LA", "1", "I", "I;16", "F"):
            frame = frame.convert("L")
        elif frame.mode not in ("L", "RGB"):
            frame = frame.convert("RGB")
    arr = np.asarray(frame)
    if arr.dtype != np.uint8:
        raise TypeError(f"frames must be uint8 arrays, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[:, :, np.newaxis]
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4):
        raise ValueError(f"frame shape {arr.shape} is not (H, W), (H, W, 1), (H, W, 3) or "
                         "(H, W, 4)")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"frame shape {arr.shape} is empty")
    arr = np.ascontiguousarray(arr)
    channels = arr.shape[2]
    if channels == 1:
        return simplejpeg.encode_jpeg(arr, quality=quality, colorspace="GRAY",
                                      colorsubsampling="Gray")
    return simplejpeg.encode_jpeg(arr, quality=quality,
                                  colorspace="RGB" if channels == 3 else "RGBX",
                                  colorsubsampling=subsampling)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


class _OnDemandReader:
    """A data file reader opened at its first use (an iteration that reads nothing opens
    nothing)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._reader: Any = None

    def reader(self) -> Any:
        if self._reader is None:
            self._reader = open_data_file(self.path)
        return self._reader

    def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()


class UnsupportedModeError(NotImplementedError, ValueError):
    """:meth:`GulpChunk.open` with a mode other than ``'rb'``, ``'wb'`` or ``'ab'``: gulpio2 raises
    NotImplementedError, tf_gulp raised ValueError; this is both."""


# --------------------------------------------------------------------------------------------------


class GulpChunk:
    """A gulp chunk: ``data_file_path`` (``.gulp``) plus ``meta_file_path`` (``.gmeta``).

    gulpio2-compatible API (gulpio2's signature ``GulpChunk(data_file_path, meta_file_path,
    serializer, jpeg_decoder)``; the other settings are keyword-only): ``with chunk.open('rb' | 'wb'
    | 'ab'):`` then ``append`` (writing) or ``read_frames`` / ``iter_all`` (reading). Reading also
    works without ``open``: a read then opens the data file for the duration of the call. Reads use
    ``os.pread`` and keep no file position, so a chunk open for reading may be shared by threads;
    writing is single-threaded.

    Args:
        data_file_path: the ``.gulp`` file.
        meta_file_path: the ``.gmeta`` file.
        serializer: reads and writes the ``.gmeta`` file (:mod:`tf_gulp.gulp.serializers`):
            ``json_serializer`` (default; the index is then judged by the core's rules) or another
            object with ``load(path)`` and ``dump(obj, path)``, such as gulpio2's
            ``pickle_serializer``. Anything else raises TypeError.
        jpeg_decoder: optional function ``bytes -> array`` used instead of the built-in decoder
            (:func:`decode_jpeg`, GulpDataset's) when reading.
        jpeg_quality: JPEG quality (1-100) for frames appended as arrays (default 90, gulpio2's:
            :func:`default_jpeg_quality`).
        jpeg_subsampling: chroma subsampling for RGB frames: ``"444"`` (default, as gulpio2),
            ``"422"``, ``"420"``, ``"440"`` or ``"411"``.
        max_clip_bytes: the most bytes one read may return: the decoded frames (checked from the
            JPEG headers before anything is decoded), or the JPEG bytes with :meth:`read_jpegs`.
            A read over it raises :class:`GulpDataError` naming the id. Default 1 GiB.
    """

    def __init__(self, data_file_path: Union[str, os.PathLike],
                 meta_file_path: Union[str, os.PathLike], serializer: Any = json_serializer,
                 jpeg_decoder: Optional[JpegDecoder] = None, *,
                 jpeg_quality: Optional[int] = None, jpeg_subsampling: str = "444",
                 max_clip_bytes: int = DEFAULT_MAX_CLIP_BYTES) -> None:
        if not is_serializer(serializer):
            # Before gulpio2's signature, the third argument was jpeg_quality: say so.
            raise TypeError(
                f"serializer must be an object with load(path) and dump(obj, path) such as "
                f"tf_gulp.gulp.serializers.json_serializer, got {serializer!r}; JPEG settings are "
                "keyword-only (jpeg_quality=..., jpeg_subsampling=...)")
        A.optional_callable(jpeg_decoder, "jpeg_decoder", what="GulpChunk: ",
                            example="simplejpeg.decode_jpeg")
        if jpeg_quality is None:
            jpeg_quality = default_jpeg_quality()
        jpeg_quality = A.integer(jpeg_quality, "jpeg_quality", minimum=1, maximum=100,
                                 what="GulpChunk: ")
        A.choice(jpeg_subsampling, "jpeg_subsampling", _SUBSAMPLINGS, what="GulpChunk: ")
        self.data_file_path: str = os.fspath(data_file_path)
        self.meta_file_path: str = os.fspath(meta_file_path)
        self.serializer = serializer
        self.jpeg_quality = int(jpeg_quality)
        self.jpeg_subsampling = jpeg_subsampling
        self.jpeg_decoder = jpeg_decoder
        self.max_clip_bytes = check_max_clip_bytes(max_clip_bytes)
        self._meta_dict: Optional[Dict[str, Any]] = None
        # thread id -> the data file an iter_all of that thread opened (see iter_all).
        self._iter_readers: Dict[int, _OnDemandReader] = {}
        self._reset_open_state()

    def _reset_open_state(self) -> None:
        self._mode: Optional[str] = None
        self._reader: Any = None  # the data file, open for reading (open_data_file)
        self._data_fp: Any = None
        self._data_size = 0            # offset of the next frame written
        self._orig_data_size = 0       # size of the .gulp before an 'ab' append
        self._data_to_publish = False  # whether the data was written under a temporary name

    # -- state ---------------------------------------------------------------------------------

    @property
    def meta_dict(self) -> Dict[str, Any]:
        """The chunk's index, ``{id: {"frame_info": [...], "meta_data": [...]}}`` (loaded from the
        ``.gmeta`` file on first use; empty if the chunk does not exist yet). While the chunk is
        open for writing it includes what was appended so far."""
        if self._meta_dict is None:
            if exists(self.meta_file_path):
                self._meta_dict = self._load_meta()
            else:
                self._meta_dict = {}
        return self._meta_dict

    @meta_dict.setter
    def meta_dict(self, value: Dict[str, Any]) -> None:
        # gulpio2's meta_dict is a plain attribute; code written for it may assign one.
        self._meta_dict = value

    def _load_meta(self) -> Dict[str, Any]:
        if isinstance(self.serializer, JSONSerializer):
            return load_meta_file(self.meta_file_path, self.data_file_path)
        # Another format (gulpio2's pickle_serializer, ...): the core cannot judge it; reads still
        # check every frame's range against the data file before reading it.
        return self.serializer.load(self.meta_file_path)

    @property
    def fp(self) -> Any:
        """gulpio2's ``fp``: ``None`` unless the chunk is open; while open for writing, the data
        file object; while open for reading, the positional reader of the data file (``pread``,
        ``size``; it keeps no position, so threads may share it)."""
        return self._data_fp if self._data_fp is not None else self._reader

    @property
    def data_tmp_path(self) -> str:
        """Where the ``.gulp`` is written before it is renamed into place."""
        return self.data_file_path + _TMP_SUFFIX

    @property
    def meta_tmp_path(self) -> str:
        """Where the ``.gmeta`` is written before it is renamed into place."""
        return self.meta_file_path + _TMP_SUFFIX

    def __contains__(self, id_: Any) -> bool:
        return normalize_id(id_) in self.meta_dict

    def __len__(self) -> int:
        """Number of ids in the chunk."""
        return len(self.meta_dict)

    def __repr__(self) -> str:
        return (f"GulpChunk({self.data_file_path!r}, {self.meta_file_path!r}"
                f"{', open ' + repr(self._mode) if self._mode else ''})")

    def __getstate__(self) -> Dict[str, Any]:
        # A pickled chunk (e.g. sent to an ingestion worker) is always closed.
        state = self.__dict__.copy()
        state.update(_mode=None, _reader=None, _iter_readers={}, _data_fp=None, _data_size=0,
                     _orig_data_size=0, _data_to_publish=False)
        return state

    # -- open / close --------------------------------------------------------------------------

    @contextlib.contextmanager
    def open(self, flag: str = "rb") -> Iterator["GulpChunk"]:
        """Open the chunk for reading (``'rb'``), writing (``'wb'``) or appending (``'ab'``).

        ``'wb'`` replaces any existing chunk completely when the block ends; ``'ab'`` keeps the
        existing frames and adds new ones (on a chunk that does not exist yet it is ``'wb'``). The
        new chunk is published (fsynced and renamed into place) when the ``with`` block ends
        normally; if it raises, nothing is published and the previous chunk is left as it was.
        """
        if flag not in ("rb", "wb", "ab"):
            raise UnsupportedModeError(f"{self.data_file_path}: GulpChunk.open supports the modes "
                                      f"'rb', 'wb' and 'ab', not {flag!r}")
        if flag != "rb" and (is_remote(self.data_file_path) or is_remote(self.meta_file_path)):
            raise ValueError(f"{self.data_file_path}: gulp chunks are written to local "
                             "directories only (a crash-safe write needs fsync and rename); write "
                             "locally, then copy the files (e.g. with tf.io.gfile.copy)")
        if self._mode is not None:
            raise RuntimeError(f"{self!r} is already open")
        if flag == "rb":
            self._open_read()
            try:
                yield self
            finally:
                self._close_read()
            return
        self._open_write(flag)
        try:
            yield self
            self._commit()
        except BaseException:
            self._abort()
            raise

    def _open_read(self) -> None:
        self._meta_dict = None  # re-read the index: the chunk may have changed since
        self._meta_dict = self.meta_dict
        self._reader = open_data_file(self.data_file_path)
        self._mode = "rb"

    def _close_read(self) -> None:
        reader = self._reader
        self._reset_open_state()
        if reader is not None:
            reader.close()

    def _open_write(self, flag: str) -> None:
        if flag == "ab" and os.path.exists(self.meta_file_path):
            # The core's rules refuse an inconsistent chunk (a frame past the end of the data
            # file, frames sharing bytes): nothing is appended to one.
            meta = self._load_meta()
            size = os.path.getsize(self.data_file_path)
            self._meta_dict = meta
            with writing_output(self.data_file_path):
                self._data_fp = open(self.data_file_path, "ab")
            self._data_size = self._orig_data_size = size
            self._data_to_publish = False
        else:
            self._meta_dict = {}
            with writing_output(self.data_tmp_path):
                self._data_fp = open(self.data_tmp_path, "wb")
            self._data_size = 0
            self._data_to_publish = True
        self._mode = flag

    def _write_meta_tmp(self) -> None:
        if not isinstance(self.serializer, JSONSerializer):
            with writing_output(self.meta_tmp_path):
                self.serializer.dump(self._meta_dict, self.meta_tmp_path)
            fd = os.open(self.meta_tmp_path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            return
        with writing_output(self.meta_tmp_path), \
                open(self.meta_tmp_path, "w", encoding="utf-8") as f:
            json.dump(self._meta_dict, f)
            f.flush()
            os.fsync(f.fileno())

    def _commit(self) -> None:
        # An OSError here (a full disk, a read-only file system) is the output's: OutputError.
        with writing_output(self.data_file_path):
            self._publish()

    def _publish(self) -> None:
        self.flush()
        fp, self._data_fp = self._data_fp, None
        fp.close()
        if self._data_to_publish:
            if os.path.lexists(self.meta_file_path):
                # The chunk being replaced disappears before the new one appears.
                os.unlink(self.meta_file_path)
            replace_durably(self.data_tmp_path, self.data_file_path)
        replace_durably(self.meta_tmp_path, self.meta_file_path)
        self._reset_open_state()

    def _abort(self) -> None:
        fp = self._data_fp
        if fp is not None:
            with contextlib.suppress(OSError):
                fp.close()
        if self._data_to_publish:
            _unlink_quietly(self.data_tmp_path)
        elif self._mode == "ab":
            with contextlib.suppress(OSError):
                os.truncate(self.data_file_path, self._orig_data_size)
        _unlink_quietly(self.meta_tmp_path)
        self._meta_dict = None  # reload what is on disk when next used
        self._reset_open_state()

    # -- writing -------------------------------------------------------------------------------

    def append(self, id_: Any, meta_data: Any, frames: Iterable[Frame]) -> None:
        """Append one video: its frames (encoded as JPEG, see :func:`encode_frame`) and its meta.

        ``id_`` is stored as ``str(id_)``; ``meta_data`` must be JSON-serializable. Appending an id
        already in the chunk adds its frames after the existing ones and a second meta entry. All
        frames are encoded before anything is written, so a bad frame leaves the chunk as it was.
        """
        if self._mode not in ("wb", "ab"):
            raise RuntimeError("GulpChunk.append needs the chunk open with 'wb' or 'ab'")
        key = normalize_id(id_)
        try:
            json.dumps(meta_data)
        except (TypeError, ValueError) as e:
            raise TypeError(f"meta_data of id {key!r} is not JSON-serializable: {e}") from e
        jpegs = [encode_frame(f, self.jpeg_quality, self.jpeg_subsampling) for f in frames]
        infos = []
        write = self._data_fp.write
        # Failed writes are the output's fault (a full disk), never the item's: OutputError.
        with writing_output(self.data_tmp_path if self._data_to_publish else self.data_file_path):
            for jpeg in jpegs:
                pad = -len(jpeg) % 4
                write(jpeg)
                if pad:
                    write(b"\0" * pad)
                infos.append([self._data_size, pad, len(jpeg) + pad])
                self._data_size += len(jpeg) + pad
        entry = self.meta_dict.setdefault(key, {"frame_info": [], "meta_data": []})
        entry["frame_info"].extend(infos)
        entry["meta_data"].append(meta_data)

    def flush(self) -> None:
        """Make what was appended so far durable (fsync the data and a complete ``.gmeta`` under its
        temporary name). It is published only when the ``with chunk.open(...)`` block ends.
        No-op unless the chunk is open for writing."""
        if self._data_fp is None:
            return
        with writing_output(self.data_tmp_path if self._data_to_publish else self.data_file_path):
            self._data_fp.flush()
            os.fsync(self._data_fp.fileno())
        self._write_meta_tmp()

    # -- reading -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _reading_file(self) -> Iterator[Any]:
        if self._mode == "rb":
            yield self._reader
        elif self._mode is None:
            borrowed = self._iter_readers.get(threading.get_ident())
            if borrowed is not None:
                yield borrowed.reader()
                return
            file = open_data_file(self.data_file_path)
            try:
                yield file
            finally:
                file.close()
        else:
            raise RuntimeError(f"{self!r}: cannot read while open for writing")

    def _read(self, file: Any, key: str, selection: FrameSelection,
              decode: bool) -> Tuple[List[Any], Any]:
        entry = self.meta_dict[key]
        frames = read_element(file, self.meta_file_path, key, entry["frame_info"], selection,
                              decode, self.jpeg_decoder, self.max_clip_bytes)
        return frames, first_meta(entry)

    def read_frames(self, id_: Any,
                    slice_: FrameSelection = None) -> Tuple[List[np.ndarray], Any]:
        """Decode the frames of ``id_`` (all, or those picked by ``slice_``: a slice, an int or a
        list of ints). Returns ``(frames, meta_data[0])``; frames are uint8 (H, W, 3) RGB or (H, W)
        gray arrays. Unknown id: KeyError."""
        key = normalize_id(id_)
        if key not in self.meta_dict:
            raise KeyError(id_)
        with self._reading_file() as file:
            return self._read(file, key, slice_, decode=True)

    def read_jpegs(self, id_: Any, slice_: FrameSelection = None) -> Tuple[List[bytes], Any]:
        """Like :meth:`read_frames` but returns each frame's JPEG bytes (padding stripped)."""
        key = normalize_id(id_)
        if key not in self.meta_dict:
            raise KeyError(id_)
        with self._reading_file() as file:
            return self._read(file, key, slice_, decode=False)

    def iter_all(self, accepted_ids: Optional[Iterable[Any]] = None,
                 shuffle: bool = False) -> Iterator[Tuple[List[np.ndarray], Any]]:
        """Yield ``(frames, meta_data[0])`` for every id in storage order (or, if ``shuffle``, in
        the order ``numpy.random.shuffle`` gives, as gulpio2: ``np.random.seed`` repeats it),
        keeping only ``accepted_ids`` when given. Each item is read with :meth:`read_frames`, as
        in gulpio2. A chunk that is not open is not opened (threads may iterate one chunk at the
        same time): the data file is opened once for this iteration, and the reads of this
        thread use it meanwhile."""
        ids = list(self.meta_dict)
        if accepted_ids is not None:
            accepted = {normalize_id(i) for i in accepted_ids}
            ids = [i for i in ids if i in accepted]
        if shuffle:
            np.random.shuffle(ids)
        thread = threading.get_ident()
        if self._mode is not None or thread in self._iter_readers:
            # Open (`with chunk.open(): for frames, meta in chunk: ...`), or inside another
            # iteration of this thread, whose reader serves while it lasts.
            for key in ids:
                yield self.read_frames(key)
            return
        self._iter_readers[thread] = borrowed = _OnDemandReader(self.data_file_path)
        try:
            for key in ids:
                yield self.read_frames(key)
        finally:
            # Reads after this (an interleaved iteration, a later call) open their own.
            del self._iter_readers[thread]
            borrowed.close()

    def __iter__(self) -> Iterator[Tuple[List[np.ndarray], Any]]:
        return self.iter_all()

    def __getitem__(self, element: Any) -> Tuple[List[np.ndarray], Any]:
        """``chunk[id]`` or ``chunk[id, selection]``: same as :meth:`read_frames`."""
        id_, selection = split_element(element)
        return self.read_frames(id_, selection)
