"""Keeps the destruction of tf.data iterators out of the benchmarks' timed runs, and times it apart.

Destroying a tf.data iterator stops TensorFlow's autotuning thread (on by default, for every
pipeline: GulpDataset, FFRecordDataset, TFRecordDataset alike). On the 2-core development machine
that took from 0 to 0.3 s per iterator, at random. A training epoch pays it once; a benchmark run
of 0.2-1 s would be measuring it instead of reading and decoding, which is how some runs of the
same reader came out at half or three quarters of the others' speed.

So a benchmark iterates with ``iterate(ds)``: the iterator is kept alive past its last element, the
clock stops, and ``teardown_seconds()`` then destroys it and returns how long that took, which the
benchmarks report in a column of their own.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, List

_RETIRED: List[Any] = []


def iterate(dataset: Any) -> Iterator[Any]:
    """The elements of ``dataset``; its iterator stays alive until ``teardown_seconds()``."""
    iterator = iter(dataset)
    yield from iterator
    _RETIRED.append(iterator)


def teardown_seconds() -> float:
    """Destroys the iterators finished since the last call; returns the seconds it took."""
    start = time.perf_counter()
    _RETIRED.clear()
    return time.perf_counter() - start
