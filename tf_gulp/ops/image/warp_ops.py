"""Python wrapper of the SimilarityWarp op (registered in similarity_warp_op.cc).

`similarity_warp` is exported as `tf_gulp.ops.similarity_warp`; the transforms in
`tf_gulp.transforms` build its matrices.
"""

from __future__ import annotations

from typing import Sequence, Union

import tensorflow as tf

from tf_gulp import _args as A
from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

tf.no_gradient("TfGulp>SimilarityWarp")


def _per_channel(value, channels, name: str) -> tf.Tensor:
    value = tf.convert_to_tensor(value, tf.float32, name=name)
    if value.shape.rank == 0:
        return tf.fill(tf.reshape(channels, [1]), value)
    if value.shape.rank != 1:
        raise ValueError(f"similarity_warp: {name} must be a scalar or a vector with one value "
                         f"per channel, got shape {value.shape}")
    return value


def similarity_warp(
    images,
    matrices,
    output_shape: Union[Sequence[int], tf.Tensor],
    bias=0.0,
    norm=1.0,
    oob_color=0.0,
    layout: str = "NHWC",
    name: str = None,
) -> tf.Tensor:
    """Warps uint8 pictures with 3x3 matrices mapping output pixels to input pixels.

    For every output pixel (x, y): `[X, Y, W] = M @ [x, y, 1]`, the input is sampled bilinearly at
    (X/W, Y/W), rounded and clamped to [0, 255], and written as `(v - bias) * norm` (float32). Output
    pixels that map outside the input picture (which covers [-0.5, W-0.5] x [-0.5, H-0.5]) get
    `oob_color` as is. This is the reference's "similarity warp" convention, so matrices from
    `tf_gulp.transforms` plug in directly.

    Args:
      images: uint8 `[B, H, W, C]` pictures, `[B, T, H, W, C]` clips (every frame of clip b is warped
        with matrix b), or one picture `[H, W, C]` (with one `[3, 3]` matrix). With
        `layout="NCHW"`: `[B, C, H, W]`, `[B, T, C, H, W]` or `[C, H, W]`.
      matrices: float32 `[B, 3, 3]` (or `[3, 3]` for one picture).
      output_shape: `(height, width)` of the output.
      bias, norm, oob_color: scalars or one value per channel.
      layout: "NHWC" or "NCHW", for both the input and the output.

    Returns:
      float32 tensor shaped like `images` with the spatial size replaced by `output_shape`.

    On a GPU device (e.g. under ``tf.device("/GPU:0")``, `images` in GPU memory) the op's GPU kernel
    warps on TensorFlow's stream. Its kernel ran on an H100 without TensorFlow (the device check,
    within 1 level of the CPU kernel); the op under TensorFlow on a GPU has not yet run
    (docs/gpu.md).
    """
    what = "similarity_warp: "
    check_attr("TfGulp>SimilarityWarp", "layout", layout, what=what)
    if not isinstance(output_shape, (tf.Tensor, tf.Variable)):  # a tensor is checked by the op
        if isinstance(output_shape, (str, bytes)) or not hasattr(output_shape, "__len__") or \
                len(output_shape) != 2:
            raise A.WrongTypeError(f"{what}output_shape must be (height, width), a pair of "
                                   f"positive integers, got {output_shape!r}")
        output_shape = tuple(A.integer(v, f"output_shape[{i}]", minimum=1, what=what)
                             for i, v in enumerate(output_shape))
    with tf.name_scope(name or "similarity_warp"):
        images = tf.convert_to_tensor(images)
        if images.dtype != tf.uint8:
            raise TypeError(f"similarity_warp: images must be uint8, got {images.dtype.name}")
        matrices = tf.convert_to_tensor(matrices, tf.float32)
        single = images.shape.rank == 3
        if single:
            images = images[tf.newaxis]
            matrices = tf.reshape(matrices, [1, 3, 3])
        channel_axis = -1 if layout == "NHWC" else -3
        channels = tf.shape(images)[channel_axis]
        output_shape = tf.cast(tf.convert_to_tensor(output_shape), tf.int32)
        out = load_ops().tf_gulp_similarity_warp(
            images=images,
            matrices=matrices,
            output_shape=output_shape,
            bias=_per_channel(bias, channels, "bias"),
            norm=_per_channel(norm, channels, "norm"),
            oob_color=_per_channel(oob_color, channels, "oob_color"),
            layout=layout,
        )
        return out[0] if single else out


tf.no_gradient("TfGulp>SimilarityTransformMatrices")


def similarity_transform_matrices(input_sizes, augment, *, seed=0, epoch=0, elements=None,
                                  name: str = None) -> tf.Tensor:
    """The matrices the fused decode + warp kernels draw, as a float32 ``[..., 3, 3]`` tensor.

    ``decode_hevc_warped``, ``decode_jpeg_warped`` and ``GulpDataset(augment=...)`` draw each
    element's crop in C++ from ``(seed, epoch, element)``. A pipeline that decodes in one place
    and warps in another (``tf_gulp.bzna.DataLoader(device=...)`` warps in the training step)
    takes its matrices from here, so the same seed gives the same crops on either path.

    Args:
      input_sizes: int32 ``[..., 2]``, each picture's (height, width).
      augment: a :mod:`tf_gulp.transforms` list (its geometry and output size are used).
      seed, epoch: int64 scalars keying the draws.
      elements: int64 ``[...]``, each picture's element number (default ``0, 1, ...``).

    Example:
      >>> m = similarity_transform_matrices([[240, 320]], [RandomResizedCrop(112)], seed=1)
      >>> m.shape
      TensorShape([1, 3, 3])
    """
    from tf_gulp.transforms import compile_augment  # pylint: disable=import-outside-toplevel

    plan = compile_augment(augment, what="similarity_transform_matrices: ")
    with tf.name_scope(name or "similarity_transform_matrices"):
        sizes = tf.convert_to_tensor(input_sizes)
        sizes = tf.cast(sizes, tf.int32)
        if elements is None:
            count = tf.reduce_prod(tf.shape(sizes, out_type=tf.int64)[:-1])
            elements = tf.reshape(tf.range(count, dtype=tf.int64), tf.shape(sizes)[:-1])
        return load_ops().tf_gulp_similarity_transform_matrices(
            input_sizes=sizes, seed=tf.cast(seed, tf.int64), epoch=tf.cast(epoch, tf.int64),
            elements=tf.cast(elements, tf.int64), warp=list(plan.warp),
            output_height=plan.height, output_width=plan.width)
