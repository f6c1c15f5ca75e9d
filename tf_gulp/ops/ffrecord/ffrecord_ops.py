"""Python wrapper of the FFRecordDataset op (registered in ffrecord_ops.cc).

Only argument translation lives here; users call :class:`tf_gulp.FFRecordDataset`.
"""

from __future__ import annotations

from typing import Sequence, Union

import tensorflow as tf

from tf_gulp.ops.epoch.epoch_ops import new_epoch_counter
from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

OP_NAME = "TfGulp>FFRecordDataset"


def ffrecord_dataset_variant(
    paths: Union[str, Sequence[str], tf.Tensor],
    *,
    batch_size: int,
    drop_remainder: bool,
    shuffle: bool,
    seed: int,
    check_data: bool,
    queue_depth: int,
    io_engine: str,
    direct_io: bool,
    keys: bool = False,
    num_shards: int = 1,
    shard_index: int = 0,
    first_epoch: int = 0,
) -> tf.Tensor:
    """Creates the variant tensor of an FFRecordDataset (see tf_gulp.FFRecordDataset).

    `batch_size` 0 means one record per element; `queue_depth` 0 means the batch size.

    Raises ValueError for an io_engine the op's registration does not allow, naming the allowed
    values. A queue_depth over the most reads a ring holds (the C++ core's kMaxQueueDepth) is
    the kernel's tf.errors.InvalidArgumentError, raised when the dataset is made.
    """
    check_attr(OP_NAME, "io_engine", io_engine)
    return load_ops().tf_gulp_ff_record_dataset(
        paths=tf.convert_to_tensor(paths, tf.string),
        batch_size=int(batch_size),
        drop_remainder=bool(drop_remainder),
        shuffle=bool(shuffle),
        seed=int(seed),
        check_data=bool(check_data),
        queue_depth=int(queue_depth),
        io_engine=str(io_engine),
        direct_io=bool(direct_io),
        keys=bool(keys),
        num_shards=int(num_shards),
        shard_index=int(shard_index),
        first_epoch=int(first_epoch),
        epoch_counter=new_epoch_counter(),
    )
