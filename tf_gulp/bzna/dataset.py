"""Reading Benzina-style datasets with tf.data: BenzinaDataset, ClassificationDataset, ImageNet and
the DataLoader helper.

Everything per element runs in C++ kernels inside the tf.data graph: the entries are read by a
positional source kernel (``TfGulp>BznaDataset``: the container's index judged by cc/mp4, one
``pread`` per sample), decoding is ``tf_gulp.ops.decode_hevc`` (or ``decode_hevc_warped``) in a
map after it, and augmentation ``tf_gulp.ops.similarity_warp`` with matrices from
``tf_gulp.transforms``. Python only builds the graph; when it is built, the container is read and
judged once by the same C++ code (``tf_gulp._core``, ``cc/mp4/bzna_container``) for the split
table and the class names.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops

from tf_gulp import _args as A
from tf_gulp._runtime_libs import import_core
from tf_gulp._files import absolute, check_regular_file
from tf_gulp._format_sniffer import wrong_reader_message
from tf_gulp._source_dataset import (OptionSourceDataset, ShardsItself, as_int, check_shard,
                                     first_epoch, source_seed)
from tf_gulp.class_folders import ClassTable
from tf_gulp.bzna import container
from tf_gulp import transforms as T
from tf_gulp.bzna.transforms import loader_augment
from tf_gulp.ops.bzna.hevc_ops import (decode_hevc, decode_hevc_warped, hevc_sample_size,
                                  nvdec_unavailable_reason)
from tf_gulp.ops.op_attrs import check_attr
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices

_core = import_core()  # tf_gulp._core, through its one accessor

IMAGENET_TEST = container.IMAGENET_TEST
IMAGENET_VAL = container.IMAGENET_VAL
TRACKS = ("bzna_input", "bzna_thumb")


def _container(path: str) -> container.Container:
    """The container judged by cc/mp4 (as the dataset op judges it), errors as tf.errors."""
    try:
        return container.read_container(path)
    except FileNotFoundError as e:  # the file, or one of the tracks the datasets need
        raise tf.errors.NotFoundError(None, None, str(e)) from None
    except _core.DataLossError as e:
        raise tf.errors.DataLossError(None, None, str(e)) from None
    except ValueError as e:
        raise tf.errors.InvalidArgumentError(None, None, str(e)) from None


def _check_common(what: str, split, track: str, shuffle, seed, splits, *,
                  draw: bool) -> Tuple[bool, int, bool]:
    """The arguments BenzinaDataset and DataLoader share: (shuffle, seed, seed given) checked; a
    seed of None is drawn at random where something is random (`draw`), as the other sources
    do (:func:`tf_gulp._source_dataset.source_seed`)."""
    A.string(split, "split", what=what, none=True)
    A.choice(track, "track", TRACKS, what=what)
    shuffle = A.boolean(shuffle, "shuffle", what=what)
    seed, seed_given = source_seed(seed, what, draw=draw or shuffle)
    if splits is not None and not isinstance(splits, Mapping):
        raise A.WrongTypeError(f"{what}splits must be a mapping {{name: (start, stop)}} or None, "
                               f"got {splits!r} ({type(splits).__name__})")
    return shuffle, seed, seed_given


def split_range(path: str, split: Optional[str],
                splits: Optional[Mapping[str, Sequence[int]]] = None) -> Tuple[int, int]:
    """[start, stop) of `split` in the file: from `splits` when given, else the file's split table
    (files written by tf_gulp), else the reference ImageNet ranges (files of 150000 entries or more
    without a table, like Benzina's ilsvrc2012.bzna).

    The container is read and judged by cc/mp4 first: a file the
    dataset would refuse raises the tf.errors exception the dataset would raise."""
    return _container(path).split_range(split, splits)


# The records' element spec (the op's outputs, a dict's keys in sorted order); "what" (the
# sample's name in errors) only where it is asked for.
_RECORD_SPEC = {"epoch": tf.TensorSpec([], tf.int64), "index": tf.TensorSpec([], tf.int64),
                "label": tf.TensorSpec([], tf.int64), "sample": tf.TensorSpec([], tf.string)}


class BenzinaDataset(ClassTable, OptionSourceDataset):
    """A Benzina-style file as a ``tf.data.Dataset`` of ``{"image", "label", "index"}``.

    The entries are read by a C++ source kernel (``TfGulp>BznaDataset``, on the same base as
    ``GulpDataset`` and ``FFRecordDataset``): it reads and judges the container's index itself,
    so the dataset serializes to a small graph (path + options), and each element is one
    ``pread`` of the entry's per-image MP4 (and one of its 8-byte target). Decoding is a map
    after the source (``tf_gulp.ops.decode_hevc``).

    Example::

        ds = tf_gulp.BenzinaDataset("/data/ilsvrc2012.bzna", "train", shuffle=True, seed=0)
        ds = ds.map(lambda x: (tf.image.resize(x["image"], (224, 224)), x["label"]))

    Args:
      path: the container (.bzna; the reference's ilsvrc2012.bzna reads too): a local path or any
        path TensorFlow's file systems accept (``gs://``, ``ram://``, ...).
      split: None (every entry), or a split name: from `splits` when given, else the file's split
        table when tf_gulp wrote it, else the reference ImageNet ranges (see :func:`split_range`).
      track: "bzna_input" (the full image) or "bzna_thumb" (the thumbnail, longer side <= 512;
        decoded from the per-image MP4).
      seed: the shuffle seed; default: a random one, as for the other sources (give one to shard
        a shuffled dataset or to repeat a run).
      epoch: the epoch of the first pass (default 0): a dataset made with ``epoch=3`` gives on
        its first pass exactly the 4th pass of one made with ``epoch=0``, reading nothing of the
        three before; its next passes are epochs 4, 5, ... Iterator checkpoints restore it.
      crop: "clean" (the image without Benzina's padding) or "full" (the coded frame).
      decode: False yields the per-image MP4 bytes as "sample" instead of "image".
      augment: a :mod:`tf_gulp.transforms` list: "image" is then each picture decoded fused with
        it (``tf_gulp.ops.decode_hevc_warped``; only the pixels the crop samples are converted
        to RGB), drawn from (seed, epoch, index); without a ``seed`` a random one is drawn.
      splits: ``{name: (start, stop)}`` entry ranges, for files without a split table (Benzina's
        own toolchain writes none) or to override the file's table.

    Elements: "image" uint8 [H, W, 3] (sizes vary), "label" int64, "index" int64 (the entry's
    position in the file, the key for per-element randomness); with ``decode=False``, "sample"
    (the entry's bytes) instead of "image", and "epoch" int64 (the pass's epoch: with "index", the
    key ``decode_hevc_warped(..., epoch=x["epoch"], elements=x["index"])`` draws from). The label
    is -1 for entries past the end of a target track shorter than the input track (Benzina's
    toolchain stops writing targets at the first entry without one); a longer target track is an
    InvalidArgumentError.

    The cardinality is known. ``skip(k)`` reads nothing it drops, ``take`` and ``shard(n, i)``
    (integer arguments) select positions of each epoch's order before anything is read, decoded
    or not. ``class_names`` / ``num_classes`` come from the file's split table (None without
    one). Under tf.data service dynamic sharding (``distributed_epoch``) each entry is one split:
    the workers share every pass entry by entry, each entry read once per pass.

    Raises:
      tf.errors.NotFoundError: the file does not exist, or lacks a track the dataset needs.
      tf.errors.DataLossError: a damaged container (when the dataset is made), or a sample whose
        bytes are gone or do not decode (when it is read), naming the file, the sample and its
        byte offset.
      tf.errors.InvalidArgumentError: a path that is not a regular file, a target track longer
        than the input track.
      TypeError / ValueError: an argument of the wrong type or value, or an unknown split.
    """

    _OP = "TfGulp>BznaDataset"

    def __init__(self, path: Union[str, os.PathLike], split: Optional[str] = None,
                 track: str = "bzna_input", *,
                 seed: Optional[int] = None, epoch: int = 0, crop: str = "clean",
                 decode: bool = True, splits: Optional[Mapping[str, Sequence[int]]] = None,
                 augment=None, _shard: Tuple[int, int] = (1, 0), _names: bool = False,
                 _opened: Optional[Tuple[int, int, Optional[Tuple[str, ...]]]] = None,
                 **options) -> None:
        what = "BenzinaDataset: "
        path = A.path(path, "path", what=what)
        attrs = self._attrs = self._check_options(options, what)
        _, seed, seed_given = _check_common(what, split, track, attrs["shuffle"], seed, splits,
                                            draw=augment is not None)
        epoch = first_epoch(epoch, what)
        check_attr("TfGulp>DecodeHevc", "crop", crop, what=what)
        decode = A.boolean(decode, "decode", what=what)
        if augment is not None:
            if not decode:
                raise ValueError(f"{what}augment= (fused into decoding) needs decode=True")
            augment = T.compile_augment(augment, what)
        path = absolute(path)
        # The split's range and class names, read once (re-creations by shard() are handed them).
        start, stop, self._class_names = _opened or _open(path, split, splits)
        args = dict(options, path=path, split=split, track=track, seed=seed, epoch=epoch,
                    crop=crop, decode=decode, splits=splits, augment=augment, _names=_names,
                    _opened=(start, stop, self._class_names))
        shard_attrs = self._keep_arguments(args, seed_given, _shard)
        if decode:
            # The records (named for decode_hevc's errors), decoded by a map; skip, take and
            # shard act on the records (see skip / take), so what they drop is not decoded.
            self._records = BenzinaDataset(**dict(args, decode=False, augment=None, _names=True),
                                           _shard=_shard)
            self._records._seed_given = seed_given
            self._decoded = _decode(self._records, args)
            self._element_spec = self._decoded.element_spec
            super().__init__(self._decoded._variant_tensor)  # pylint: disable=protected-access
            return
        self._element_spec = dict(_RECORD_SPEC, **(
            {"what": tf.TensorSpec([], tf.string)} if _names else {}))
        super().__init__(self._make_op(what, path=tf.convert_to_tensor(path, tf.string),
                                       start=start, stop=stop, seed=seed, names=_names,
                                       **attrs, **shard_attrs))

    def _inputs(self):
        return [self._decoded] if self._args["decode"] else []

    def skip(self, count, name=None) -> tf.data.Dataset:
        """tf.data's ``skip``, read nothing of what it drops: the source moves its position
        (and, decoded, the records are skipped before the decoding map)."""
        if self._args["decode"] and as_int(count) is not None:
            return _Decoded(self._records.skip(as_int(count)), self)
        return super().skip(count, name=name)

    def take(self, count, name=None) -> tf.data.Dataset:
        if self._args["decode"] and as_int(count) is not None:
            return _Decoded(self._records.take(as_int(count)), self)
        return super().take(count, name=name)


class _Decoded(ClassTable, ShardsItself, dataset_ops.DatasetV2):
    """A decoded :class:`BenzinaDataset` after ``skip`` or ``take``: its records (the source
    after them) decoded, with ``skip``, ``take`` and ``shard`` (known arguments) applied to the
    records, so what they drop is not decoded (tf.data's ``map`` decodes what a later ``skip``
    drops)."""

    def __init__(self, records: tf.data.Dataset, source: BenzinaDataset) -> None:
        self._records, self._source = records, source
        self._class_names = source._class_names  # pylint: disable=protected-access
        self._decoded = _decode(records, source._args)  # pylint: disable=protected-access
        super().__init__(self._decoded._variant_tensor)  # pylint: disable=protected-access

    def _inputs(self):
        return [self._decoded]

    @property
    def element_spec(self):
        return self._decoded.element_spec

    def skip(self, count, name=None) -> tf.data.Dataset:
        k = as_int(count)
        if k is None:
            return super().skip(count, name=name)
        return _Decoded(self._records.skip(k), self._source)

    def take(self, count, name=None) -> tf.data.Dataset:
        k = as_int(count)
        if k is None:
            return super().take(count, name=name)
        return _Decoded(self._records.take(k), self._source)

    def _own_shard(self, num_shards: int, index: int) -> tf.data.Dataset:
        check_shard(num_shards, index)
        return _Decoded(self._records.shard(num_shards, index), self._source)


def _decode(records: tf.data.Dataset, args: Mapping[str, Any]) -> tf.data.Dataset:
    """Named records (with "what") decoded by ``decode_hevc``, or with ``augment`` by
    ``decode_hevc_warped`` drawing from (seed, epoch, index): {"image", "label", "index"}."""
    track, crop, augment = args["track"], args["crop"], args["augment"]

    @tf.autograph.experimental.do_not_convert
    def decode(x):
        if augment is None:
            image = decode_hevc(x["sample"], track=track, crop=crop, what=x["what"])
        else:
            image = decode_hevc_warped(x["sample"], augment, seed=args["seed"], epoch=x["epoch"],
                                       elements=x["index"], what=x["what"], track=track,
                                       crop=crop)
        return {"image": image, "index": x["index"], "label": x["label"]}

    return records.map(decode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def _open(path: str, split: Optional[str], splits) -> Tuple[int, int, Optional[Tuple[str, ...]]]:
    """(start, stop, class names) of `split` in the container `path`, read and judged by the C++
    core (as the kernel judges it again when the dataset is made); a local path that is not a
    regular file is refused first."""
    try:  # local: a FIFO is refused (reading it would wait for a writer forever)
        check_regular_file(path)
    except FileNotFoundError:
        raise tf.errors.NotFoundError(None, None, f"{path}: no such file") from None
    except ValueError as e:  # a folder, a device...: what it is when the sniffer knows it
        other = wrong_reader_message(path, "a Benzina (.bzna) file", "a Benzina (.bzna) dataset")
        raise tf.errors.InvalidArgumentError(None, None, other or str(e)) from None
    file = _container(path)
    start, stop = file.split_range(split, splits)
    classes = (file.metadata or {}).get("classes")
    return start, stop, tuple(str(c) for c in classes) if classes else None


def ClassificationDataset(path, split: Optional[str] = None, track: str = "bzna_input",
                          **kwargs) -> tf.data.Dataset:
    """Like :func:`BenzinaDataset`, as ``(image, label)`` pairs."""
    return BenzinaDataset(path, split, track, **kwargs).map(
        lambda x: (x["image"], x["label"]), num_parallel_calls=tf.data.AUTOTUNE)


def ImageNet(root: Union[str, os.PathLike], split: str = "train", **kwargs) -> tf.data.Dataset:
    """ImageNet stored the Benzina way: `root` is the .bzna file, or a folder holding
    `ilsvrc2012.bzna` (or exactly one .bzna file); splits as in :func:`split_range` (keyword
    arguments, `splits=` included, go to :func:`BenzinaDataset`)."""
    root = absolute(A.path(root, "root", what="ImageNet: "))
    if tf.io.gfile.isdir(root):  # local or any TensorFlow file system
        candidates = sorted(f.rstrip("/") for f in tf.io.gfile.listdir(root)
                            if f.rstrip("/").endswith(".bzna"))
        if "ilsvrc2012.bzna" in candidates:
            candidates = ["ilsvrc2012.bzna"]
        if len(candidates) != 1:
            raise tf.errors.NotFoundError(None, None, f"{root}: expected ilsvrc2012.bzna or one "
                                          f".bzna file, found {candidates}")
        root = root.rstrip("/") + "/" + candidates[0]
    return ClassificationDataset(root, split, **kwargs)


def DataLoader(path: Union[str, os.PathLike], shape: Optional[Sequence[int]] = None,
               batch_size: int = 256, *, split: Optional[str] = None, shuffle: bool = False,
               seed: Optional[int] = None, epochs: Optional[int] = 1, start_epoch: int = 0,
               augment=None, warp_transform=None, bias_transform=None, norm_transform=None,
               color_transform=None, track: str = "bzna_input", drop_remainder: bool = False,
               splits: Optional[Mapping[str, Sequence[int]]] = None,
               device: Optional[str] = None, decode: str = "host") -> tf.data.Dataset:
    """Batches ready for ``model.fit``: ``(images [B, H, W, 3], int64 [B])``.

    Each image is decoded and augmented by ``augment`` (a :mod:`tf_gulp.transforms` list), every
    draw made in C++ from ``(seed, epoch, index)``: results do not depend on thread timing, and
    epoch e is the same whether it is reached by one run or after a restart with
    ``start_epoch=e``, on the CPU or on a device.

    The reference loader's arguments are the compatibility surface: ``shape`` (default
    (224, 224)), ``warp_transform`` (a :mod:`tf_gulp.bzna.transforms` transform; default the
    whole image resized), ``bias_transform`` / ``norm_transform`` (default ImageNet's, on the
    0-255 scale: float32 ``(v - bias) * norm``) and ``color_transform``
    (``tf_gulp.transforms.ColorJitter`` / ``RandomGrayscale``, or a list), compiled by
    :func:`tf_gulp.bzna.transforms.loader_augment` into the same kernels' attrs. Give either
    ``augment`` or those.

    On the CPU (``device=None``) decoding and augmenting are one op, ``decode_hevc_warped``,
    which converts to RGB only the rectangle the crop samples. `split` and `splits` as in
    :func:`BenzinaDataset`; labels are -1 for entries without a target. Every batch is a new
    tensor (the reference loader overwrites a batch with the next one).

    `device` (e.g. "/GPU:0") moves the warp out of tf.data into the training step, on that
    device (docs/gpu.md): the model's first layer is ``tf_gulp.bzna.WarpOnDevice(augment)`` with
    the loader's list (or its ``loader_augment``). `decode` says where pictures are decoded
    then: "host" (default) on the CPU in tf.data; "device" in the step on `device` (a GPU's
    kernel falls back to the CPU decoder by itself where NVDEC cannot be used); "auto" on the
    device when it is a GPU on which ``decode_hevc`` can use NVDEC
    (``tf_gulp.ops.bzna.hevc_ops.nvdec_unavailable_reason()`` is empty), else on the CPU.
    Decoding on a GPU, it logs a ``tf_gulp`` warning when TensorFlow was given neither memory
    growth nor a memory limit for that GPU (docs/gpu.md, "GPU memory"). The crops are the CPU
    path's on every path (``similarity_transform_matrices``). Decoded on the CPU, batches are
    ``({"image": uint8 [B, H, W, 3] padded to the batch's largest picture, "size": int32 [B, 2],
    "matrix": [B, 3, 3], "bias": [B, 3], "norm": [B, 3]}, labels)``; decoded on the device,
    ``({"sample": string [B], "what": string [B], "key": string [B, 3], "size", "matrix",
    "bias", "norm"}, labels)``. Colour transforms need the fused op: on a device, decode="device".
    The GPU kernels have not yet run under TensorFlow on a GPU.

    ``cardinality()`` is known: ``epochs`` times the split's entries, in batches (rounded up, or
    down with ``drop_remainder``); infinite with ``epochs=None``.

    Raises:
      TypeError: an argument of the wrong type (``shape=96`` instead of ``(96, 96)``,
        ``batch_size=32.0``, ``shuffle="yes"``, a transform tf_gulp cannot draw), naming it (the
        exception is also a ``ValueError``).
      ValueError: an argument outside its range, ``augment`` together with the reference's
        transform arguments, an unknown split, a `device` TensorFlow does not have, or a `decode`
        other than "auto" / "device" / "host" ("device" needs a `device`).
    """
    what = "DataLoader: "
    path = absolute(A.path(path, "path", what=what))
    batch_size = A.integer(batch_size, "batch_size", minimum=1, what=what)
    # The warps are random even without a shuffle: a seed of None is drawn.
    shuffle, seed, _ = _check_common(what, split, track, shuffle, seed, splits, draw=True)
    epochs = A.optional_integer(epochs, "epochs", minimum=1, what=what)
    start_epoch = A.integer(start_epoch, "start_epoch", minimum=0, what=what)
    drop_remainder = A.boolean(drop_remainder, "drop_remainder", what=what)
    reference = {name: value for name, value in (
        ("shape", shape), ("warp_transform", warp_transform), ("bias_transform", bias_transform),
        ("norm_transform", norm_transform), ("color_transform", color_transform))
        if value is not None}
    if augment is not None and reference:
        raise ValueError(f"{what}give augment= or the reference loader's {', '.join(reference)}"
                         f", not both (augment's first transform sets the output size)")
    if augment is not None:
        augment = T.compile_augment(augment, what)
    else:
        augment = loader_augment((224, 224) if shape is None else shape, warp_transform,
                                 bias_transform, norm_transform, color_transform, what)
    if decode not in ("auto", "device", "host"):
        raise ValueError(f"{what}decode={decode!r}: expected 'auto', 'device' or 'host'")
    if decode == "device" and device is None:
        raise ValueError(f"{what}decode='device' needs a device (e.g. device='/GPU:0')")
    on_device = False  # pictures decoded in the step, on `device`
    if device is not None:
        # pylint: disable-next=import-outside-toplevel
        from tf_gulp.bzna.on_device import check_device, gpu_memory_unsettled

        device = check_device(device, what)
        on_device = decode == "device" or (decode == "auto" and device.startswith("/GPU")
                                           and not nvdec_unavailable_reason())
        unsettled = gpu_memory_unsettled(device) if on_device else None
        if unsettled:
            # A warning, not an error: TensorFlow leaves some memory beside its own, which is
            # often room enough; where it is not, the step's ResourceExhaustedError says the same.
            logging.getLogger("tf_gulp").warning("%sdecode=%r: %s", what, decode, unsettled)
        if augment.color and not on_device:
            raise ValueError(f"{what}colour transforms run in decode_hevc_warped (the CPU "
                             f"kernel, or on a device with decode='device'); the warp of host-"
                             f"decoded pictures in the step (similarity_warp) has no colour "
                             f"stage")
    plan = _LoaderPlan(track=track, seed=seed, augment=augment, device=device,
                       on_device=on_device)
    # The source: each pass over it (each repeat() pass) is its next epoch, from a counter
    # shared by every re-creation, so pass p over the loader covers epochs
    # start_epoch + p * epochs, ..., and a checkpoint of the loader's iterator restores them.
    records = BenzinaDataset(path, split, track, shuffle=shuffle, seed=seed, epoch=start_epoch,
                             decode=False, splits=splits, _names=True)
    if epochs is None:
        start, stop, _ = records._args["_opened"]  # pylint: disable=protected-access
        if stop == start:  # an endless loader of empty epochs would never yield
            raise ValueError(f"{what}{path}: the split [{start}, {stop}) is empty; with "
                             f"epochs=None the loader would never yield a batch")
    ds = plan.entries(records.repeat(epochs))
    if plan.padded:  # pictures of different sizes: padded, with their sizes
        ds = ds.padded_batch(batch_size, drop_remainder=drop_remainder)
    else:
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    return ds.prefetch(tf.data.AUTOTUNE)


class _LoaderPlan:
    """What DataLoader does with each entry of an epoch, by where each step runs: ``fused`` (no
    device: ``decode_hevc_warped``, decode and augment in one op), or ``for the device`` (the
    warp, and with ``on_device`` the decoding, run in the step by ``WarpOnDevice``; tf.data gives
    the inputs and each picture's matrix, drawn by ``similarity_transform_matrices``: the fused
    op's crops)."""

    def __init__(self, *, track, seed, augment, device, on_device) -> None:
        self.track, self.seed, self.augment = track, seed, augment
        self.device, self.on_device = device, on_device
        # Decoded on the host and warped on a device: pictures of different sizes in a batch.
        self.padded = device is not None and not on_device

    def entries(self, records: tf.data.Dataset) -> tf.data.Dataset:
        """The source's entries (``BenzinaDataset(decode=False)`` records, named, each with its
        epoch), each mapped by the placement's step."""
        step = self._decode_and_warp if self.device is None else self._inputs_for_device
        return records.map(tf.autograph.experimental.do_not_convert(step),
                           num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)

    def _decode_and_warp(self, x):
        image = decode_hevc_warped(x["sample"], self.augment, seed=self.seed, epoch=x["epoch"],
                                   elements=x["index"], what=x["what"], track=self.track)
        return image, x["label"]

    def _inputs_for_device(self, x):
        """What ``WarpOnDevice`` takes in the step: the picture (or, decoded there, its sample),
        its size, matrix, bias and norm."""
        if self.on_device:  # decoded in the step: the size from the MP4 header
            size = hevc_sample_size(x["sample"], track=self.track, crop="clean", what=x["what"])
        else:
            image = decode_hevc(x["sample"], track=self.track, crop="clean", what=x["what"])
            size = tf.shape(image, out_type=tf.int32)[:2]
        params = {"size": size,
                  "matrix": similarity_transform_matrices(size, self.augment, seed=self.seed,
                                                          epoch=x["epoch"], elements=x["index"]),
                  "bias": _per_channel(self.augment.bias, 0.0),
                  "norm": _per_channel(self.augment.norm, 1.0)}
        if not self.on_device:
            return {"image": image, **params}, x["label"]
        # The key decode_hevc_warped draws from (WarpOnDevice).
        params["key"] = tf.strings.as_string(tf.stack(
            [tf.constant(self.seed, tf.int64), x["epoch"], x["index"]]))
        return {"sample": x["sample"], "what": x["what"], **params}, x["label"]


def _per_channel(values: Sequence[float], default: float) -> tf.Tensor:
    """A compiled bias or norm (none, one value, or one per channel) as float32 [3]."""
    return tf.broadcast_to(tf.constant(list(values) or [default], tf.float32), [3])
