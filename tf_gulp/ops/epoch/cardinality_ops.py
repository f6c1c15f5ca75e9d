"""A known cardinality stated without assertion (known_cardinality_dataset_op.cc).

tf.data's ``assert_cardinality`` fails on tf.data service workers under dynamic sharding (each
yields only the splits it is handed); this op states the count of a plain pass and checks nothing.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from tf_gulp.ops.library import load_ops


class KnownCardinalityDataset(dataset_ops.UnaryUnchangedStructureDataset):
    """`input_dataset` unchanged, with ``cardinality()`` = `cardinality` (a count the caller
    knows to be exact for a plain iterator, or ``tf.data.INFINITE_CARDINALITY``)."""

    def __init__(self, input_dataset: tf.data.Dataset, cardinality: int) -> None:
        self._input_dataset = input_dataset
        variant = load_ops().tf_gulp_known_cardinality_dataset(
            input_dataset._variant_tensor,  # pylint: disable=protected-access
            tf.constant(int(cardinality), tf.int64),
            **self._flat_structure)
        super().__init__(input_dataset, variant)
