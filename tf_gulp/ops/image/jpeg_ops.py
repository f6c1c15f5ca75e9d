"""Python wrapper of the DecodeJpegWarped op (registered in decode_jpeg_warped_op.cc)."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import tensorflow as tf

from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

OP_NAME = "TfGulp>DecodeJpegWarped"

tf.no_gradient(OP_NAME)


def decode_jpeg_warped(
    contents,
    shape: Sequence[int],
    warp=None,
    *,
    seed: Union[int, tf.Tensor] = 0,
    epoch: Union[int, tf.Tensor] = 0,
    elements=None,
    dtype: str = "uint8",
    bias=None,
    norm=None,
    dct_scaling: bool = True,
    colorspace: str = "rgb",
    dct_method: str = "fast",
    names=None,
    color=None,
    name: Optional[str] = None,
) -> tf.Tensor:
    """Decodes JPEG (and PNG) strings fused with a warp: each JPEG is decoded only as far as its
    transform samples it (the iMCU columns around the crop, the rows down to its bottom, at the
    DCT scale 1/2, 1/4, 1/8 that keeps the output's resolution) and warped straight into the output.

    Every picture ``tf.io.decode_image(..., channels=3)`` reads (JPEG, PNG, BMP, GIF) decodes here
    to the same pixels (then warped): RGB, grayscale, CMYK and YCCK JPEGs (Adobe-inverted or not),
    baseline or progressive, any chroma subsampling, restart markers; PNG of every colour type and
    bit depth (alpha dropped, 16-bit to 8-bit, palette expanded). A PNG is decoded whole, then
    warped; so are a BMP (uncompressed, 8/24/32-bit; an 8-bit one through its palette, as PIL
    shows it, where ``tf.io.decode_bmp`` gives the indices) and a GIF (its first frame on its
    logical screen, as PIL sizes it; docs/images.md). TIFF and WebP are refused by name
    (``InvalidArgumentError``), other bytes as a damaged JPEG.

    What ``tf.io.decode_and_crop_jpeg`` + ``tf.image.resize`` + a flip + a normalization do, in one
    pass, with the transforms of :mod:`tf_gulp.transforms` drawn in C++ from
    ``(seed, epoch, element)``: the same element gets the same crop whatever the batching,
    parallelism or resumption.

    Example (FFRecord records holding JPEG bytes, read a batch per submission)::

        ds = tf_gulp.FFRecordDataset("train.ffr", batch_size=64, shuffle=True, seed=1)
        ds = ds.enumerate().map(lambda i, jpegs: decode_jpeg_warped(
            jpegs, (224, 224), RandomResizedCrop(), seed=1, elements=i * 64 + tf.range(
                tf.size(jpegs, out_type=tf.int64)), dtype="float32", bias=IMAGENET_MEAN,
            norm=IMAGENET_NORM))

    Args:
      contents: string ``[B]`` JPEGs (or one scalar string: one picture).
      shape: ``(height, width)`` of the output.
      warp: a :mod:`tf_gulp.transforms` transform, or None (the whole picture resized).
      seed, epoch: int64 scalars keying the random transforms.
      elements: int64 ``[B]``, each picture's element number (default ``0..B-1``): its transform
        is drawn from ``(seed, epoch, element)``.
      dtype: ``"uint8"`` or ``"float32"`` (``(v - bias) * norm``).
      bias, norm: for float32: a number, one per channel, or Constant{Bias,Norm}Transform.
      dct_scaling: allow decoding at 1/2, 1/4, 1/8 where the output keeps its resolution.
      colorspace: ``"rgb"`` or ``"gray"``.
      dct_method: ``"fast"`` or ``"accurate"`` IDCT.
      names: string ``[B]`` (or one string), what each picture is called in errors, e.g. the
        file name a ``tf.train.Example`` record carries; default: its place in the batch only.
      color: :class:`tf_gulp.transforms.ColorJitter` / ``RandomGrayscale`` (or a list of them),
        drawn per picture from ``(seed, epoch, element)`` and applied after the warp, before bias
        and norm (:func:`tf_gulp.transforms.color_draws` gives the draws).

    Returns:
      ``[B, height, width, C]`` (or ``[height, width, C]`` for one picture) of ``dtype``.

    Raises:
      tf.errors.DataLossError / InvalidArgumentError: a damaged or oversized picture, naming
      its index in the batch, its element and its ``names`` entry.
    """
    from tf_gulp.transforms import kernel_warp_attrs

    check_attr(OP_NAME, "colorspace", colorspace, what="decode_jpeg_warped: ")
    check_attr(OP_NAME, "dct_method", dct_method, what="decode_jpeg_warped: ")
    warp_attrs = kernel_warp_attrs(shape, warp, dtype, bias, norm, what="decode_jpeg_warped: ",
                                   color=color)
    with tf.name_scope(name or "decode_jpeg_warped"):
        contents = tf.convert_to_tensor(contents, tf.string)
        single = contents.shape.rank == 0
        if single:
            contents = contents[tf.newaxis]
        if names is None:
            names = tf.fill(tf.shape(contents), "")
        names = tf.reshape(tf.convert_to_tensor(names, tf.string), [-1])
        if elements is None:
            elements = tf.range(tf.size(contents, out_type=tf.int64), dtype=tf.int64)
        out = load_ops().tf_gulp_decode_jpeg_warped(
            contents=contents,
            what=names,
            seed=tf.cast(seed, tf.int64),
            epoch=tf.cast(epoch, tf.int64),
            elements=tf.reshape(tf.cast(elements, tf.int64), [-1]),
            dct_scaling=bool(dct_scaling),
            colorspace=colorspace,
            dct_method=dct_method,
            **warp_attrs,
        )
        return out[0] if single else out
