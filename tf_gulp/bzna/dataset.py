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
from typing import Mapping, Optional, Sequence, Tuple, Union

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
from tf_gulp.ops.bzna.hevc_ops import (decode_hevc, decode_hevc_warped, hevc_sample_size,
                                  nvdec_unavailable_reason)
from tf_gulp.ops.op_attrs import check_attr
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices, similarity_warp

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


def _transform(value, name: str, what: str):
    T._check_transform_instance(value, name, what)  # pylint: disable=protected-access
    return A.optional_callable(value, name, what=what,
                               example=f"tf_gulp.transforms.{_TRANSFORM_EXAMPLES[name]}")


_TRANSFORM_EXAMPLES = {"warp_transform": "RandomResizedCrop()",
                       "bias_transform": "ConstantBiasTransform()",
                       "norm_transform": "ConstantNormTransform()"}


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
                 _shard: Tuple[int, int] = (1, 0), _names: bool = False,
                 _opened: Optional[Tuple[int, int, Optional[Tuple[str, ...]]]] = None,
                 **options) -> None:
        what = "BenzinaDataset: "
        path = A.path(path, "path", what=what)
        attrs = self._attrs = self._check_options(options, what)
        _, seed, seed_given = _check_common(what, split, track, attrs["shuffle"], seed, splits,
                                            draw=False)
        epoch = first_epoch(epoch, what)
        check_attr("TfGulp>DecodeHevc", "crop", crop, what=what)
        decode = A.boolean(decode, "decode", what=what)
        path = absolute(path)
        # The split's range and class names, read once (re-creations by shard() are handed them).
        start, stop, self._class_names = _opened or _open(path, split, splits)
        args = dict(options, path=path, split=split, track=track, seed=seed, epoch=epoch,
                    crop=crop, decode=decode, splits=splits, _names=_names,
                    _opened=(start, stop, self._class_names))
        shard_attrs = self._keep_arguments(args, seed_given, _shard)
        if decode:
            # The records (named for decode_hevc's errors), decoded by a map; skip, take and
            # shard act on the records (see skip / take), so what they drop is not decoded.
            self._records = BenzinaDataset(**dict(args, decode=False, _names=True),
                                           _shard=_shard)
            self._records._seed_given = seed_given
            self._decoded = _decode(self._records, track, crop)
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
        args = source._args  # pylint: disable=protected-access
        self._decoded = _decode(records, args["track"], args["crop"])
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


def _decode(records: tf.data.Dataset, track: str, crop: str) -> tf.data.Dataset:
    """Named records (with "what") decoded by ``decode_hevc``: {"image", "label", "index"}."""

    @tf.autograph.experimental.do_not_convert
    def decode(x):
        return {"image": decode_hevc(x["sample"], track=track, crop=crop, what=x["what"]),
                "index": x["index"], "label": x["label"]}

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


