"""gulpio2's meta-file serializers: how a :class:`~tf_gulp.gulp.GulpChunk` reads and writes its
``.gmeta`` file (``GulpChunk(data, meta, serializer, jpeg_decoder)``).

:data:`json_serializer` is the format every reader uses (gulpio2, GulpDirectory, GulpDataset,
``tf-gulp check``); with it a chunk's index is read and judged by the C++ core. A chunk written
with :data:`pickle_serializer` (or any other) is read back only by a ``GulpChunk`` given the same
serializer, as in gulpio2.
"""

from __future__ import annotations

import abc
import collections
import json
import pickle
from typing import Any

__all__ = ["AbstractSerializer", "JSONSerializer", "PickleSerializer", "is_serializer",
           "json_serializer", "pickle_serializer"]


class AbstractSerializer(abc.ABC):
    """Reads and writes a chunk's index (a dict) from and to a file."""

    @abc.abstractmethod
    def load(self, file_name: str) -> Any:
        """The object stored in ``file_name``."""

    @abc.abstractmethod
    def dump(self, thing: Any, file_name: str) -> None:
        """Store ``thing`` in ``file_name`` (replacing it)."""


class JSONSerializer(AbstractSerializer):
    """JSON, the ``.gmeta`` format (objects load as ``OrderedDict``, as gulpio2's)."""

    def load(self, file_name: str) -> Any:
        with open(file_name, "r", encoding="utf-8") as f:
            return json.load(f, object_pairs_hook=collections.OrderedDict)

    def dump(self, thing: Any, file_name: str) -> None:
        with open(file_name, "w", encoding="utf-8") as f:
            json.dump(thing, f)


class PickleSerializer(AbstractSerializer):
    """Python's pickle. Only for files this process trusts: loading a pickle runs code."""

    def load(self, file_name: str) -> Any:
        with open(file_name, "rb") as f:
            return pickle.load(f)

    def dump(self, thing: Any, file_name: str) -> None:
        with open(file_name, "wb") as f:
            pickle.dump(thing, f)


#: The default serializer of gulpio2's and our GulpChunk.
json_serializer = JSONSerializer()
#: gulpio2's pickle serializer.
pickle_serializer = PickleSerializer()


def is_serializer(obj: Any) -> bool:
    """Whether ``obj`` can serve as a serializer (callable ``load`` and ``dump``)."""
    return callable(getattr(obj, "load", None)) and callable(getattr(obj, "dump", None))
