"""`GulpDataset`: a gulp directory as a `tf.data.Dataset`, read by C++ kernels."""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence, Tuple, Union

import tensorflow as tf

from tf_gulp import _args as A
from tf_gulp._source_dataset import ShardedSourceDataset, first_epoch, graph_path, source_seed
from tf_gulp.class_folders import ClassTable, names_by_index, read_label_table
from tf_gulp.gulp.label_maps import note_label_map
from tf_gulp.gulp.index import DEFAULT_MAX_CLIP_BYTES
from tf_gulp.gulp.ingest_record import warn_if_unfinished
from tf_gulp.ops.gulp.gulp_ops import FrameSpec, gulp_dataset_variant
from tf_gulp.transforms import kernel_warp_attrs

# Channels of each colorspace. The allowed colorspaces are the op's attr (gulp_dataset_op.cc):
# gulp_dataset_variant checks them before this is looked up.
_CHANNELS = {"rgb": 3, "gray": 1}

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


class GulpDataset(ClassTable, ShardedSourceDataset):
    """A gulp directory (GulpIO/GulpIO2 layout) as a `tf.data.Dataset`.

    Each element is a dict:

    - ``id``: string scalar, the item's id;
    - ``frames``: uint8 ``[T, H, W, C]`` (C = 3 for ``colorspace="rgb"``, 1 for ``"gray"``), or the
      JPEG bytes as a string ``[T]`` with ``decode=False``; with ``shape=(h, w)``, the warped clip
      ``[T, h, w, C]`` (uint8, or float32 with ``dtype="float32"``);
    - ``label``: int64 scalar: the meta's ``label_field`` value, mapped through ``label2idx`` (or the
      directory's ``label2idx.json``) when it is a string, as is when it is an integer, -1 when absent;
    - ``meta``: string scalar, the JSON text of the item's ``meta_data[0]``.

    The C++ kernel opens the directory and parses its ``.gmeta`` indexes itself; reading and JPEG
    decoding (libjpeg-turbo, all cores) run in C++ with no Python per element. The dataset's graph
    is just the path and these options, so it can be saved, checkpointed and run on tf.data service
    workers.

    Example (training clips: a random resized crop and flip per clip, decoded only as far as the
    crop needs, normalized, in the kernel)::

        from tf_gulp.transforms import RandomResizedCrop
        ds = tf_gulp.GulpDataset("/data/kinetics_gulp", num_frames=8, training=True,
                                 shuffle=True, seed=1, warp=RandomResizedCrop(),
                                 shape=(112, 112), dtype="float32", norm=1 / 255)
        ds = ds.map(lambda e: (e["frames"], e["label"]))
        model.fit(ds.batch(16).prefetch(tf.data.AUTOTUNE), epochs=10)

    Args:
      directory: the gulp directory (``data_N.gulp`` + ``meta_N.gmeta`` files); a path or a string
        tensor (to read several directories with ``interleave``). Any path TensorFlow's file
        systems accept: local, ``gs://``, ``s3://``, ``ram://``, ... (see docs/distributed.md).
      decode: decode the JPEG frames (default) or yield their bytes.
      colorspace: ``"rgb"`` or ``"gray"``: the decoded channel count, whatever the JPEGs hold.
      frames: which frames: a ``slice`` (``slice(0, 16, 2)``) or a list of indices (negative ones
        count from the end). Default: all frames.
      num_frames: sample this many frames in equal segments: at a random offset in each segment when
        ``training``, at the segment centres otherwise. Clips shorter than ``num_frames`` are looped.
      clip_len, frame_interval, num_clips: dense clips, with mmaction2's ``SampleFrames``
        semantics and names: ``num_clips`` clips of ``clip_len`` frames every ``frame_interval``
        frames. ``training=True``: SampleFrames' train-mode clip offsets (a random offset in each
        of ``num_clips`` equal spans of the video, drawn from (seed, epoch, element));
        ``training=False``: its test-mode offsets (``clip_len=1``: the TSN/TSM segment centres;
        else ``num_clips`` offsets spread evenly over
        ``[0, max(L - ((clip_len - 1) * frame_interval + 1), 0)]``, rounded half to even; one clip
        at the middle one). Frames past the end of a short video loop. ``frames`` is
        ``[T, H, W, C]`` for one clip with no ``crops``, else ``[V, T, H, W, C]``, V = clips x
        crops (docs/video.md).
      twice_sample, out_of_bound_opt, keep_tail_frames, temporal_jitter, target_fps: the rest of
        ``SampleFrames``' options, as it defines them (docs/video.md): ``twice_sample``
        (``training=False``) samples twice the clips; ``out_of_bound_opt="repeat_last"`` repeats a
        clip's last frame instead of looping; ``keep_tail_frames`` (``training=True``) lets
        offsets reach the video's tail; ``temporal_jitter`` moves each frame by a random
        ``0 .. frame_interval - 1``; ``target_fps`` resamples clips to this frame rate, from the
        ``"fps"`` each item's meta records (``tf-gulp ingest`` writes it for videos; an item
        without one is taken to be at ``target_fps`` already, as mmaction2 does).
      crops: with ``clip_len`` and ``shape``, the spatial test views of each clip: ``"three"``
        (mmaction2's ``ThreeCrop``: squares of the short side at the left or top, the right or
        bottom and the centre, in that order) or ``"center"`` (the centre square), each resized to
        ``shape``.
      view_order: the order of the views: ``"clip_major"`` (default: clip 0's crops, clip 1's,
        ...) or ``"crop_major"`` (mmaction2's: crop 0's clips, crop 1's, ...).
      training: random segment offsets for ``num_frames``, random clip offsets for ``clip_len``.
      shuffle: visit the items in a new pseudo-random order each epoch: a uniform permutation of
        all items (the keyed permutation FFRecordDataset and Benzina use, O(1) per position), so a
        batch mixes classes however the directory was written (ingest tools write chunks class by
        class). Each pass is a new epoch with a new order (and new frame offsets and crops): each
        iterator over this dataset, ``repeat()`` pass, Keras epoch, and each call of an
        ``interleave`` function that makes it (counted per directory). A newly constructed
        ``GulpDataset`` starts again at ``epoch``.
      seed: makes the shuffle and frame sampling reproducible: every decision is a function of
        (seed, epoch, element). An integer in [-2**63, 2**63 - 1] (the op's int64 attr; negative
        seeds are as good as positive ones). Default: a random seed.
      ids: only these ids, in storage order. An id missing from the directory is an error.
      label2idx: map from string labels to indices; default: the directory's ``label2idx.json``.
        When two directories read in one process (e.g. training and validation) number one class
        differently, a ``tf_gulp.gulp.LabelMapWarning`` names both; pass the training
        directory's map here (``tf_gulp.gulp.read_label2idx(train_dir)``) to read another
        directory with its numbering.
      label_field: the meta key that holds the label; ``None`` for no labels (all -1). Items
        without it are labeled -1; a field other than the default ``"label"`` that no item of the
        directory has is an ``InvalidArgumentError`` naming the fields the items do have (a typo
        would otherwise give every element the label -1).
      scale: decode at 1/scale of the size (1, 2, 4, 8), inside libjpeg-turbo's IDCT: much faster
        than decoding at full size and resizing.
      dct_method: ``"fast"`` (libjpeg-turbo's fast integer IDCT, as gulpio2 and
        ``tf.io.decode_jpeg`` use) or ``"accurate"``.
      shuffle_chunk_window: None (default): ``shuffle`` is uniform. An integer n >= 1 opts in to
        the chunk-window shuffle for slow storage: the chunk order is permuted and only the items
        of n consecutive chunks are permuted together, so reads stay within n chunks at a time --
        and a batch mixes only the classes of those n chunks (a directory written class by class,
        40 classes of 3 chunks, batches of 16: 3.9 distinct classes per batch at n = 4, against
        13.5 uniform; docs/benchmarks.md).
      max_clip_bytes: the most bytes one element's ``frames`` may take: decoded (checked from the
        JPEG headers before anything is decoded or allocated), or as JPEG bytes with
        ``decode=False`` (checked before reading). Default 1 GiB. An element over it is an
        ``InvalidArgumentError`` naming the id (``ignore_errors()`` skips it). With ``shape``, the
        output's bytes count.
      shape: ``(height, width)``: decode fused with a warp into clips of this size. Each frame is
        decoded only as far as the warp samples it (the iMCU columns around the crop, the rows
        down to its bottom, at the DCT scale 1/2, 1/4, 1/8 that keeps the output's resolution)
        and warped (bilinear) straight into the output. Default None: frames at their size.
      warp: with ``shape``: a :mod:`tf_gulp.transforms` transform (``RandomResizedCrop()``,
        ``CenterResizedCrop()``, ``SimilarityTransform(...)``, ``ConstantWarpTransform(m)``), one
        per clip (its frames share it), drawn in the kernel from (seed, epoch, element); None:
        the whole frame resized to ``shape``.
      dtype: with ``shape``: ``"uint8"`` (default; ``bias``/``norm`` not applied) or
        ``"float32"``: ``(v - bias) * norm``.
      bias, norm: with ``dtype="float32"``: a number, one per channel, or a
        ``ConstantBiasTransform`` / ``ConstantNormTransform``. Default 0 and 1.
      dct_scaling: with ``shape``: let the decoder scale by 1/2, 1/4, 1/8 where the output keeps
        its resolution (default; close to, not equal to, the full-size decode, see
        docs/gulp_dataset.md); False decodes the crop at full size.
      color: with ``shape``: :class:`tf_gulp.transforms.ColorJitter` /
        ``RandomGrayscale`` (or a list of them, applied in order) after the warp and before
        ``bias``/``norm``; one draw per clip (every frame alike) from (seed, epoch, element).
      epoch: the epoch of the first pass (default 0): a dataset made with ``epoch=3`` gives on its
        first pass exactly the 4th pass of one made with ``epoch=0`` (order, frame offsets, crops),
        and reads nothing of the three before; its next passes are epochs 4, 5, ... (how to
        resume ``model.fit``: docs/checkpoint.md).

    ``class_names`` / ``num_classes``: the classes of the label indices, from ``label2idx`` or
    the directory's ``label2idx.json`` (as Keras's ``image_dataset_from_directory`` gives
    ``class_names``); None without a table (or with a directory tensor).

    Raises:
      tf.errors.NotFoundError: the directory, a chunk's data or index file, or an id is missing.
      tf.errors.DataLossError: an index is not valid JSON or points past the end of its chunk.
      TypeError: an option of the wrong type (``num_frames=8.5``, ``shuffle="yes"``,
        ``frames=[0, 1.5]``; bools are not integers, numpy integers are), naming it, the value and
        what it accepts (the exception is also a ``ValueError``).
      ValueError: an option outside the values it accepts (``colorspace``, ``dct_method``,
        ``num_frames``, ``seed``, ``shuffle_chunk_window``, ``max_clip_bytes``), naming it.
      tf.errors.InvalidArgumentError: duplicate ids across chunks, a ``label_field`` no item has,
        other bad options (``scale``, frame indices); when read, a clip over ``max_clip_bytes`` or
        a frame over the pixel limit (see docs/gulp_dataset.md).
    """

    def __init__(
        self,
        directory: Union[str, os.PathLike, tf.Tensor],
        *,
        decode: bool = True,
        colorspace: str = "rgb",
        frames: FrameSpec = None,
        num_frames: Optional[int] = None,
        clip_len: Optional[int] = None,
        frame_interval: int = 1,
        num_clips: int = 1,
        twice_sample: bool = False,
        out_of_bound_opt: str = "loop",
        keep_tail_frames: bool = False,
        temporal_jitter: bool = False,
        target_fps: Optional[float] = None,
        crops: Optional[str] = None,
        view_order: str = "clip_major",
        training: bool = False,
        shuffle: bool = False,
        seed: Optional[int] = None,
        ids: Optional[Sequence[Union[str, int]]] = None,
        label2idx: Optional[Mapping[str, int]] = None,
        label_field: Optional[str] = "label",
        scale: int = 1,
        dct_method: str = "fast",
        shuffle_chunk_window: Optional[int] = None,
        max_clip_bytes: int = DEFAULT_MAX_CLIP_BYTES,
        shape: Optional[Tuple[int, int]] = None,
        warp=None,
        dtype: str = "uint8",
        bias=None,
        norm=None,
        dct_scaling: bool = True,
        color=None,
        epoch: int = 0,
        _shard: Tuple[int, int] = (1, 0),
    ) -> None:
        what = "GulpDataset: "
        if not isinstance(directory, tf.Tensor):
            directory = A.path(directory, "directory", what=what)
        decode = A.boolean(decode, "decode", what=what)
        frames = _frame_spec(frames)
        num_frames = A.optional_integer(num_frames, "num_frames", minimum=1, what=what)
        clip_len = A.optional_integer(clip_len, "clip_len", minimum=1, what=what)
        frame_interval = A.integer(frame_interval, "frame_interval", minimum=1, what=what)
        num_clips = A.integer(num_clips, "num_clips", minimum=1, what=what)
        twice_sample = A.boolean(twice_sample, "twice_sample", what=what)
        out_of_bound_opt = A.string(out_of_bound_opt, "out_of_bound_opt", what=what)
        keep_tail_frames = A.boolean(keep_tail_frames, "keep_tail_frames", what=what)
        temporal_jitter = A.boolean(temporal_jitter, "temporal_jitter", what=what)
        if target_fps is not None:
            target_fps = A.real(target_fps, "target_fps", minimum=0, maximum=1e6, what=what)
            if target_fps == 0:
                raise ValueError(f"{what}target_fps must be a frame rate above 0 (None: off), "
                                 f"got 0")
        crops = A.string(crops, "crops", what=what, none=True)
        view_order = A.string(view_order, "view_order", what=what)
        if crops is not None and shape is None:
            raise ValueError(f"{what}crops={crops!r} (the test views) needs shape=(height, "
                             f"width), the size each view is resized to")
        if crops is not None and warp is not None:
            raise ValueError(f"{what}crops={crops!r} and warp= both choose the crop: pass one")
        training = A.boolean(training, "training", what=what)
        shuffle = A.boolean(shuffle, "shuffle", what=what)
        seed, seed_given = source_seed(seed, what)
        ids = _ids(ids)
        label2idx = _label_map(label2idx)
        label_field = A.string(label_field, "label_field", what=what, none=True)
        scale = A.integer(scale, "scale", what=what)  # its values: the kernel's (1, 2, 4 or 8)
        # colorspace and dct_method's allowed values and max_clip_bytes' minimum are the op's
        # attrs, checked by gulp_dataset_variant.
        shuffle_chunk_window = A.optional_integer(shuffle_chunk_window, "shuffle_chunk_window",
                                                  minimum=1, what=what)
        max_clip_bytes = A.integer(max_clip_bytes, "max_clip_bytes", what=what)
        fused = _fused_args(shape, warp, dtype, bias, norm, dct_scaling, decode, color)
        epoch = first_epoch(epoch, what)
        shard_attrs = self._keep_arguments(dict(
            directory=directory, decode=decode, colorspace=colorspace, frames=frames,
            num_frames=num_frames, clip_len=clip_len, frame_interval=frame_interval,
            num_clips=num_clips, twice_sample=twice_sample, out_of_bound_opt=out_of_bound_opt,
            keep_tail_frames=keep_tail_frames, temporal_jitter=temporal_jitter,
            target_fps=target_fps, crops=crops, view_order=view_order, training=training, shuffle=shuffle, seed=seed, ids=ids,
            label2idx=label2idx, label_field=label_field, scale=scale, dct_method=dct_method,
            shuffle_chunk_window=shuffle_chunk_window, max_clip_bytes=max_clip_bytes,
            shape=shape, warp=warp, dtype=dtype, bias=bias, norm=norm,
            dct_scaling=dct_scaling, color=color, epoch=epoch), seed_given, _shard)
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
        variant = gulp_dataset_variant(
            path,
            ids=[str(i) for i in ids] if ids is not None else [],
            label_field=label_field or "",
            # The default may be absent (unlabeled splits read as -1); another field must exist.
            label_field_required=label_field not in (None, DEFAULT_LABEL_FIELD),
            label2idx=label2idx,
            frames=frames,
            num_frames=num_frames,
            clip_len=clip_len,
            frame_interval=frame_interval,
            num_clips=num_clips,
            twice_sample=twice_sample,
            out_of_bound_opt=out_of_bound_opt,
            keep_tail_frames=keep_tail_frames,
            temporal_jitter=temporal_jitter,
            target_fps=target_fps,
            crops=crops,
            view_order=view_order,
            training=training,
            decode=decode,
            colorspace=colorspace,
            scale=scale,
            dct_method=dct_method,
            shuffle=shuffle,
            seed=seed,
            # The op's 0: the uniform shuffle.
            shuffle_chunk_window=shuffle_chunk_window or 0,
            max_clip_bytes=int(max_clip_bytes),
            **shard_attrs,
            **fused,
        )
        num_selected: Optional[int] = None
        views: list = []  # [V] when frames are [V, T, ...]
        if num_frames is not None:
            num_selected = int(num_frames)
        elif clip_len is not None:
            num_selected = int(clip_len)
            clips = num_clips * (2 if twice_sample else 1)
            if clips > 1 or crops is not None:
                views = [clips * (3 if crops == "three" else 1)]
        elif frames is not None and not isinstance(frames, slice):
            num_selected = len(list(frames))
        if shape is not None:
            frame_spec = tf.TensorSpec(
                views + [num_selected, fused["output_height"], fused["output_width"],
                         _CHANNELS[colorspace]], tf.float32 if dtype == "float32" else tf.uint8)
        elif decode:
            frame_spec = tf.TensorSpec(
                views + [num_selected, None, None, _CHANNELS[colorspace]], tf.uint8
            )
        else:
            frame_spec = tf.TensorSpec(views + [num_selected], tf.string)
        self._element_spec = {
            "frames": frame_spec,
            "id": tf.TensorSpec([], tf.string),
            "label": tf.TensorSpec([], tf.int64),
            "meta": tf.TensorSpec([], tf.string),
        }
        super().__init__(variant)


def _fused_args(shape, warp, dtype, bias, norm, dct_scaling, decode, color=None) -> dict:
    """The op's attrs of the fused decode + warp, checked by name."""
    if shape is None:
        for name, value in (("warp", warp), ("bias", bias), ("norm", norm), ("color", color)):
            if value is not None:
                raise ValueError(f"{name}= needs shape=(height, width), the output size")
        if dtype != "uint8":
            raise ValueError(f"dtype={dtype!r} needs shape=(height, width), the output size")
        return {}
    if not decode:
        raise ValueError("shape= (the fused decode + warp) needs decode=True")
    attrs = kernel_warp_attrs(shape, warp, dtype, bias, norm, what="GulpDataset: ", color=color)
    dct_scaling = A.boolean(dct_scaling, "dct_scaling", what="GulpDataset: ")
    return dict(attrs, dct_scaling=dct_scaling)
