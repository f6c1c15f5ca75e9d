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


def keras_backup_epoch(backup_dir: str) -> int:
    """The Keras epoch a ``model.fit`` resumed by ``tf.keras.callbacks.BackupAndRestore(backup_dir)``
    starts at: the epoch after the last one it completed (0 when nothing was backed up). Pass it as
    ``epoch=`` to the tf_gulp dataset, and as ``initial_epoch=`` to ``fit``, and give ``fit`` the
    dataset repeated with ``steps_per_epoch`` (one iterator, one pass per Keras epoch: over a
    finite dataset Keras 3 opens two iterators per epoch), so that Keras epoch k is the dataset's
    epoch k (its order, frame offsets and crops) in the resumed run as in an uninterrupted one::

        start = tf_gulp.epochs.keras_backup_epoch(backup_dir)
        ds = tf_gulp.GulpDataset(path, shuffle=True, seed=0, ..., epoch=start).batch(32)
        model.fit(ds.repeat(), steps_per_epoch=int(ds.cardinality()), epochs=90,
                  initial_epoch=start,
                  callbacks=[tf.keras.callbacks.BackupAndRestore(backup_dir)])

    It reads what Keras 3's ``BackupAndRestore`` writes (``training_metadata.json``'s ``epoch``,
    with ``save_freq="epoch"``, its default: a run killed inside epoch k resumes at k's start).

    Raises:
      ValueError: the backup's metadata is not Keras 3's (naming the file).
    """
    import json
    import os

    path = os.path.join(os.fspath(backup_dir), "training_metadata.json")
    if not tf.io.gfile.exists(path):
        return 0
    with tf.io.gfile.GFile(path, "r") as f:
        text = f.read()
    try:
        epoch = json.loads(text)["epoch"]
    except (ValueError, KeyError, TypeError):
        epoch = None
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
        raise ValueError(f"{path}: not Keras 3 BackupAndRestore's metadata (an 'epoch' >= 0), "
                         f"got {text[:200]!r}")
    return epoch
