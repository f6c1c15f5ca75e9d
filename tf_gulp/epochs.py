"""Epoch counts in iterator checkpoints, for pipelines whose tf_gulp datasets come and go.

Every tf_gulp dataset numbers its passes (epochs) and derives its shuffle order and random choices
from (seed, epoch, element). A checkpoint of an iterator restores those numbers from the tf_gulp
iterators it holds. A pipeline that makes tf_gulp datasets inside a function, such as an
``interleave`` over several directories with ``num_parallel_calls``, may hold none of them at the
moment a checkpoint is written (the interleave has read them to the end and keeps only their
elements); :func:`keep_epoch_counts` makes such a checkpoint exact.
"""

from __future__ import annotations

from typing import Callable

import tensorflow as tf

from tf_gulp.ops.epoch.epoch_ops import EpochCountsDataset


def keep_epoch_counts() -> Callable[[tf.data.Dataset], tf.data.Dataset]:
    """A transformation for ``ds.apply(...)``: the dataset unchanged, and every iterator checkpoint
    of it carries the epoch counts of the tf_gulp datasets inside it, so that a restore (in a new
    process too) continues with the epochs (and shuffle orders) the uninterrupted run would have had.

    Apply it last, to the dataset whose iterator is checkpointed; restore into the same pipeline
    built by the same code (the counts are matched to its tf_gulp datasets in the order they are
    constructed). It costs one pass-through per element.

    >>> dirs = tf.data.Dataset.from_tensor_slices(["/data/gulp_a", "/data/gulp_b"])  # doctest: +SKIP
    >>> ds = dirs.interleave(lambda d: tf_gulp.GulpDataset(d, shuffle=True, seed=0),
    ...                      num_parallel_calls=tf.data.AUTOTUNE).repeat()            # doctest: +SKIP
    >>> ds = ds.apply(tf_gulp.keep_epoch_counts())                                    # doctest: +SKIP
    """

    def apply(dataset: tf.data.Dataset) -> tf.data.Dataset:
        return EpochCountsDataset(dataset)

    return apply
