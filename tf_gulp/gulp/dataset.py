"""`GulpDataset`: a gulp directory as a `tf.data.Dataset`, read by C++ kernels."""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Tuple, Union

import tensorflow as tf

from tf_gulp import _args as A
from tf_gulp._source_dataset import OptionSourceDataset, first_epoch, graph_path, source_seed
from tf_gulp.class_folders import ClassTable, names_by_index, read_label_table
from tf_gulp.gulp.label_maps import note_label_map
from tf_gulp.gulp.ingest_record import warn_if_unfinished
from tf_gulp.ops.gulp.element_views import element_views
from tf_gulp.transforms import compile_augment

# Channels of each colorspace. The allowed colorspaces are the op's attr (image_ops.h), checked
# before this is looked up.
_CHANNELS = {"rgb": 3, "gray": 1}

# The op encodes a missing slice start/stop as INT64_MIN.
MISSING_SLICE_BOUND = -(2**63)

FrameSpec = Union[None, slice, Sequence[int]]

#: The default ``label_field``: items without it are unlabeled (-1); any other field that no item
#: of the directory has is an error (a typo, or another dataset's field).
DEFAULT_LABEL_FIELD = "label"


def _frame_spec(frames: FrameSpec) -> FrameSpec:
    """``frames`` checked: None, a slice of integers (or None bounds), or a list of integers."""
    what = "GulpDataset: "
    if frames is None:
        return None
    if isinstance(frames, slice):
        for part in ("start", "stop", "step"):
            A.optional_integer(getattr(frames, part), f"frames.{part}", what=what)
        if frames.step == 0:
            raise ValueError(f"{what}frames.step must not be 0, got {frames!r}")
        return frames
    try:
        return A.integer_list(frames, "frames", what=what)
    except A.WrongTypeError as e:
        raise A.WrongTypeError(f"{e}; frames is None, a slice (slice(0, 16, 2)) or a list of "
                               f"frame indices") from None


def _ids(ids) -> Optional[list]:
    """``ids`` checked: None or a list of str / int ids (a lone string is refused: it would be
    read as a list of one-character ids)."""
    if ids is None:
        return None
    if isinstance(ids, (str, bytes, Mapping)) or not hasattr(ids, "__iter__"):
        raise A.WrongTypeError(f"GulpDataset: ids must be a list of ids (str or int) or None, "
                               f"got {ids!r} ({type(ids).__name__})")
    out = list(ids)
    for i, id_ in enumerate(out):
        if not isinstance(id_, str) and not A.is_integer(id_):
            raise A.WrongTypeError(f"GulpDataset: ids[{i}] must be a str or an int, got "
                                   f"{id_!r} ({type(id_).__name__})")
    return out


def _label_map(label2idx) -> Optional[Mapping[str, int]]:
    """``label2idx`` checked: None or a mapping of str labels to int indices."""
    if label2idx is None:
        return None
    if not isinstance(label2idx, Mapping):
        raise A.WrongTypeError(f"GulpDataset: label2idx must be a mapping {{label: index}} or "
                               f"None, got {label2idx!r} ({type(label2idx).__name__})")
    for label, index in label2idx.items():
        A.string(label, "label2idx's keys", what="GulpDataset: ")
        A.integer(index, f"label2idx[{label!r}]", minimum=A.INT64_MIN, maximum=A.INT64_MAX,
                  what="GulpDataset: ")
    return label2idx


