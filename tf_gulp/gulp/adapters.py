"""Dataset adapters: the source side of gulp ingestion.

An adapter describes a collection of videos (or images) to be written into a gulp directory by
:class:`tf_gulp.gulp.GulpIngestor`. It follows gulpio2's adapter contract, so adapters written for
gulpio2 work here unchanged:

* ``len(adapter)`` is the number of items;
* ``adapter.iter_data(slice_element)`` yields the items selected by ``slice_element`` (a ``slice``
  over ``range(len(adapter))``, or ``None`` for all of them), in order, each as a dict::

      {"id": <str or int>, "meta": <JSON-serializable dict>, "frames": <iterable of frames>}

  where a frame is a uint8 numpy array ((H, W, 3) RGB, (H, W) or (H, W, 1) gray, (H, W, 4) RGBA
  whose alpha is dropped) or the bytes of an already-encoded JPEG, which is stored as is.

With ``num_workers > 1`` the ingestor sends the adapter to worker processes, so an adapter must be
picklable: keep file paths and small lists in it, not open files or decoded videos, and load the
frames inside ``iter_data``.
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Iterator, Optional

__all__ = ["AbstractDatasetAdapter"]


class AbstractDatasetAdapter(abc.ABC):
    """Base class of the adapters that :class:`~tf_gulp.gulp.GulpIngestor` reads from.

    Subclasses implement :meth:`iter_data` and :meth:`__len__`.
    """

    @abc.abstractmethod
    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        """Yield the items selected by ``slice_element``.

        Args:
            slice_element: a ``slice`` of the item indices ``range(len(self))``; ``None`` means
                every item. The ingestor passes contiguous, step-1 slices, one per chunk.

        Yields:
            dicts ``{"id": id, "meta": meta, "frames": frames}``: ``id`` is stored as ``str(id)``,
            ``meta`` must be JSON-serializable, ``frames`` is a sequence of uint8 arrays or JPEG
            bytes (see the module docstring).
        """

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of items this adapter yields for ``iter_data(None)``."""
