"""Python wrappers of the DecodeHevc op (registered in decode_hevc_op.cc; its GPU kernel in
decode_hevc_gpu_op.cc) and of the two helpers DataLoader(device=...) uses to decode on the device.

`decode_hevc` is exported as `tf_gulp.ops.decode_hevc`.
"""

from __future__ import annotations

import tensorflow as tf

from tf_gulp import _args as A
from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

tf.no_gradient("TfGulp>DecodeHevc")
tf.no_gradient("TfGulp>HevcSampleSize")


def decode_hevc(contents, track: str = "bzna_input", crop: str = "clean",
                chroma_upsampling: str = "bilinear", threads: int = 1, what="",
                max_size=None, name: str = None) -> tf.Tensor:
    """Decodes the H.265 picture of a single-picture MP4 to uint8 RGB ``[H, W, 3]``.

    On a CPU device libavcodec decodes it. On a GPU device (``tf.device("/GPU:0")``) the GPU kernel
    parses the MP4 on the host, decodes with NVDEC and converts to RGB on the GPU, into GPU memory;
    where NVDEC cannot be used (see :func:`nvdec_unavailable_reason`, or a picture outside the
    GPU's NVDEC limits) it decodes on the CPU and copies the picture over, logging why once
    (docs/gpu.md). Its NVDEC pool and kernel ran on an H100 without TensorFlow (the device
    check); the op under TensorFlow on a GPU has not yet run.

    ``contents`` is the bytes of one per-image MP4 as Benzina stores it (a ``bzna_input`` sample):
    an ``hvc1``/``hev1`` track with an ``hvcC`` box and one sample of length-prefixed NAL units. The
    track named ``track`` is decoded, or, when no track has that name (files from other muxers,
    e.g. FFmpeg's ``VideoHandler``), the first HEVC track. The container is validated before
    anything is decoded; a damaged container or bitstream raises ``tf.errors.DataLossError``
    naming ``what`` (default: the sample's size).

    Args:
      contents: scalar string tensor, one MP4.
      track: hdlr name of the track to decode.
      crop: "clean" (the clean aperture from ``clap``, else the ``tkhd`` size: the image without
        the padding Benzina adds to reach a multiple of 512) or "full" (the whole coded frame).
      chroma_upsampling: "bilinear" (chroma centred between luma samples, the sharper choice) or
        "nearest" (chroma repeated: what FFmpeg's swscale does for yuv420p -> rgb24).
      threads: libavcodec threads for one picture; 1 (default) suits ``Dataset.map`` with
        ``num_parallel_calls``, which decodes many pictures at once; 0 lets libavcodec choose.
      what: scalar string naming the sample in error messages.
      max_size: int32 ``[height, width]``, the largest coded size of the pictures decoded with
        this one (``hevc_sample_size(..., crop="coded")`` over a batch, reduced with
        ``tf.reduce_max``); on a GPU the NVDEC decoders are created that large before this
        picture, so a larger picture later needs no new decoder. None: this picture's own size.

    Colour: the frame's signalled range (full for Benzina's ``yuvj420p``) and matrix (BT.601
    unless BT.709 or BT.2020 is signalled).
    """
    prefix = "decode_hevc: "
    A.string(track, "track", what=prefix)
    for attr, value in (("crop", crop), ("chroma_upsampling", chroma_upsampling)):
        check_attr("TfGulp>DecodeHevc", attr, value, what=prefix)
    threads = A.integer(threads, "threads", minimum=0, what=prefix)
    with tf.name_scope(name or "decode_hevc"):
        return load_ops().tf_gulp_decode_hevc(
            contents=tf.convert_to_tensor(contents, tf.string),
            what=tf.convert_to_tensor(what, tf.string),
            max_size=tf.zeros([2], tf.int32) if max_size is None else tf.cast(max_size, tf.int32),
            track=str(track), crop=str(crop), chroma_upsampling=str(chroma_upsampling),
            threads=int(threads))


def hevc_sample_size(contents, track: str = "bzna_input", crop: str = "clean", what="",
                     name: str = None) -> tf.Tensor:
    """int32 ``[height, width]`` of what :func:`decode_hevc` outputs for `contents`, read from
    the MP4 (its sample entry's picture size and the crop) without decoding; same arguments.

    Lets a pipeline make size-dependent parameters (a warp matrix) on the CPU while the picture
    itself is decoded elsewhere (``DataLoader(..., device=...)`` decoding on the GPU, which checks
    the decoded size against this one).
    """
    prefix = "hevc_sample_size: "
    A.string(track, "track", what=prefix)
    check_attr("TfGulp>HevcSampleSize", "crop", crop, what=prefix)
    with tf.name_scope(name or "hevc_sample_size"):
        return load_ops().tf_gulp_hevc_sample_size(
            contents=tf.convert_to_tensor(contents, tf.string),
            what=tf.convert_to_tensor(what, tf.string), track=str(track), crop=str(crop))


