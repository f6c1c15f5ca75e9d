"""Epoch counters shared by every re-creation of a dataset (see tf_gulp/ops/framework/epoch_counter.h).

Each Python dataset draws one counter name when it is constructed; the C++ dataset ops take it as
the ``epoch_counter`` attr and count the passes (iterators) over each of their inputs in a counter of
that name in the device's resource manager. Graph rewrites, ``repeat()``, Keras epochs and every call
of an ``interleave`` function re-create the dataset from its graph, and all find the same counter, so
each pass gets the next epoch number (a new shuffle order, new random frames and warps).
"""

from __future__ import annotations

import itertools
import uuid

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from tf_gulp.ops.library import load_ops


# Names start with the order they were drawn in this process, zero-padded so that sorting the names
# sorts by it: a process that rebuilds a pipeline draws its counters in the same order, which is how
# EpochCountsDataset matches a checkpoint's counts to the rebuilt pipeline's counters.
_draws = itertools.count()
_COUNTER_ATTR = "epoch_counter"


def new_epoch_counter() -> str:
    """A fresh counter name, for one Python dataset object."""
    return f"tf_gulp_epochs_{next(_draws):012d}_{uuid.uuid4().hex}"


def epoch_counters_of(dataset: tf.data.Dataset) -> list[str]:
    """The epoch counters of the tf_gulp datasets in ``dataset``'s graph (its functions too, e.g. an
    ``interleave`` over ``GulpDataset``), in the order they were drawn."""
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(dataset._as_serialized_graph().numpy())  # pylint: disable=protected-access
    nodes = list(graph.node)
    for function in graph.library.function:
        nodes.extend(function.node_def)
    names = set()
    for node in nodes:
        if _COUNTER_ATTR in node.attr:
            name = node.attr[_COUNTER_ATTR].s.decode()
            if name:
                names.add(name)
    return sorted(names)


class EpochDataset(dataset_ops.DatasetSource):
    """One int64 scalar: the number of this pass over ``key`` (0 for the first iterator, then 1, 2,
    ...), counted by the counter ``counter`` (default: a new one).

    ``EpochDataset(key).flat_map(one_epoch)`` gives a pipeline of plain tf.data ops a new epoch
    number on every pass; iterator checkpoints restore it.

    With ``elements=n`` (n >= 0) the element is an int64 pair ``[epoch, position]``: a plain
    iterator yields ``[epoch, -1]`` (read the whole pass), and under tf.data service dynamic
    sharding each of the pass's n positions is one split, yielded as ``[epoch, position]`` by the
    worker it was handed to (every position once per pass, the epoch decided by the dispatcher).
    """

    def __init__(self, key: str, counter: str | None = None,
                 elements: int | None = None) -> None:
        self._per_position = elements is not None
        variant = load_ops().tf_gulp_epoch_dataset(
            key=tf.convert_to_tensor(key, tf.string),
            epoch_counter=counter or new_epoch_counter(),
            elements=-1 if elements is None else int(elements),
        )
        super().__init__(variant)

    @property
    def element_spec(self) -> tf.TensorSpec:
        return tf.TensorSpec([2] if self._per_position else [], tf.int64)


class EpochCountsDataset(dataset_ops.UnaryUnchangedStructureDataset):
    """``input_dataset`` unchanged; its iterator checkpoints also carry the epoch counts of the
    tf_gulp datasets inside it (tf_gulp/ops/epoch/epoch_counts_dataset_op.cc)."""

    def __init__(self, input_dataset: tf.data.Dataset) -> None:
        self._input_dataset = input_dataset
        variant = load_ops().tf_gulp_epoch_counts_dataset(
            input_dataset._variant_tensor,  # pylint: disable=protected-access
            epoch_counters=epoch_counters_of(input_dataset),
            **self._flat_structure)
        super().__init__(input_dataset, variant)
