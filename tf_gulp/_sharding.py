"""Sharding tf_gulp's source datasets so that a worker reads only its share.

``ds.shard(num_shards, index)`` on a :class:`tf_gulp.GulpDataset` or
:class:`tf_gulp.FFRecordDataset` returns a dataset of the same class whose C++ source keeps positions ``index, index + num_shards,
...`` of each epoch's order, exactly the elements tf.data's own ``shard`` would keep, but without
reading or decoding the others. Every worker computes the same epoch order from the same seed, so
the shards of an epoch are disjoint and together cover it once.

tf.distribute's auto-sharding (``experimental_distribute_dataset`` with the default AUTO policy)
does not know these sources: it falls back to sharding the finished elements, so every worker
reads and decodes everything. :func:`install_auto_shard_warning` makes that visible with a
one-time warning that says what to write instead.
"""

from __future__ import annotations

import functools
import logging
import warnings
from typing import Optional, Tuple

import numpy as np
import tensorflow as tf

__all__ = ["as_int", "check_shard", "compose_shard", "install_auto_shard_warning"]

# Besides the ops registered as sources (op_attrs.source_ops: every op with an epoch counter), the
# op that reads a Benzina container's index, the one tf_gulp op of a Benzina loader that counts no
# passes (DataLoader(epochs=None)). tests/test_op_names.py fails on an op that is neither.
_INDEX_OPS = ("TfGulp>BznaEntryIndex",)


def source_ops() -> Tuple[str, ...]:
    """The op types of tf_gulp's sources, as they appear in a dataset's graph."""
    from tf_gulp.ops.op_attrs import source_ops as registered_sources
    return registered_sources() + _INDEX_OPS


_log = logging.getLogger("tf_gulp")


def as_int(x) -> Optional[int]:
    """``x`` as a Python int when its value is known now (an int, a numpy integer, an eager integer
    scalar); None for a symbolic tensor."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if (isinstance(x, tf.Tensor) and not tf.is_symbolic_tensor(x) and x.dtype.is_integer
            and x.shape.rank == 0):
        return int(x.numpy())
    return None


def check_shard(num_shards: int, index: int) -> None:
    """InvalidArgumentError, as tf.data's ``shard`` (and cc/util/shard.h) says it, unless
    ``num_shards >= 1`` and ``0 <= index < num_shards``."""
    if num_shards < 1 or not 0 <= index < num_shards:
        raise tf.errors.InvalidArgumentError(
            None, None, f"shard: need num_shards >= 1 and 0 <= index < num_shards, got "
                        f"num_shards={num_shards}, index={index}")


def compose_shard(current: Tuple[int, int], num_shards: int, index: int) -> Tuple[int, int]:
    """The (num_shards, index) of ``shard(num_shards, index)`` applied to a dataset already
    sharded as ``current``: position p of the shard is position ``I + N * p`` of the whole, so
    keeping p = index + num_shards * q keeps ``(I + N * index) + (N * num_shards) * q``."""
    check_shard(num_shards, index)
    n, i = current
    return n * num_shards, i + n * index


def require_shared_seed(name: str, shuffle: bool, seed_given: bool) -> None:
    """ValueError when a shuffled dataset without an explicit seed is sharded: each worker would
    draw its own random seed, shuffle differently, and the shards would overlap."""
    if shuffle and not seed_given:
        raise ValueError(
            f"{name}.shard(): a shuffled {name} needs an explicit seed= (the same on every "
            f"worker) before it is sharded; with a random seed each worker shuffles differently "
            f"and the shards of an epoch would overlap")


_warned = False


def _graph_has_source(dataset) -> bool:
    """True when the graph of ``dataset`` holds one of tf_gulp's source ops."""
    try:
        graph_def = tf.raw_ops.DatasetToGraphV2(
            input_dataset=dataset._variant_tensor,  # pylint: disable=protected-access
            external_state_policy=1)  # ignore stateful ops: only the op names are looked at
        text = graph_def.numpy() if hasattr(graph_def, "numpy") else b""
    except Exception:  # pylint: disable=broad-except  # symbolic or unserializable: not ours
        return False
    return any(op.encode() in text for op in source_ops())


def install_auto_shard_warning() -> None:
    """Wraps tf.distribute's ``auto_shard_dataset`` (once) so that auto-sharding a pipeline built
    on a tf_gulp source over more than one shard warns, once per process, that every worker would
    read and decode the whole dataset, and says what to write instead. Nothing else changes."""
    try:
        from tensorflow.python.distribute import input_lib, input_ops
    except ImportError:  # a TensorFlow without these internals: no warning, nothing breaks
        return
    original = getattr(input_ops, "auto_shard_dataset", None)
    if original is None or getattr(original, "_tf_gulp_wrapped", False):
        return

    @functools.wraps(original)
    def auto_shard_dataset(dataset, num_shards, index, num_replicas_in_sync=None):
        global _warned
        shards = as_int(num_shards)
        if not _warned and (shards is None or shards > 1) and _graph_has_source(dataset):
            policy = dataset.options().experimental_distribute.auto_shard_policy
            if policy != tf.data.experimental.AutoShardPolicy.OFF:
                _warned = True
                message = (
                    "tf_gulp: tf.distribute is auto-sharding a dataset read by tf_gulp "
                    "(GulpDataset / FFRecordDataset / BenzinaDataset); it cannot shard these "
                    "sources by file, so every worker would read and decode the whole dataset and "
                    "drop what is not its share. Shard the source instead: "
                    "strategy.distribute_datasets_from_function(lambda ctx: "
                    "tf_gulp.GulpDataset(path, shuffle=True, seed=SEED)"
                    ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)"
                    ".map(...).batch(ctx.get_per_replica_batch_size(GLOBAL_BATCH))) "
                    "(see docs/distributed.md)")
                warnings.warn(message, UserWarning, stacklevel=3)
                _log.warning(message)
        return original(dataset, num_shards, index, num_replicas_in_sync)

    auto_shard_dataset._tf_gulp_wrapped = True  # type: ignore[attr-defined]
    input_ops.auto_shard_dataset = auto_shard_dataset
    # input_lib calls it as input_ops.auto_shard_dataset (module attribute), checked here so a
    # TensorFlow that imported it by name does not silently bypass the warning.
    if getattr(input_lib, "auto_shard_dataset", None) is original:
        input_lib.auto_shard_dataset = auto_shard_dataset