def nvdec_unavailable_reason() -> str:
    """Why :func:`decode_hevc` on a GPU device would not decode with NVDEC in this process, or
    "" when it would: no GPU kernels in this build (no nvcc), no NVIDIA driver or one older than
    R580, or no ``libnvcuvid.so.1`` (a container started without the ``video`` driver capability).
    The message says how to get what is missing. Asked once; the answer is cached by the library.
    """
    with tf.device("/CPU:0"):
        return load_ops().tf_gulp_nvdec_status().numpy().decode("utf-8", "replace")


tf.no_gradient("TfGulp>DecodeHevcWarped")


def decode_hevc_warped(contents, shape, warp=None, *, seed=0, epoch=0, elements=None,
                       dtype: str = "uint8", bias=None, norm=None, what=None,
                       track: str = "bzna_input", crop: str = "clean",
                       chroma_upsampling: str = "bilinear", threads: int = 1,
                       color=None, name: str = None) -> tf.Tensor:
    """Decodes single-picture HEVC MP4s fused with a warp: what ``decode_hevc`` followed by
    ``similarity_warp`` gives (within one level), without an RGB picture in memory: only the
    rectangle of the decoder's Y'CbCr picture that the warp samples is converted to RGB, and it is
    warped straight into the output with the fused decoders' fixed-point warp.

    The transform is drawn in C++ from ``(seed, epoch, element)``, as in
    :func:`tf_gulp.ops.decode_jpeg_warped`, with the picture's size (the clean aperture, or the
    full frame with ``crop="full"``) as the input size. Its random stream is the C++ one
    (cc/warp/similarity_transform.h), not the Philox stream of calling a transform in Python: the
    same distributions, other draws.

    Example::

        images = decode_hevc_warped(samples, (224, 224), RandomResizedCrop(), seed=1,
                                    elements=indices, dtype="float32")

    Args:
      contents: string ``[B]`` MP4s (or one scalar string: one picture).
      shape: ``(height, width)`` of the output.
      warp: a :mod:`tf_gulp.transforms` transform (``SimilarityTransform``,
        ``RandomResizedCrop``, ``CenterResizedCrop``, ``ConstantWarpTransform``) or None (the whole
        picture resized).
      seed, epoch: int64 scalars keying the random transforms.
      elements: int64 ``[B]``, each picture's element number (default ``0..B-1``).
      dtype: ``"uint8"`` or ``"float32"`` (``(v - bias) * norm``).
      bias, norm: for float32: a number, one per channel, or Constant{Bias,Norm}Transform.
      what: string ``[B]`` (or scalar) naming each sample in error messages (default: its size).
      track, crop, chroma_upsampling, threads: as for :func:`decode_hevc`.
      color: :class:`tf_gulp.transforms.ColorJitter` / ``RandomGrayscale`` (or a list of them),
        drawn from ``(seed, epoch, element)`` and applied after the warp, before bias and norm.
        Both kernels apply it; the GPU kernel colours each warped picture with a colour kernel
        after the fused warp.

    Returns:
      ``[B, height, width, 3]`` (or ``[height, width, 3]`` for one picture) of ``dtype``.

    Raises:
      tf.errors.DataLossError: a damaged container or bitstream, naming the picture's index in
      the batch, its element and its ``what``.
    """
    from tf_gulp.transforms import kernel_warp_attrs  # pylint: disable=import-outside-toplevel

    prefix = "decode_hevc_warped: "
    op = "TfGulp>DecodeHevcWarped"
    A.string(track, "track", what=prefix)
    for attr, value in (("crop", crop), ("chroma_upsampling", chroma_upsampling)):
        check_attr(op, attr, value, what=prefix)
    threads = A.integer(threads, "threads", minimum=0, what=prefix)
    warp_attrs = kernel_warp_attrs(shape, warp, dtype, bias, norm, what=prefix, color=color)
    with tf.name_scope(name or "decode_hevc_warped"):
        contents = tf.convert_to_tensor(contents, tf.string)
        single = contents.shape.rank == 0
        contents = tf.reshape(contents, [-1])
        count = tf.size(contents, out_type=tf.int64)
        if elements is None:
            elements = tf.range(count, dtype=tf.int64)
        whats = tf.broadcast_to(tf.convert_to_tensor("" if what is None else what, tf.string),
                                [count])
        out = load_ops().tf_gulp_decode_hevc_warped(
            contents=contents, what=whats,
            seed=tf.cast(seed, tf.int64), epoch=tf.cast(epoch, tf.int64),
            elements=tf.reshape(tf.cast(elements, tf.int64), [-1]),
            **warp_attrs,
            track=str(track), crop=str(crop), chroma_upsampling=str(chroma_upsampling),
            threads=int(threads))
        return out[0] if single else out
