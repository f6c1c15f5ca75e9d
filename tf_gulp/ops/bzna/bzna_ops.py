"""Python wrappers of the Benzina index ops (bzna_index_op.cc), ReadFileRange
(read_file_range_op.cc) and BznaEpochOrder (bzna_epoch_order_op.cc).

Used by tf_gulp.bzna.dataset; the index op runs inside the dataset graph. ``bzna_track_index`` and
``bzna_index_cache_stats`` serve tests and benchmarks only: their ops are named
``TfGulp>InternalTesting...``, so no graph that users keep should record them.
"""

from __future__ import annotations

from typing import Tuple

import tensorflow as tf

from tf_gulp.ops.library import load_ops

tf.no_gradient("TfGulp>InternalTestingBznaTrackIndex")
tf.no_gradient("TfGulp>BznaEntryIndex")
tf.no_gradient("TfGulp>InternalTestingBznaIndexCacheStats")
tf.no_gradient("TfGulp>ReadFileRange")


def bzna_track_index(path, track: str):
    """(offsets, sizes): int64 byte ranges of every sample of the MP4 track named `track`.
    For tests."""
    return load_ops().tf_gulp_internal_testing_bzna_track_index(
        path=tf.convert_to_tensor(path, tf.string), track=str(track))


def bzna_entry_index(path):
    """(offsets, sizes, target_offsets): per entry of a Benzina container, the int64 byte range
    of its per-image MP4 (bzna_input) and the offset of its 8-byte target (-1 for entries without one).
    Judged by cc/mp4/bzna_container (as tf_gulp._core judges it for the Python readers)."""
    return load_ops().tf_gulp_bzna_entry_index(path=tf.convert_to_tensor(path, tf.string))


def bzna_index_cache_stats() -> Tuple[int, int]:
    """(reads, hits) of this process's Benzina entry index cache: how many times
    :func:`bzna_entry_index` read a container's index from its file, and how many times it was
    served from the cache (a file is read again when its size or modification time changed).
    For tests and benchmarks."""
    reads, hits = load_ops().tf_gulp_internal_testing_bzna_index_cache_stats().numpy().tolist()
    return int(reads), int(hits)


def read_file_range(path, offset, size) -> tf.Tensor:
    """Exactly `size` bytes at `offset` of the file `path` (DataLossError past its end)."""
    return load_ops().tf_gulp_read_file_range(path=tf.convert_to_tensor(path, tf.string),
                                      offset=tf.cast(offset, tf.int64),
                                      size=tf.cast(size, tf.int64))


tf.no_gradient("TfGulp>BznaEpochOrder")


def bzna_epoch_order(count, seed, epoch, positions) -> tf.Tensor:
    """int64 like `positions`: the entries visited at these positions of one shuffled epoch of
    `count` entries (each in [0, count)); a permutation keyed by (seed, epoch), FFRecordDataset's
    record order (bzna_epoch_order_op.cc, cc/util/record_order.h), O(1) per position."""
    return load_ops().tf_gulp_bzna_epoch_order(count=tf.cast(count, tf.int64),
                                               seed=tf.cast(seed, tf.int64),
                                               epoch=tf.cast(epoch, tf.int64),
                                               positions=tf.cast(positions, tf.int64))
