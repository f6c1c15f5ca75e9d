"""The Python base of tf_gulp's sources that shard themselves: `GulpDataset`, `FFRecordDataset`
and `BenzinaDataset`.

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
- the options of the op's attr table as the class's keywords, checked, and the kernel's refusals
  naming one as ValueError: :class:`OptionSourceDataset` (tf_gulp/_options.py);
- the path the graph holds: absolute, so that a tf.data service worker with another working
  directory resolves it the same way; a string tensor (e.g. inside ``interleave``) as it is
  (:func:`graph_path`).

- the shard arithmetic and checks (:func:`compose_shard`, :func:`check_shard`,
  :func:`require_shared_seed`);
- tf.distribute's auto-sharding (``experimental_distribute_dataset`` with the default AUTO policy)
  does not know these sources: it falls back to sharding the finished elements, so every worker
  reads and decodes everything. :func:`install_auto_shard_warning` makes that visible with a
  one-time warning that says what to write instead; it is installed when the first source is made
  (:func:`source_made`), not when this module is imported, so importing tf_gulp patches nothing.
  TensorFlow's rewrite falls back without a word and has no callback (docs/design.md,
  tests/test_tensorflow_hooks.py).
"""

from __future__ import annotations

import functools
import inspect
import logging
import secrets
import warnings
from typing import Any, Dict, Optional, Tuple

import numpy as np
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from tf_gulp import _args as A
from tf_gulp import _options
from tf_gulp._files import absolute

__all__ = ["OptionSourceDataset", "ShardsItself", "ShardedSourceDataset", "as_int", "check_shard",
           "compose_shard", "first_epoch", "graph_path", "install_auto_shard_warning", "require_shared_seed",
           "source_made", "source_ops", "source_seed"]


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
        checked: :func:`check_shard`)."""
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
        source_made()
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
        # The checked option where the class keeps them (OptionSourceDataset), else the argument.
        shuffle = getattr(self, "_attrs", self._args)["shuffle"]
        require_shared_seed(name, bool(shuffle), self._seed_given)
        ds = type(self)(**self._args, _shard=compose_shard(self._shard, num_shards, index))
        ds._seed_given = self._seed_given  # the seed in _args was drawn, not given
        return ds


class _Signature:
    """A class's ``__signature__``, made when first asked (it reads the op's registration, so
    importing tf_gulp loads no op library): its ``__init__``'s own parameters, less ``**options``
    and private ones, then the op's options (tf_gulp/_options.py)."""

    def __get__(self, obj, owner):
        return owner._signature()


class _Doc:
    """A class's ``__doc__``: the written docstring, then the op's options from its table."""

    def __init__(self, text: Optional[str]):
        self._text = text or ""

    def __get__(self, obj, owner):
        try:
            table = _options.keyword_docs(owner.table_options())
        except Exception:  # pylint: disable=broad-except  # op library not built: the text alone
            return self._text
        return f"{self._text.rstrip()}\n\n    Options (from the op's attr table):\n{table}\n"


class OptionSourceDataset(ShardedSourceDataset):
    """A source whose options are its op's attr table (tf_gulp/_options.py). A subclass sets
    ``_OP`` (the op's name), takes ``**options`` in its ``__init__`` beside the keywords that are
    not attrs (and ``seed``/``epoch``/``_shard``), checks them with :meth:`_check_options` and
    makes its op with :meth:`_make_op`. An option it takes by position is a parameter of its
    ``__init__`` with the default ``_options.TABLE``, handed to :meth:`_check_options` too."""

    _OP: str = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__doc__" in cls.__dict__ and not isinstance(cls.__dict__["__doc__"], _Doc):
            cls.__doc__ = _Doc(cls.__dict__["__doc__"])  # type: ignore[assignment]
        cls.__signature__ = _Signature()  # type: ignore[assignment]

    @classmethod
    def table_options(cls) -> Tuple[_options.Option, ...]:
        """The options of the op's attr table, in table order."""
        return _options.op_options(cls._OP)

    @classmethod
    def _signature(cls) -> inspect.Signature:
        options = cls.table_options()
        by_name = {o.name: p for o, p in zip(options, _options.parameters(options))}
        own = [p for name, p in inspect.signature(cls.__init__).parameters.items()
               if name != "self" and not name.startswith("_")
               and p.kind is not inspect.Parameter.VAR_KEYWORD]
        # An option the class takes by position keeps its place, with the table's default.
        own = [p.replace(default=by_name[p.name].default, annotation=by_name[p.name].annotation)
               if p.name in by_name else p for p in own]
        positional = [p for p in own if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        keywords = [p for p in own if p.kind is inspect.Parameter.KEYWORD_ONLY]
        taken = {p.name for p in own}
        return inspect.Signature(
            positional + [p for p in by_name.values() if p.name not in taken] + keywords,
            return_annotation=None)

    @classmethod
    def _check_options(cls, given: Dict[str, Any], what: str) -> Dict[str, Any]:
        """The attrs of the options ``given`` (the keywords ``__init__`` did not take), every
        option present: checked, or the attr's default. TypeError for an unknown keyword, as
        Python's own."""
        options = {o.name: o for o in cls.table_options()}
        given = {k: v for k, v in given.items() if v is not _options.TABLE}
        unknown = sorted(set(given) - set(options))
        if unknown:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown[0]!r}")
        return {name: o.check(given[name], what) if name in given else o.default
                for name, o in options.items()}

    def _make_op(self, what: str, **attrs) -> tf.Tensor:
        """The op's variant, made with ``attrs`` (and a new epoch counter); a refusal of the
        kernel that names one of the class's keywords is a ValueError (tf_gulp/_options.py:
        python_error), raised here, once for every source."""
        from tf_gulp.ops.epoch.epoch_ops import new_epoch_counter
        from tf_gulp.ops.library import load_ops
        make = getattr(load_ops(), "TfGulp_" + self._OP.split(">", 1)[1])
        try:
            return make(epoch_counter=new_epoch_counter(), **attrs)
        except tf.errors.InvalidArgumentError as e:
            mapped = _options.python_error(e, self._signature().parameters, what)
            if mapped is None:
                raise
            raise mapped from None


def source_ops() -> Tuple[str, ...]:
    """The op types of tf_gulp's sources, as they appear in a dataset's graph: the ops registered
    with an epoch counter (op_attrs.source_ops; tests/test_op_names.py fails on an op that is
    neither such a source nor listed as not one)."""
    from tf_gulp.ops.op_attrs import source_ops as registered_sources
    return registered_sources()


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


def source_made() -> None:
    """Called by every source when it is made: installs the auto-shard warning (once)."""
    install_auto_shard_warning()
