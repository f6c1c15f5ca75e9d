"""Python wrapper of the GulpDataset op (registered in gulp_ops.cc).

Only argument translation lives here; users call :class:`tf_gulp.GulpDataset`.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import tensorflow as tf

from tf_gulp.ops.epoch.epoch_ops import new_epoch_counter
from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

OP_NAME = "TfGulp>GulpDataset"

# The op encodes a missing slice start/stop as INT64_MIN.
MISSING_SLICE_BOUND = -(2**63)

FrameSpec = Union[None, slice, Sequence[int]]


def gulp_dataset_variant(
    directory: str,
    *,
    ids: Sequence[str],
    label_field: str,
    label_field_required: bool = False,
    label2idx: Optional[Mapping[str, int]],
    frames: FrameSpec,
    num_frames: Optional[int],
    training: bool,
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
    decode: bool,
    colorspace: str,
    scale: int,
    dct_method: str,
    shuffle: bool,
    seed: int,
    shuffle_chunk_window: int,
    max_clip_bytes: int,
    num_shards: int = 1,
    shard_index: int = 0,
    first_epoch: int = 0,
    **fused,
) -> tf.Tensor:
    """Creates the variant tensor of a GulpDataset (see tf_gulp.GulpDataset).

    Raises ValueError for an option the op's registration does not accept (a colorspace or
    dct_method outside its allowed values, a shuffle_chunk_window or max_clip_bytes under its
    minimum; shuffle_chunk_window 0 is the uniform shuffle), naming the option and what it accepts. `fused` holds the fused decode + warp's
    attrs (warp, output_height, output_width, output_type, bias, norm, dct_scaling).
    """
    for attr, value in (("colorspace", colorspace), ("dct_method", dct_method),
                        ("shuffle_chunk_window", int(shuffle_chunk_window)),
                        ("max_clip_bytes", int(max_clip_bytes))):
        check_attr(OP_NAME, attr, value)
    chosen = [name for name, value in (("frames", frames), ("num_frames", num_frames),
                                       ("clip_len", clip_len)) if value is not None]
    if len(chosen) > 1:
        raise ValueError(f"pass one of frames= (a slice or indices), num_frames= (TSN segments) "
                         f"or clip_len= (dense clips), not {' and '.join(chosen)}")
    # SampleFrames' options beside clip_len, as (name, value, default).
    clip_options = (("frame_interval", frame_interval, 1), ("num_clips", num_clips, 1),
                    ("twice_sample", twice_sample, False),
                    ("out_of_bound_opt", out_of_bound_opt, "loop"),
                    ("keep_tail_frames", keep_tail_frames, False),
                    ("temporal_jitter", temporal_jitter, False), ("target_fps", target_fps, None),
                    ("crops", crops, None), ("view_order", view_order, "clip_major"))
    given = [name for name, value, default in clip_options if value != default]
    if clip_len is None and given:
        raise ValueError(f"{', '.join(name + '=' for name in given)}: options of clip sampling, "
                         f"they need clip_len=")
    frame_args = dict(frame_mode="all")
    if clip_len is not None:
        check_attr(OP_NAME, "crops", "none" if crops is None else crops)
        check_attr(OP_NAME, "out_of_bound_opt", out_of_bound_opt)
        check_attr(OP_NAME, "view_order", view_order)
        frame_args = dict(frame_mode="clips", clip_len=int(clip_len),
                          frame_interval=int(frame_interval), num_clips=int(num_clips),
                          twice_sample=bool(twice_sample), out_of_bound_opt=out_of_bound_opt,
                          keep_tail_frames=bool(keep_tail_frames),
                          temporal_jitter=bool(temporal_jitter),
                          target_fps=0.0 if target_fps is None else float(target_fps),
                          crops="none" if crops is None else crops, view_order=view_order)
    elif num_frames is not None:
        frame_args = dict(frame_mode="segments", num_frames=int(num_frames))
    elif isinstance(frames, slice):
        frame_args = dict(
            frame_mode="slice",
            slice_start=MISSING_SLICE_BOUND if frames.start is None else int(frames.start),
            slice_stop=MISSING_SLICE_BOUND if frames.stop is None else int(frames.stop),
            slice_step=1 if frames.step is None else int(frames.step),
        )
    elif frames is not None:
        indices = [int(i) for i in frames]
        frame_args = dict(frame_mode="indices", frame_indices=indices)
    label_args = {}
    if label2idx is not None:
        label_args = dict(
            use_label_map=True,
            label_names=[str(k) for k in label2idx],
            label_values=[int(v) for v in label2idx.values()],
        )
    return load_ops().tf_gulp_gulp_dataset(
        directory=tf.convert_to_tensor(directory, tf.string),
        ids=[str(i) for i in ids],
        label_field=label_field,
        label_field_required=bool(label_field_required),
        training=bool(training),
        decode=bool(decode),
        colorspace=colorspace,
        scale=int(scale),
        dct_method=dct_method,
        shuffle=bool(shuffle),
        seed=int(seed),
        shuffle_chunk_window=int(shuffle_chunk_window),
        max_clip_bytes=int(max_clip_bytes),
        num_shards=int(num_shards),
        shard_index=int(shard_index),
        first_epoch=int(first_epoch),
        epoch_counter=new_epoch_counter(),
        **fused,
        **label_args,
        **frame_args,
    )