def DataLoader(path: Union[str, os.PathLike], shape: Sequence[int] = (224, 224),
               batch_size: int = 256, *, split: Optional[str] = None, shuffle: bool = False,
               seed: Optional[int] = None, epochs: Optional[int] = 1, start_epoch: int = 0,
               warp_transform=None, bias_transform=None, norm_transform=None,
               track: str = "bzna_input", drop_remainder: bool = False,
               splits: Optional[Mapping[str, Sequence[int]]] = None,
               device: Optional[str] = None, decode: str = "host",
               color_transform=None) -> tf.data.Dataset:
    """Batches ready for ``model.fit``: ``(float32 [B, H, W, 3], int64 [B])``.

    Each image is decoded (``decode_hevc``) and warped to `shape` = (height, width) by
    ``similarity_warp`` with the matrix of ``warp_transform(in_hw, shape, key)``, then
    ``(v - bias) * norm`` with ``bias_transform(key)`` / ``norm_transform(key)``. ``key`` is
    ``element_key(seed, epoch, index)``: results do not depend on thread timing, and epoch e is the
    same whether it is reached by one run or after a restart with ``start_epoch=e``.

    Defaults: the whole image resized to `shape` (no crop), and ``ConstantBiasTransform()`` /
    ``ConstantNormTransform()``: the one default of bias and norm, documented in
    :mod:`tf_gulp.transforms` (ImageNet's normalization). For ImageNet training:
    ``warp_transform=RandomResizedCrop()``; for evaluation ``CenterResizedCrop()``; for float
    pixels on the 0-255 scale, ``ConstantBiasTransform(0.0)`` and ``ConstantNormTransform(1.0)``.

    On the CPU, when `warp_transform` is a :mod:`tf_gulp.transforms` SimilarityTransform family
    member or ConstantWarpTransform and bias / norm are constants (the defaults), decoding and
    warping are one op, ``decode_hevc_warped``, which draws the transform in C++ from
    ``(seed, epoch, index)`` (another random stream than the Python transforms': the same seed gives
    other random crops than ``tf_gulp`` versions before it; docs/benzina.md) and converts to RGB only
    the rectangle the crop samples. Other callables run as above.

    `color_transform` (a :class:`tf_gulp.transforms.ColorJitter` / ``RandomGrayscale``, or a list
    of them) colours each image after the warp and before bias and norm, drawn in C++ from
    ``(seed, epoch, index)``; it needs the fused CPU path (``device=None`` and transforms the
    kernel can draw), else it is a ValueError.

    `split` and `splits` as in :func:`BenzinaDataset`; labels are -1 for entries without a
    target. Unlike the reference loader, every batch is a new tensor (a batch is never overwritten
    by the next one).

    `device` (e.g. "/GPU:0") moves the warp out of tf.data into the training step, on that device
    (docs/gpu.md), and the model's first layer is ``tf_gulp.bzna.WarpOnDevice(shape)``, which
    gives the float batch above in the device's memory. `decode` says where pictures are decoded
    then: "host" (default) on the CPU in tf.data; "device" in the step on `device` (a GPU's kernel
    falls back to the CPU decoder by itself where NVDEC cannot be used); "auto" on the device when
    it is a GPU on which ``decode_hevc`` can use NVDEC
    (``tf_gulp.ops.bzna.hevc_ops.nvdec_unavailable_reason()`` is empty), else on the CPU in tf.data.
    Decoding on the device is opt-in: the NVDEC path has run on a GPU only without TensorFlow
    (docs/gpu.md). Decoding on a GPU, it logs a ``tf_gulp`` warning when TensorFlow was given
    neither memory growth nor a memory limit for that GPU: NVDEC's surfaces need memory outside
    TensorFlow's (docs/gpu.md, "GPU memory").
    On every path, transforms the kernels can draw are drawn in C++ from ``(seed, epoch,
    index)`` (``similarity_transform_matrices``), so the crops are the CPU path's. Decoded on the CPU, batches are
    ``({"image": uint8 [B, H, W, 3] padded to the batch's largest picture, "size": int32 [B, 2],
    "matrix": [B, 3, 3], "bias": [B, 3], "norm": [B, 3]}, labels)``; decoded on the device,
    ``({"sample": string [B] (the compressed samples), "what": string [B], "size", "matrix",
    "bias", "norm"}, labels)``, the sizes read from the samples' MP4 headers (the step checks the
    decoded sizes against them). The GPU kernels have not yet run under TensorFlow on a GPU.

    ``cardinality()`` is known: ``epochs`` times the split's entries, in batches (rounded up, or
    down with ``drop_remainder``); infinite with ``epochs=None``.

    Raises:
      TypeError: an argument of the wrong type (``shape=96`` instead of ``(96, 96)``,
        ``batch_size=32.0``, ``shuffle="yes"``, a transform that is not callable), naming it (the
        exception is also a ``ValueError``).
      ValueError: an argument outside its range (a size, ``batch_size`` or ``epochs`` under 1,
        a ``seed`` outside [-2**63, 2**63 - 1], a ``track`` other than "bzna_input" /
        "bzna_thumb"), an unknown split, a `device` TensorFlow does not have (e.g. "/GPU:0"
        with tensorflow-cpu), or a `decode` other than "auto" / "device" / "host" ("device"
        needs a `device`).
    """
    what = "DataLoader: "
    path = absolute(A.path(path, "path", what=what))
    shape = A.output_shape(shape, what)
    batch_size = A.integer(batch_size, "batch_size", minimum=1, what=what)
    # The warps are random even without a shuffle: a seed of None is drawn.
    shuffle, seed, _ = _check_common(what, split, track, shuffle, seed, splits, draw=True)
    epochs = A.optional_integer(epochs, "epochs", minimum=1, what=what)
    start_epoch = A.integer(start_epoch, "start_epoch", minimum=0, what=what)
    drop_remainder = A.boolean(drop_remainder, "drop_remainder", what=what)
    warp_transform = (_transform(warp_transform, "warp_transform", what)
                      or T.SimilarityTransform(resize=True))
    # The one default of bias and norm: the Constant*Transforms' (tf_gulp.transforms).
    bias_transform = (_transform(bias_transform, "bias_transform", what)
                      or T.ConstantBiasTransform())
    norm_transform = (_transform(norm_transform, "norm_transform", what)
                      or T.ConstantNormTransform())
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
    plan = _LoaderPlan(path=path, shape=shape, track=track, shuffle=shuffle, seed=seed,
                       warp=warp_transform, bias=bias_transform, norm=norm_transform,
                       color=color_transform, device=device, on_device=on_device)
    T.kernel_color(color_transform, what)  # checked here, before any graph is built
    if color_transform is not None and not plan.fused:
        raise ValueError(f"{what}color_transform runs in decode_hevc_warped's CPU kernel only: "
                         f"it needs device=None and a warp / bias / norm the kernel can draw "
                         f"(tf_gulp.transforms' SimilarityTransform family, constant bias and "
                         f"norm)")
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
    """What DataLoader does with each entry of an epoch, by where each step runs:

    - **source**: the entries of every epoch (a :class:`BenzinaDataset` of undecoded records,
      each with its epoch), decoded in tf.data unless decoding is fused with the warp
      (``fused``) or moved to the device (``on_device``);
    - **decode + warp placement**, one of three: ``fused`` (no device: ``decode_hevc_warped``,
      decode and warp in one op, the transform drawn in C++), ``in tf.data`` (no device,
      transforms only Python can draw: ``decode_hevc`` then ``similarity_warp``), or ``for the
      device`` (a device: the warp, and with ``on_device`` the decoding, run in the step by
      ``WarpOnDevice``; tf.data gives the inputs and each picture's matrix, bias and norm).

    A colour transform (``color``) runs only in the fused kernel; DataLoader refuses it on the
    other placements.

    Transforms the kernels can draw (``drawn_in_cpp``) are drawn in C++ on every path
    (``similarity_transform_matrices`` where the warp is not fused), so one seed gives one set of
    crops wherever the loader warps."""

    def __init__(self, *, path, shape, track, shuffle, seed, warp, bias, norm, color, device,
                 on_device) -> None:
        self.path, self.shape, self.track = path, shape, track
        self.shuffle, self.seed = shuffle, seed
        self.warp, self.bias, self.norm = warp, bias, norm
        self.color = color  # ColorJitter / RandomGrayscale: the fused path's kernel only
        self.device, self.on_device = device, on_device
        self.drawn_in_cpp = _fusable(warp, bias, norm)
        self.fused = device is None and self.drawn_in_cpp
        # Decoded on the host and warped on a device: pictures of different sizes in a batch.
        self.padded = device is not None and not on_device

    def entries(self, records: tf.data.Dataset) -> tf.data.Dataset:
        """The source's entries (``BenzinaDataset(decode=False)`` records, named, each with its
        epoch), each mapped by the placement's step."""
        if self.fused:
            step = self._decode_and_warp
        elif self.device is not None:
            step = self._inputs_for_device
        else:
            step = self._warp_in_tf_data
        return records.map(tf.autograph.experimental.do_not_convert(step),
                           num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)

    def _image(self, x) -> tf.Tensor:
        """The entry's picture decoded on the host (the clean aperture)."""
        return decode_hevc(x["sample"], track=self.track, crop="clean", what=x["what"])

    def _decode_and_warp(self, x):
        """Fused, on the CPU: decode + warp in one op, the transform drawn in C++ from (seed,
        epoch, index); only what the crop samples is converted to RGB."""
        image = decode_hevc_warped(
            x["sample"], self.shape, self.warp, seed=self.seed, epoch=x["epoch"],
            elements=x["index"], dtype="float32", bias=self.bias, norm=self.norm,
            what=x["what"], track=self.track, color=self.color)
        return image, x["label"]

    def _matrix(self, x, size):
        if self.drawn_in_cpp:  # the matrix the CPU path's fused kernel draws: the same crops
            return similarity_transform_matrices(size, self.shape, self.warp, seed=self.seed,
                                                 epoch=x["epoch"], elements=x["index"])
        return self.warp(size, self.shape, T.element_key(self.seed, x["epoch"], x["index"]))

    def _warp_in_tf_data(self, x):
        """Decoded in tf.data, warped there by ``similarity_warp``."""
        key = T.element_key(self.seed, x["epoch"], x["index"])
        image = self._image(x)
        size = tf.shape(image, out_type=tf.int32)[:2]
        image = similarity_warp(image, self._matrix(x, size), self.shape, self.bias(key),
                                self.norm(key))
        return image, x["label"]

    def _inputs_for_device(self, x):
        """What ``WarpOnDevice`` takes in the step: the picture (or, decoded there, its sample),
        its size, matrix, bias and norm."""
        key = T.element_key(self.seed, x["epoch"], x["index"])
        if self.on_device:  # decoded in the step: the size from the MP4 header
            size = hevc_sample_size(x["sample"], track=self.track, crop="clean", what=x["what"])
        else:
            image = self._image(x)
            size = tf.shape(image, out_type=tf.int32)[:2]
        params = {"size": size,
                  "matrix": tf.convert_to_tensor(self._matrix(x, size), tf.float32),
                  "bias": _per_channel(self.bias(key)), "norm": _per_channel(self.norm(key))}
        if not self.on_device:
            return {"image": image, **params}, x["label"]
        if self.drawn_in_cpp:  # the key decode_hevc_warped draws from (WarpOnDevice)
            params["key"] = tf.strings.as_string(tf.stack(
                [tf.constant(self.seed, tf.int64), x["epoch"], x["index"]]))
        return {"sample": x["sample"], "what": x["what"], **params}, x["label"]


def _fusable(warp_transform, bias_transform, norm_transform) -> bool:
    """Whether decode_hevc_warped can draw these transforms in C++ (tf_gulp.transforms'
    SimilarityTransform family / ConstantWarpTransform, constant bias and norm); other callables
    run in a map after decode_hevc, as before."""
    try:
        T.kernel_transform(warp_transform)
        for value, name in ((bias_transform, "bias"), (norm_transform, "norm")):
            if len(T.kernel_vector(value, name)) not in (0, 1, 3):
                return False
    except TypeError:
        return False
    return True


def _per_channel(value) -> tf.Tensor:
    """A bias or norm as float32 [3] (transforms may give a scalar)."""
    value = tf.convert_to_tensor(value, tf.float32)
    return tf.broadcast_to(value, [3])
