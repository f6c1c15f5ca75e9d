"""Gulp indexes for the Python readers, parsed and judged by the C++ core.

The gulp rules (what a ``.gmeta`` may hold, which files make a chunk, what the ingest record
says) exist once, in ``cc/gulp`` (see ``cc/gulp/problem.h``); GulpDataset uses them directly and
this module reaches them through ``tf_gulp._core``, so :class:`~tf_gulp.gulp.GulpDirectory`,
:class:`~tf_gulp.gulp.GulpChunk`, ``tf-gulp check`` and ``tf-gulp info`` refuse exactly what the
dataset refuses, with the same message. Paths may be local or on any of TensorFlow's file
systems (``gs://``, ``ram://``, ...; read through ``tf.io.gfile``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional

from tf_gulp._remote_core import use_remote_paths_in_core
from tf_gulp._runtime_libs import import_core as _core  # called where used: docs build without it

__all__ = ["GulpDataError", "check_directory_index", "check_ingest_record", "load_chunk_index",
           "load_directory_index", "meta_dict"]


class GulpDataError(ValueError):
    """A gulp file's contents are inconsistent (bad index entry, frame past the end of the file,
    undecodable JPEG, unreadable ``.gmeta``). The message names the file and, where known, the id,
    the frame and the byte offset."""


#: Default limit on one clip (``max_clip_bytes``): its decoded frames, or its JPEG bytes when not
#: decoding. 1 GiB: about 170 frames of 1920x1080 RGB, or 4,000 of 320x240. GulpDataset's
#: default (``cc/gulp/clip_reader.h``; tests/test_op_attrs.py checks the two agree).
DEFAULT_MAX_CLIP_BYTES = 1 << 30


def _judged(call: Callable[[], Any]) -> Any:
    """``call()``, with the core's verdicts as this package's exceptions: damaged data as
    :class:`GulpDataError`, a missing file as ``FileNotFoundError`` (both name the file)."""
    try:
        return call()
    except FileNotFoundError:
        raise
    except ValueError as e:  # _core.DataLossError and InvalidArgument
        raise GulpDataError(str(e)) from None


def load_directory_index(path: str, require_chunks: bool = True) -> List[Dict[str, Any]]:
    """The chunks of the gulp directory ``path`` in numeric order, each a dict with ``number``,
    ``data_path``, ``meta_path``, ``data_size``, ``ids``, ``frame_counts`` (frames per id),
    ``frames`` (an (N, 3) int64 array of ``[offset, pad, total_length]``) and ``meta_data`` (JSON
    text of the ids' ``meta_data`` lists). Raises the first error the rules find; a directory
    without chunks is one unless ``require_chunks`` is False."""
    use_remote_paths_in_core(path)
    return _judged(lambda: _core().gulp_load_directory(path, require_chunks))


def load_chunk_index(meta_path: str, data_path: str) -> Dict[str, Any]:
    """One chunk's index (a dict as in :func:`load_directory_index`, ``number`` -1)."""
    use_remote_paths_in_core(meta_path)
    use_remote_paths_in_core(data_path)
    return _judged(lambda: _core().gulp_load_chunk(meta_path, data_path))


def load_label_map(path: str) -> Dict[str, int]:
    """``label2idx.json`` at ``path`` as ``{label: index}``, by the rules GulpDataset applies (a
    JSON object of int64 indexes); :class:`GulpDataError` naming the file otherwise."""
    use_remote_paths_in_core(path)
    return _judged(lambda: _core().gulp_load_label_map(path))


def meta_dict(chunk: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """gulpio2's view of a chunk index: ``{id: {"frame_info": [[offset, pad, total_length],
    ...], "meta_data": [...]}}`` in storage order."""
    frames = chunk["frames"].tolist()
    metas = json.loads(chunk["meta_data"])
    out: Dict[str, Dict[str, Any]] = {}
    start = 0
    for key, count, meta in zip(chunk["ids"], chunk["frame_counts"].tolist(), metas):
        out[key] = {"frame_info": frames[start:start + count], "meta_data": meta}
        start += count
    return out


def check_directory_index(path: str, label_field: str = "label",
                          progress: Optional[Callable[[int], None]] = None) -> Dict[str, Any]:
    """Every finding of the rules on the directory ``path``: ``{"chunks": [...] (as
    :func:`load_directory_index`, or [] when an index failed), "problems": [{"severity", "file",
    "id", "frame", "offset", "message"}, ...], "notes": [...], "record_valid": bool}``.
    ``progress(bytes)`` is called after each chunk's index is checked."""
    use_remote_paths_in_core(path)
    return _core().gulp_check_directory(path, label_field or "", progress)


def check_ingest_record(text: bytes, path: str) -> Optional[str]:
    """Why ``text`` (the contents of the ingest record at ``path``) is not a valid record, or
    None."""
    return _core().gulp_check_ingest_record(text, path)
