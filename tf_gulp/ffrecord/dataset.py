"""`FFRecordDataset`: the records of FFRecord files as a `tf.data.Dataset`, read by C++ kernels."""

from __future__ import annotations

import os
from typing import Optional, Tuple, Union

import tensorflow as tf

from tf_gulp._options import TABLE
from tf_gulp._source_dataset import OptionSourceDataset, first_epoch, graph_path, source_seed
from tf_gulp.class_folders import ClassTable, names_by_index, read_label_table
from tf_gulp.ffrecord.reader import PathArg, normalize_paths

__all__ = ["FFRecordDataset"]


class FFRecordDataset(ClassTable, OptionSourceDataset):
    """The records of FFRecord files as a `tf.data.Dataset` of strings.

    Without ``batch_size`` each element is one record (a string scalar); with it, each element is a
    batch of records (a string vector of ``batch_size``, the last one shorter unless
    ``drop_remainder``), and all of a batch's reads go to the kernel in one asynchronous submission
    (io_uring) straight into the output tensor, with each record's CRC-32 checked as it arrives.
    Batching here rather than with ``.batch()`` is what makes random reads fast on a cold cache.

    The files are concatenated into one index space. The C++ kernel opens them and validates their
    headers itself, so the dataset serializes to a small graph (paths + options): it can be saved,
    its iterators checkpointed, and it can run on tf.data service workers (with dynamic sharding,
    each record or batch is read by exactly one worker).

    Example::

        ds = tf_gulp.FFRecordDataset("/data/imagenet_ffr/train", batch_size=256, shuffle=True,
                                     seed=0, drop_remainder=True)
        ds = ds.map(parse_batch, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
        model.fit(ds, epochs=90)

    Args:
      paths: a file, a directory (its ``*.ffr`` files, sorted by name, not recursive), a list of
        those, or a string tensor (e.g. inside ``interleave``). Local paths or any path
        TensorFlow's file systems accept (``gs://``, ``s3://``, ``ram://``, ...; see
        docs/distributed.md).
      batch_size, shuffle, check_data, drop_remainder: options of the op's attr table (below),
        taken by position too, in the reference loader's order.
      seed: the shuffle seed, every order a function of (seed, epoch); default: a random one.
      epoch: the epoch of the first pass (default 0): a dataset made with ``epoch=3`` gives on its
        first pass exactly the 4th pass of one made with ``epoch=0``, and reads nothing of the
        three before; its next passes are epochs 4, 5, ... (how to resume ``model.fit``:
        docs/checkpoint.md).
      **options: the rest of the op's attr table, listed below (and in docs/ffrecord.md).

    ``class_names`` / ``num_classes``: from a ``label2idx.json`` in the directory given, or
    next to the files (the image recipe writes one, docs/ffrecord.md); None where there is none.
    Files whose folders hold different tables are a ValueError (their labels would disagree).

    ``shard(n, i)`` reads only that share of each epoch (see :meth:`shard`).
    ``skip(k)`` costs nothing (no record is read), so resuming at step ``s`` of an epoch (the
    reference loader's ``set_step``) is ``ds.skip(s)``. ``cardinality()`` is known.

    Raises:
      tf.errors.NotFoundError: a path does not exist, a directory has no ``.ffr`` files, or one of
        its ``.ffr`` entries is a dangling symbolic link.
      tf.errors.DataLossError: a truncated, corrupt or non-FFRecord file (when the dataset is made),
        or a record whose checksum does not match (when it is read); the message names the file, the
        record and the byte offset.
      TypeError: an option of the wrong type (``batch_size=32.0``, ``shuffle="yes"``; bools are
        not integers, numpy integers are), naming it, the value and what it accepts (the
        exception is also a ``ValueError``).
      ValueError: an option outside the values it accepts (``batch_size``, ``seed``: an integer
        in [-2**63, 2**63 - 1], ``queue_depth``, ``io_engine``), naming it; a ``queue_depth``
        over the C++ core's limit (checked by the kernel when the dataset is made eagerly).
      tf.errors.InvalidArgumentError: a path that is not a regular file (a FIFO).
    """

    _OP = "TfGulp>FFRecordDataset"

    def __init__(
        self,
        paths: Union[PathArg, tf.Tensor],
        batch_size: Optional[int] = TABLE,
        shuffle: bool = TABLE,
        seed: Optional[int] = None,
        check_data: bool = TABLE,
        drop_remainder: bool = TABLE,
        *,
        epoch: int = 0,
        _shard: Tuple[int, int] = (1, 0),
        **options,
    ) -> None:
        what = "FFRecordDataset: "
        attrs = self._check_options(dict(
            options, batch_size=batch_size, shuffle=shuffle, check_data=check_data,
            drop_remainder=drop_remainder), what)
        if attrs["drop_remainder"] and not attrs["batch_size"]:
            raise ValueError(f"{what}drop_remainder=True needs a batch_size")
        # Without shuffle nothing is random: seed 0 keys nothing.
        seed, seed_given = source_seed(seed, what, draw=attrs["shuffle"])
        epoch = first_epoch(epoch, what)
        self._attrs = attrs
        shard_attrs = self._keep_arguments(dict(
            options, paths=paths, batch_size=batch_size, shuffle=shuffle, seed=seed,
            check_data=check_data, drop_remainder=drop_remainder, epoch=epoch), seed_given,
            _shard)
        if isinstance(paths, tf.Tensor):  # e.g. inside interleave()
            path_arg = paths
        else:
            given = normalize_paths(paths, "paths", what)
            path_arg = [graph_path(p) for p in given]
            self._class_names = _class_names(given, what)
        variant = self._make_op(what, paths=tf.convert_to_tensor(path_arg, tf.string), seed=seed,
                                **attrs, **shard_attrs)
        batch_size = attrs["batch_size"]
        shape = [] if not batch_size else [batch_size if attrs["drop_remainder"] else None]
        self._element_spec = tf.TensorSpec(shape, tf.string)
        if attrs["keys"]:
            # The op's outputs (epoch, index, record): this dict's keys in sorted order.
            self._element_spec = {"epoch": tf.TensorSpec([], tf.int64),
                                  "index": tf.TensorSpec(shape, tf.int64),
                                  "record": self._element_spec}
        super().__init__(variant)

    def decode_jpeg_warped(self, augment, *, dct_scaling: bool = True, colorspace: str = "rgb",
                           dct_method: str = "fast",
                           num_parallel_calls: Optional[int] = tf.data.AUTOTUNE,
                           deterministic: Optional[bool] = None,
                           device: Optional[str] = None) -> tf.data.Dataset:
        """These records, JPEG pictures, decoded fused with the ``augment`` list by
        :func:`tf_gulp.ops.decode_jpeg_warped`: each picture's draws come from (this dataset's
        seed, the epoch, the record's index), so they change every epoch, shuffled or not, and
        do not depend on the batching, the sharding or a resumption. The epoch comes from this
        dataset's own passes (``epoch=`` included): nothing to wire.

        Example::

            from tf_gulp.transforms import (IMAGENET_MEAN, IMAGENET_STD, Normalize,
                                            RandomHorizontalFlip, RandomResizedCrop, ToDtype)
            ds = tf_gulp.FFRecordDataset("/data/images_ffr", batch_size=32, shuffle=True, seed=0)
            ds = ds.decode_jpeg_warped([RandomResizedCrop(224), RandomHorizontalFlip(),
                                        ToDtype(tf.float32, scale=True),
                                        Normalize(IMAGENET_MEAN, IMAGENET_STD)])

        Args:
          augment: a :mod:`tf_gulp.transforms` list (one draw per record).
          dct_scaling, colorspace, dct_method: as :func:`tf_gulp.ops.decode_jpeg_warped`'s.
          num_parallel_calls, deterministic: the ``map``'s.
          device: None (default): decode here, in tf.data. A device (``"/GPU:0"``): tf.data
            does not decode; each element is ``{"jpeg": string [B], "key": string [B, 3] (seed,
            epoch, index as decimal strings), "name": string [B]}`` for
            :class:`tf_gulp.JpegOnDevice` (``augment`` and the decode options go to it), which
            decodes and augments in the step on that device: pixel for pixel this path's output
            on ``"/CPU:0"``. A device TensorFlow does not have, or a GPU where nvJPEG cannot run
            (``tf_gulp.ops.image.jpeg_ops.nvjpeg_unavailable_reason()``), is a ValueError naming
            the fix.

        Returns:
          a dataset of ``[B, height, width, C]`` (batches) or ``[height, width, C]`` (single
          records). For records that are not bare JPEGs (``tf.train.Example``), make the
          dataset with ``keys=True`` and pass ``epoch=e["epoch"], elements=e["index"]`` to
          ``decode_jpeg_warped`` after parsing ``e["record"]``.
        """
        from tf_gulp.ops.image.jpeg_ops import decode_jpeg_warped
        from tf_gulp.transforms import compile_augment

        what = "FFRecordDataset.decode_jpeg_warped: "
        plan = compile_augment(augment, what)
        if device is not None:
            from tf_gulp.jpeg_on_device import check_jpeg_device  # the layer's own check

            device = check_jpeg_device(device, what)
            given = {k: v for k, v in (("dct_scaling", dct_scaling), ("colorspace", colorspace),
                                       ("dct_method", dct_method))
                     if v != {"dct_scaling": True, "colorspace": "rgb", "dct_method": "fast"}[k]}
            if given:
                # Nothing is decoded here: the options would be lost silently.
                raise ValueError(f"{what}with device={device!r} the decode runs in "
                                 f"tf_gulp.JpegOnDevice: give {given} to it, not here")
        keyed = self
        if not self._attrs["keys"]:
            keyed = type(self)(**dict(self._args, keys=True), _shard=self._shard)
            keyed._seed_given = self._seed_given
        seed = self._args["seed"]
        paths = self._args["paths"]
        # A damaged picture's error names its record: "<paths> record <index>" (the index over
        # the files in name order, as FFRecordDataset numbers them).
        where = (os.fspath(paths) if isinstance(paths, (str, os.PathLike)) else
                 ", ".join(os.fspath(p) for p in paths) if isinstance(paths, (list, tuple))
                 else "FFRecord")

        def decode(e):
            names = tf.strings.join([where + " record ", tf.strings.as_string(e["index"])])
            return decode_jpeg_warped(e["record"], plan, seed=seed, epoch=e["epoch"],
                                      elements=e["index"], dct_scaling=dct_scaling,
                                      colorspace=colorspace, dct_method=dct_method, names=names)

        def undecoded(e):
            # What JpegOnDevice decodes in the step, keyed as decode() keys it.
            index = e["index"]
            key = tf.stack([tf.fill(tf.shape(index), tf.constant(seed, tf.int64)),
                            tf.broadcast_to(e["epoch"], tf.shape(index)), index], axis=-1)
            return {"jpeg": e["record"], "key": tf.strings.as_string(key),
                    "name": tf.strings.join([where + " record ", tf.strings.as_string(index)])}

        return keyed.map(decode if device is None else undecoded,
                         num_parallel_calls=num_parallel_calls, deterministic=deterministic)


def _class_names(paths, what: str):
    """The class names of the label table(s) next to `paths` (a directory's own, else each
    file's folder's); None without one; ValueError when two folders' tables differ."""
    tables = {}
    for p in paths:
        p = os.fspath(p)
        folder = p if tf.io.gfile.isdir(p) else os.path.dirname(p) or "."
        if folder not in tables:
            tables[folder] = read_label_table(folder)
    found = {folder: t for folder, t in tables.items() if t}
    if not found:
        return None
    (first, table), *rest = found.items()
    for folder, other in rest:
        if other != table:
            raise ValueError(f"{what}{first}/label2idx.json and {folder}/label2idx.json number "
                             f"the classes differently; the labels of their files would "
                             f"disagree (write one table for all of them)")
    return tuple(names_by_index(table))
