"""Python wrapper of the DecodeJpegWarped op (registered in decode_jpeg_warped_op.cc; its GPU kernel
in decode_jpeg_warped_gpu_op.cc) and of the NvjpegStatus op that says whether that kernel can use
nvJPEG here."""

from __future__ import annotations

from typing import Optional, Union

import tensorflow as tf

from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

OP_NAME = "TfGulp>DecodeJpegWarped"

tf.no_gradient(OP_NAME)


def decode_jpeg_warped(
    contents,
    augment,
    *,
    seed: Union[int, tf.Tensor] = 0,
    epoch: Union[int, tf.Tensor] = 0,
    elements=None,
    dct_scaling: bool = True,
    colorspace: str = "rgb",
    dct_method: str = "fast",
    names=None,
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

    What ``tf.io.decode_and_crop_jpeg`` + ``tf.image.resize`` + a flip + colour + a normalization
    do, in one pass, with the ``augment`` list's draws made in C++ from ``(seed, epoch, element)``:
    the same element gets the same crop whatever the batching, parallelism or resumption.

    Example (a TFRecord of ``tf.train.Example`` JPEGs; FFRecord has
    ``FFRecordDataset.decode_jpeg_warped``)::

        from tf_gulp.transforms import RandomResizedCrop, RandomHorizontalFlip, ToDtype
        augment = [RandomResizedCrop(224), RandomHorizontalFlip(), ToDtype(tf.float32, scale=True)]
        ds = tf.data.TFRecordDataset(files).enumerate().map(lambda i, r: decode_jpeg_warped(
            tf.io.parse_single_example(r, spec)["image/encoded"], augment, seed=1, elements=i))

    Args:
      contents: string ``[B]`` JPEGs (or one scalar string: one picture).
      augment: a :mod:`tf_gulp.transforms` list (torchvision's vocabulary), compiled into the
        kernel; it fixes the output size.
      seed, epoch: int64 scalars keying the random draws.
      elements: int64 ``[B]``, each picture's element number (default ``0..B-1``): its draws
        come from ``(seed, epoch, element)``.
      dct_scaling: allow decoding at 1/2, 1/4, 1/8 where the output keeps its resolution.
      colorspace: ``"rgb"`` or ``"gray"``.
      dct_method: ``"fast"`` or ``"accurate"`` IDCT.
      names: string ``[B]`` (or one string), what each picture is called in errors, e.g. the
        file name a ``tf.train.Example`` record carries; default: its place in the batch only.

    Returns:
      ``[B, height, width, C]`` (or ``[height, width, C]`` for one picture), uint8 or float32 as
      the list's ``ToDtype`` says.

    Raises:
      tf.errors.DataLossError / InvalidArgumentError: a damaged or oversized picture, naming
      its index in the batch, its element and its ``names`` entry.
    """
    from tf_gulp.transforms import compile_augment

    check_attr(OP_NAME, "colorspace", colorspace, what="decode_jpeg_warped: ")
    check_attr(OP_NAME, "dct_method", dct_method, what="decode_jpeg_warped: ")
    warp_attrs = compile_augment(augment, what="decode_jpeg_warped: ").attrs()
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


def nvjpeg_unavailable_reason() -> str:
    """Why :func:`decode_jpeg_warped` on a GPU device would not decode with nvJPEG in this process,
    or "" when it would: no ``libnvjpeg.so.12`` (``pip install nvidia-nvjpeg-cu12``, or the CUDA
    toolkit's lib64 on ``LD_LIBRARY_PATH``; ``TF_GULP_NVJPEG_DIR`` names another directory), no
    GPU kernels in this build (no nvcc), no NVIDIA driver or one older than R580. Every missing
    piece is named with its fix. Asked once; the answer is cached by the library.
    """
    with tf.device("/CPU:0"):
        return load_ops().tf_gulp_nvjpeg_status().numpy().decode("utf-8", "replace")
