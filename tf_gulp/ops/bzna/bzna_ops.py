"""Python wrappers of the BznaDataset op (bzna_dataset_op.cc: tf_gulp.BenzinaDataset's source) and
of the Benzina ops for tests (bzna_index_op.cc).

Users call :class:`tf_gulp.BenzinaDataset`. ``bzna_track_index`` and ``bzna_index_cache_stats``
serve tests and benchmarks only: their ops are named ``TfGulp>InternalTesting...``, so no graph
that users keep should record them.
"""

from __future__ import annotations

from typing import Tuple

import tensorflow as tf

from tf_gulp.ops.epoch.epoch_ops import new_epoch_counter
from tf_gulp.ops.library import load_ops

OP_NAME = "TfGulp>BznaDataset"

tf.no_gradient("TfGulp>InternalTestingBznaTrackIndex")
tf.no_gradient("TfGulp>InternalTestingBznaIndexCacheStats")


def bzna_dataset_variant(path: str, *, start: int, stop: int, shuffle: bool, seed: int,
                         names: bool = False, num_shards: int = 1, shard_index: int = 0,
                         first_epoch: int = 0) -> tf.Tensor:
    """Creates the variant tensor of a BznaDataset op (see tf_gulp.BenzinaDataset): the
    entries [start, stop) of the container, elements (epoch, index, label, sample[, what])."""
    return load_ops().tf_gulp_bzna_dataset(
        path=tf.convert_to_tensor(path, tf.string), start=int(start), stop=int(stop),
        shuffle=bool(shuffle), seed=int(seed), names=bool(names), num_shards=int(num_shards),
        shard_index=int(shard_index), first_epoch=int(first_epoch),
        epoch_counter=new_epoch_counter())


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