class GulpDataset(ClassTable, OptionSourceDataset):
    """A gulp directory (GulpIO/GulpIO2 layout) as a `tf.data.Dataset`.

    Each element is a dict:

    - ``id``: string scalar, the item's id;
    - ``frames``: uint8 ``[T, H, W, C]`` (C = 3 for ``colorspace="rgb"``, 1 for ``"gray"``), or the
      JPEG bytes as a string ``[T]`` with ``decode=False``; with ``augment``, the augmented clip
      ``[T, h, w, C]`` (uint8, or float32 after ``ToDtype(tf.float32)``);
    - ``label``: int64 scalar: the meta's ``label_field`` value, mapped through ``label2idx`` (or the
      directory's ``label2idx.json``) when it is a string, as is when it is an integer, -1 when absent;
    - ``meta``: string scalar, the JSON text of the item's ``meta_data[0]``.

    The C++ kernel opens the directory and parses its ``.gmeta`` indexes itself; reading and JPEG
    decoding (libjpeg-turbo, all cores) run in C++ with no Python per element. The dataset's graph
    is just the path and these options, so it can be saved, checkpointed and run on tf.data service
    workers.

    Example (training clips: a random resized crop and flip per clip, decoded only as far as the
    crop needs, scaled to [0, 1], in the kernel)::

        from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop, ToDtype
        ds = tf_gulp.GulpDataset("/data/kinetics_gulp", num_frames=8, training=True,
                                 shuffle=True, seed=1, augment=[
                                     RandomResizedCrop(112), RandomHorizontalFlip(),
                                     ToDtype(tf.float32, scale=True)])
        ds = ds.map(lambda e: (e["frames"], e["label"]))
        model.fit(ds.batch(16).prefetch(tf.data.AUTOTUNE), epochs=10)

    Args:
      directory: the gulp directory (``data_N.gulp`` + ``meta_N.gmeta`` files); a path or a string
        tensor (to read several directories with ``interleave``). Any path TensorFlow's file
        systems accept: local, ``gs://``, ``s3://``, ``ram://``, ... (see docs/gulp_dataset.md).
      frames: which frames: a ``slice`` (``slice(0, 16, 2)``) or a list of indices (negative ones
        count from the end). Default: all frames. Or ``num_frames`` (TSN segments), or
        ``clip_len`` with mmaction2's ``SampleFrames`` options (docs/video.md): ``frames`` is
        ``[T, H, W, C]`` for one clip with no ``crops``, else ``[V, T, H, W, C]``, V = clips x
        crops.
      seed: makes the shuffle, frame offsets and crops reproducible: every decision is a function
        of (seed, epoch, element). An integer in [-2**63, 2**63 - 1]. Default: a random seed.
        Each pass is a new epoch: each iterator, ``repeat()`` pass, Keras epoch.
      ids: only these ids, in storage order. An id missing from the directory is an error.
      label2idx: map from string labels to indices; default: the directory's ``label2idx.json``.
        When two directories read in one process number one class differently, a
        ``tf_gulp.gulp.LabelMapWarning`` names both; pass the training directory's map here
        (``tf_gulp.gulp.read_label2idx(train_dir)``) to read another with its numbering.
      label_field: the meta key that holds the label; ``None`` for no labels (all -1). Items
        without it are labeled -1; a field other than the default ``"label"`` that no item of the
        directory has is an ``InvalidArgumentError`` naming the fields the items do have.
      augment: a :mod:`tf_gulp.transforms` list in torchvision's vocabulary
        (``[RandomResizedCrop(112), RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4),
        ToDtype(tf.float32, scale=True), Normalize(mean, std)]``), fused into decoding: each
        frame is decoded only as far as the crop samples it; one draw per clip, made in the
        kernel from (seed, epoch, element). Default None: frames at their size.
      epoch: the epoch of the first pass (default 0): a dataset made with ``epoch=3`` gives on its
        first pass exactly the 4th pass of one made with ``epoch=0`` (docs/checkpoint.md).
      device: None (default): decode here. A device (``"/GPU:0"``): tf.data does not decode;
        each element is ``{"jpeg": string [T], "key": string [3] (seed, epoch, element as
        decimal strings), "name": string [T] (directory, id and place in the clip, for errors),
        "id", "label", "meta"}`` for :class:`tf_gulp.JpegOnDevice` (``augment`` goes to it
        too), which decodes and augments the clips in the step: pixel for pixel this dataset's
        ``augment`` on ``"/CPU:0"``. One view per element and ``colorspace="rgb"`` only; a
        device TensorFlow lacks, or a GPU where nvJPEG cannot run, is a ValueError naming the
        fix.
      **options: the options of the op's attr table, listed below (and in docs/gulp_dataset.md).

    ``class_names`` / ``num_classes``: the classes of the label indices, from ``label2idx`` or
    the directory's ``label2idx.json`` (as Keras's ``image_dataset_from_directory`` gives
    ``class_names``); None without a table (or with a directory tensor).

    Raises:
      tf.errors.NotFoundError: the directory, a chunk's data or index file, or an id is missing.
      tf.errors.DataLossError: an index is not valid JSON or points past the end of its chunk.
      TypeError: an option of the wrong type (``num_frames=8.5``, ``shuffle="yes"``,
        ``frames=[0, 1.5]``; bools are not integers, numpy integers are), naming it, the value and
        what it accepts (the exception is also a ``ValueError``).
      ValueError: an option outside the values it accepts, or options that exclude each other,
        naming it (checked by the table's rules, or by the kernel when it is made eagerly).
      tf.errors.InvalidArgumentError: duplicate ids across chunks, a ``label_field`` no item has,
        bad frame indices; when read, a clip over ``max_clip_bytes`` or a frame over the pixel
        limit (see docs/gulp_dataset.md).
    """

    _OP = "TfGulp>GulpDataset"

    def __init__(
        self,
        directory: Union[str, os.PathLike, tf.Tensor],
        *,
        frames: FrameSpec = None,
        seed: Optional[int] = None,
        ids: Optional[Sequence[Union[str, int]]] = None,
        label2idx: Optional[Mapping[str, int]] = None,
        label_field: Optional[str] = "label",
        augment=None,
        epoch: int = 0,
        device: Optional[str] = None,
        _shard: Tuple[int, int] = (1, 0),
        **options,
    ) -> None:
        what = "GulpDataset: "
        if not isinstance(directory, tf.Tensor):
            directory = A.path(directory, "directory", what=what)
        frames = _frame_spec(frames)
        attrs = self._check_options(options, what)
        if device is not None:
            self._init_undecoded(directory, frames, seed, ids, label2idx, label_field, augment,
                                 epoch, device, _shard, options, attrs)
            return
        self._attrs = attrs
        chosen = [name for name, given in (("frames", frames is not None),
                                           ("num_frames", attrs["num_frames"] != 0),
                                           ("clip_len", attrs["clip_len"] != 0)) if given]
        if len(chosen) > 1:
            raise ValueError(f"{what}pass one of frames= (a slice or indices), num_frames= (TSN "
                             f"segments) or clip_len= (dense clips), not {' and '.join(chosen)}")
        seed, seed_given = source_seed(seed, what)
        ids = _ids(ids)
        label2idx = _label_map(label2idx)
        label_field = A.string(label_field, "label_field", what=what, none=True)
        fused = _fused_args(augment, attrs["decode"], what, attrs["crops"])
        epoch = first_epoch(epoch, what)
        shard_attrs = self._keep_arguments(dict(
            directory=directory, frames=frames, seed=seed, ids=ids, label2idx=label2idx,
            label_field=label_field, augment=augment, epoch=epoch, **options), seed_given, _shard)
        path = graph_path(directory)  # a string tensor, e.g. inside interleave() over directories
        if not isinstance(path, tf.Tensor) and os.path.isdir(path):
            # Read while its ingest runs (or after it stopped): say how much is missing.
            warn_if_unfinished(path)
        if label_field and not isinstance(path, tf.Tensor):
            # Train on A, validate on B: a LabelMapWarning when they number a class apart.
            note_label_map(path, label2idx)
            table = label2idx if label2idx is not None else read_label_table(path)
            if table:
                self._class_names = tuple(names_by_index(table))
        if label2idx is not None:
            attrs.update(use_label_map=True, label_names=[str(k) for k in label2idx],
                         label_values=[int(v) for v in label2idx.values()])
        variant = self._make_op(
            what,
            directory=tf.convert_to_tensor(path, tf.string),
            ids=[str(i) for i in ids] if ids is not None else [],
            label_field=label_field or "",
            # The default may be absent (unlabeled splits read as -1); another field must exist.
            label_field_required=label_field not in (None, DEFAULT_LABEL_FIELD),
            seed=seed,
            **_frame_attrs(frames, attrs),
            **shard_attrs,
            **fused,
        )
        self._element_spec = _element_spec(attrs, frames, fused)
        super().__init__(variant)

    def _init_undecoded(self, directory, frames, seed, ids, label2idx, label_field, augment,
                        epoch, device, shard, options, attrs) -> None:
        """``device=``: the clips' JPEG bytes and keys for :class:`tf_gulp.JpegOnDevice`, read
        by a ``decode=False, keys=True`` dataset of the same options."""
        from tf_gulp.jpeg_on_device import check_jpeg_device  # pylint: disable=import-outside-toplevel
        what = "GulpDataset: "
        if augment is None:
            raise ValueError(f"{what}device={device!r} decodes in tf_gulp.JpegOnDevice(augment): "
                             f"give augment= (the layer's list), or leave device out")
        compile_augment(augment, what)
        if attrs["colorspace"] != "rgb":
            raise ValueError(f"{what}device={device!r} decodes colour clips only: leave "
                             f"colorspace={attrs['colorspace']!r} out, or leave device out to "
                             f"decode in tf.data on the CPU")
        given = {k: attrs[k] for k, default in (("dct_method", "fast"), ("dct_scaling", True))
                 if attrs[k] != default}
        if given:
            # Nothing is decoded here: the options would be lost silently.
            raise ValueError(f"{what}with device={device!r} the decode runs in "
                             f"tf_gulp.JpegOnDevice: give {given} to it, not here")
        if attrs["scale"] != 1 or not attrs["decode"]:
            raise ValueError(f"{what}device={device!r} decodes with augment's geometry: leave "
                             f"scale= and decode= out")
        views = element_views({**_frame_attrs(frames, attrs),
                               **_fused_args(augment, True, what, attrs["crops"])})
        if views:
            raise ValueError(f"{what}device={device!r} decodes one clip [T] per element; these "
                             f"options give {views[0]} views [V, T] (clips x crops): use "
                             f"num_clips=1 without crops, or leave device out to decode in "
                             f"tf.data on the CPU")
        device = check_jpeg_device(device, what)
        seed, seed_given = source_seed(seed, what)  # one seed for the reads and the keys
        inner = GulpDataset(directory, frames=frames, seed=seed, ids=ids, label2idx=label2idx,
                            label_field=label_field, epoch=epoch, _shard=shard,
                            **dict(options, decode=False, keys=True))
        self._attrs = inner._attrs  # pylint: disable=protected-access
        self._class_names = inner._class_names  # pylint: disable=protected-access
        self._keep_arguments(dict(
            directory=directory, frames=frames, seed=seed, ids=ids, label2idx=label2idx,
            label_field=label_field, augment=augment, epoch=epoch, device=device, **options),
            seed_given, shard)
        where = directory if isinstance(directory, tf.Tensor) else tf.constant(str(directory))

        def undecoded(e):
            # What JpegOnDevice decodes in the step, keyed as the kernel keys the clip's draws.
            frame = tf.strings.as_string(tf.range(tf.size(e["frames"], tf.int64)))
            return {"jpeg": e["frames"],
                    "key": tf.strings.as_string(tf.stack([tf.constant(seed, tf.int64),
                                                          e["epoch"], e["index"]])),
                    "name": tf.strings.join([where, " id '", e["id"], "' frame ", frame]),
                    "id": e["id"], "label": e["label"], "meta": e["meta"]}

        mapped = inner.map(undecoded, num_parallel_calls=tf.data.AUTOTUNE)
        self._element_spec = mapped.element_spec
        super().__init__(mapped._variant_tensor)  # pylint: disable=protected-access


