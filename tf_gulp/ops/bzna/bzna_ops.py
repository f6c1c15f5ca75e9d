"""Python wrappers of the Benzina ops for tests (bzna_index_op.cc). The BznaDataset op (the source
of :class:`tf_gulp.BenzinaDataset`) has none: the class reads its options from the registration
(tf_gulp/_options.py) and makes it. ``bzna_track_index`` and ``bzna_index_cache_stats``
serve tests and benchmarks only: their ops are named ``TfGulp>InternalTesting...``, so no graph
that users keep should record them.
"""

from __future__ import annotations

from typing import Tuple

import tensorflow as tf

from tf_gulp.ops.library import load_ops

tf.no_gradient("TfGulp>InternalTestingBznaTrackIndex")
tf.no_gradient("TfGulp>InternalTestingBznaIndexCacheStats")


def bzna_track_index(path, track: str):
    """(offsets, sizes): int64 byte ranges of every sample of the MP4 track named `track`.
    For tests."""
    return load_ops().tf_gulp_internal_testing_bzna_track_index(
        path=tf.convert_to_tensor(path, tf.string), track=tf.convert_to_tensor(track, tf.string))


def bzna_index_cache_stats() -> Tuple[int, int]:
    """(reads, hits) of this process's Benzina entry index cache: how many times a
    ``BenzinaDataset`` kernel read a container's index from its file, and how many times it was
    served from the cache (a file is read again when its size or modification time changed).
    For tests and benchmarks."""
    reads, hits = load_ops().tf_gulp_internal_testing_bzna_index_cache_stats().numpy().tolist()
    return int(reads), int(hits)
