"""The Python base of tf_gulp's sources that shard themselves: `GulpDataset`, `FFRecordDataset`
and the Benzina reader's `BenzinaSource`.

What the three did each in their own words, written once:

- ``shard(n, i)`` with arguments known now (Python or numpy integers, eager scalars) makes the
  same source reading only positions ``i, i + n, ...`` of each epoch (checked as tf.data checks
  them); symbolic arguments fall back to tf.data's own ``shard``, which reads everything
  (:class:`ShardsItself`);
- a source whose C++ kernel takes the shard as attrs remembers its checked arguments, re-creates
  itself with the composed shard, and refuses to shard a shuffle whose seed was drawn at random
  (each worker would draw its own): :class:`ShardedSourceDataset`;
- ``epoch=``, the epoch of the first pass (:func:`first_epoch`), given to the kernel as its
  ``first_epoch`` attr with the shard;
- the seed: an int64 checked by :func:`tf_gulp._args.seed`, or a random one when none is given
  (:func:`source_seed`);
- the path the graph holds: absolute, so that a tf.data service worker with another working
  directory resolves it the same way; a string tensor (e.g. inside ``interleave``) as it is
  (:func:`graph_path`).

Importing this module installs the one-time warning for tf.distribute's auto-sharding of these
sources (:func:`tf_gulp._sharding.install_auto_shard_warning`).
"""

from __future__ import annotations

import secrets
from typing import Any, Dict, Tuple

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from tf_gulp import _args as A
from tf_gulp._files import absolute
from tf_gulp._sharding import (as_int, compose_shard, install_auto_shard_warning,
                               require_shared_seed)

__all__ = ["ShardsItself", "ShardedSourceDataset", "first_epoch", "graph_path", "source_seed"]

install_auto_shard_warning()


def source_seed(seed: Any, what: str, *, draw: bool = True) -> Tuple[int, bool]:
    """(seed, given): ``seed`` checked (an integer an int64 attr holds), or, when None, a random
    63-bit seed (``draw``) or 0 (nothing random to key); ``given`` says whether the caller chose it,
    which :meth:`ShardedSourceDataset.shard` needs."""
    seed = A.seed(seed, what=what)
    if seed is not None:
        return seed, True
    return (secrets.randbits(63) if draw else 0), False


def first_epoch(epoch: Any, what: str) -> int:
    """``epoch=`` checked: the epoch of a source's first pass, an integer >= 0. A dataset made
    with ``epoch=e`` gives on its first pass exactly pass ``e`` of one made with ``epoch=0`` (order,
    frame offsets, crops), reading nothing of the epochs before; its later passes are e + 1, ...
    """
    return A.integer(epoch, "epoch", minimum=0, maximum=A.INT64_MAX, what=what)


def graph_path(path: Any) -> Any:
    """A path as the dataset's graph holds it: absolute (``gs://...`` and other TensorFlow
    file-system paths as they are), or a string tensor as it is."""
    if isinstance(path, tf.Tensor):
        return path
    return absolute(path)


class ShardsItself:
    """``shard`` for a source that selects its share of each epoch before reading (a mixin before
    a ``tf.data.Dataset`` class): known arguments are handed to :meth:`_own_shard`,
    symbolic ones go to tf.data's ``shard``."""

    def shard(self, num_shards, index, name=None) -> tf.data.Dataset:
        """The elements tf.data's ``shard(num_shards, index)`` keeps (positions ``index``,
        ``index + num_shards``, ... of each epoch), read alone: the source skips the others
        without reading or decoding them. A shuffled source needs the same ``seed`` on every
        worker so that the shards of an epoch are disjoint.

        Arguments that are symbolic tensors (not known until the graph runs) fall back to
        tf.data's own ``shard``, which reads everything."""
        n, i = as_int(num_shards), as_int(index)
        if n is None or i is None:
            return super().shard(num_shards, index, name=name)  # type: ignore[misc]
        return self._own_shard(n, i)

    def _own_shard(self, num_shards: int, index: int) -> tf.data.Dataset:
        """This source reading only shard ``index`` of ``num_shards`` of each epoch (to be
        checked: :func:`tf_gulp._sharding.check_shard`)."""
        raise NotImplementedError


class ShardedSourceDataset(ShardsItself, dataset_ops.DatasetSource):
    """A source op whose kernel shards itself (``num_shards`` / ``shard_index`` attrs, cc/util/
    shard.h). A subclass checks its arguments, calls :meth:`_keep_arguments` with them (the
    constructor's keyword arguments, ``shuffle`` among them) before it builds its op, sets
    ``_element_spec`` and calls ``super().__init__(variant)``; its constructor takes a private
    ``_shard=(num_shards, index)``."""

    _args: Dict[str, Any]
    _seed_given: bool
    _shard: Tuple[int, int]
    _element_spec: Any

    def _keep_arguments(self, args: Dict[str, Any], seed_given: bool,
                        shard: Tuple[int, int]) -> Dict[str, int]:
        """Remembers what :meth:`shard` needs to make the same dataset reading only a share;
        returns the op's source attrs (source_attrs.h): the shard, and the first pass's epoch
        (``args["epoch"]``, checked by :func:`first_epoch`)."""
        self._args = args
        self._seed_given = seed_given
        self._shard = (int(shard[0]), int(shard[1]))
        return dict(num_shards=self._shard[0], shard_index=self._shard[1],
                    first_epoch=int(args.get("epoch", 0)))

    @property
    def element_spec(self):
        return self._element_spec

    def _own_shard(self, num_shards: int, index: int) -> tf.data.Dataset:
        name = type(self).__name__
        require_shared_seed(name, bool(self._args["shuffle"]), self._seed_given)
        ds = type(self)(**self._args, _shard=compose_shard(self._shard, num_shards, index))
        ds._seed_given = self._seed_given  # the seed in _args was drawn, not given
        return ds