def _frame_attrs(frames: FrameSpec, attrs: dict) -> dict:
    """The op's attrs with the frame selection ``frames`` (a Python slice or index list) or the
    options (``num_frames``, ``clip_len``) choose: ``frame_mode`` and its bounds."""
    if attrs["clip_len"]:
        return dict(attrs, frame_mode="clips")
    if attrs["num_frames"]:
        return dict(attrs, frame_mode="segments")
    if isinstance(frames, slice):
        return dict(
            attrs, frame_mode="slice",
            slice_start=MISSING_SLICE_BOUND if frames.start is None else int(frames.start),
            slice_stop=MISSING_SLICE_BOUND if frames.stop is None else int(frames.stop),
            slice_step=1 if frames.step is None else int(frames.step))
    if frames is not None:
        return dict(attrs, frame_mode="indices", frame_indices=[int(i) for i in frames])
    return dict(attrs, frame_mode="all")


def _element_spec(attrs: dict, frames: FrameSpec, fused: dict) -> dict:
    """The elements' spec: ``frames`` is [T, ...], or [V, T, ...] for several clip views (the
    kernel's views axis: element_views)."""
    num_selected: Optional[int] = None
    views = element_views({**_frame_attrs(frames, attrs), **fused})
    if attrs["num_frames"]:
        num_selected = attrs["num_frames"]
    elif attrs["clip_len"]:
        num_selected = attrs["clip_len"]
    elif frames is not None and not isinstance(frames, slice):
        num_selected = len(list(frames))
    channels = _CHANNELS[attrs["colorspace"]]
    if fused:
        frame_spec = tf.TensorSpec(
            views + [num_selected, fused["output_height"], fused["output_width"], channels],
            fused["output_type"])
    elif attrs["decode"]:
        frame_spec = tf.TensorSpec(views + [num_selected, None, None, channels], tf.uint8)
    else:
        frame_spec = tf.TensorSpec(views + [num_selected], tf.string)
    spec = {
        "frames": frame_spec,
        "id": tf.TensorSpec([], tf.string),
        "label": tf.TensorSpec([], tf.int64),
        "meta": tf.TensorSpec([], tf.string),
    }
    if attrs["keys"]:
        # The op's outputs (epoch, frames, id, index, label, meta): the keys in sorted order.
        spec.update(epoch=tf.TensorSpec([], tf.int64), index=tf.TensorSpec([], tf.int64))
    return spec


