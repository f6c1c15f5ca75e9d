"""Python wrapper of the DecodeHevc op (registered in decode_hevc_op.cc).

`decode_hevc` is exported as `tf_gulp.ops.decode_hevc`.
"""

from __future__ import annotations

import tensorflow as tf

from tf_gulp import _args as A
from tf_gulp.ops.library import load_ops
from tf_gulp.ops.op_attrs import check_attr

tf.no_gradient("TfGulp>DecodeHevc")


def decode_hevc(contents, track: str = "bzna_input", crop: str = "clean",
                chroma_upsampling: str = "bilinear", threads: int = 1, what="",
                name: str = None) -> tf.Tensor:
    """Decodes the H.265 picture of a single-picture MP4 to uint8 RGB ``[H, W, 3]`` on the CPU.

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
            track=str(track), crop=str(crop), chroma_upsampling=str(chroma_upsampling),
            threads=int(threads))
