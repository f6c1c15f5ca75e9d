"""gulpio2's ``fileio`` module: its names, for code that imports them from there
(``from gulpio2.fileio import GulpChunk`` becomes ``from tf_gulp.gulp.fileio import GulpChunk``).

The classes are tf_gulp's own (:class:`GulpChunk`, :class:`GulpDirectory`, :class:`ChunkWriter`,
:class:`GulpIngestor`), which keep gulpio2's signatures and defaults; the differences are listed in
docs/compat.md.
"""

from __future__ import annotations

import collections
from typing import Any, List, Tuple

from tf_gulp.gulp.chunk import GulpChunk
from tf_gulp.gulp.chunk_writer import ChunkWriter, chunk_slices
from tf_gulp.gulp.directory import GulpDirectory
from tf_gulp.gulp.ingest import GulpIngestor
from tf_gulp.gulp.serializers import (AbstractSerializer, JSONSerializer, PickleSerializer,
                                      json_serializer, pickle_serializer)
from tf_gulp.gulp.utils import AssertionValueError, img_to_jpeg_bytes, jpeg_bytes_to_img

__all__ = ["AbstractSerializer", "ChunkWriter", "GulpChunk", "GulpDirectory", "GulpIngestor",
           "ImgInfo", "JSONSerializer", "PickleSerializer", "calculate_chunk_slices",
           "extract_input_for_getitem", "img_to_jpeg_bytes", "jpeg_bytes_to_img",
           "json_serializer", "pickle_serializer"]

#: One ``frame_info`` entry of a ``.gmeta`` file: ``[loc (offset), pad, length]``.
ImgInfo = collections.namedtuple("ImgInfo", ["loc", "pad", "length"])


def extract_input_for_getitem(element: Any) -> Tuple[str, Any]:
    """Split a ``__getitem__`` argument as gulpio2 does: ``id`` (an int or a str) or ``(id,
    selection)``; returns ``(str(id), selection or None)``. Anything else raises TypeError."""
    if isinstance(element, tuple) and len(element) == 2:
        id_, selection = element
    elif isinstance(element, (int, str)):
        id_, selection = element, None
    else:
        raise TypeError(f"Undefined input type! id or (id, slice) expected, got {element!r}")
    return str(id_), selection


def calculate_chunk_slices(items_per_chunk: int, num_items: int) -> List[slice]:
    """gulpio2's chunking: consecutive slices of ``items_per_chunk`` over ``range(num_items)``.

    Both numbers must be positive: otherwise :class:`~tf_gulp.gulp.utils.AssertionValueError`
    (an AssertionError, as gulpio2's ``assert``, and a ValueError)."""
    if items_per_chunk <= 0:
        raise AssertionValueError(f"items_per_chunk must be positive, got {items_per_chunk}")
    if num_items <= 0:
        raise AssertionValueError(f"num_items must be positive, got {num_items}")
    return chunk_slices(items_per_chunk, num_items)