def _fused_args(augment, decode: bool, what: str, crops: str = "none") -> dict:
    """The op's attrs of the fused decode + augment (none without ``augment``). With ``crops``
    the views are the crops: the list may say the output size (``Resize((h, w))``), colour,
    dtype and normalisation, and the kernel gets no warp of its own."""
    if augment is None:
        if crops != "none":
            raise ValueError(f"{what}crops={crops!r} (the test views) needs the output size: "
                             f"augment=[Resize((height, width))]")
        return {}
    if not decode:
        raise ValueError(f"{what}augment= (fused into decoding) needs decode=True")
    plan = compile_augment(augment, what)
    attrs = plan.attrs()
    if crops != "none":
        warp = plan.warp
        # (kCropResize, mode resize + centre crop, resize h, w, scale, ratio, flip h, flip v)
        plain_resize = (not warp or (len(warp) == 10 and warp[1] == 1.0
                                     and (warp[2], warp[3]) == plan.shape
                                     and warp[8] == warp[9] == 0.0))
        if not plain_resize:
            raise ValueError(f"{what}crops={crops!r} (the test views) takes augment=[Resize(("
                             f"height, width)), ...] without crops or flips of its own: each "
                             f"view is its own crop, resized to that size; got "
                             f"{list(plan.source)!r}")
        attrs["warp"] = []
    return attrs
