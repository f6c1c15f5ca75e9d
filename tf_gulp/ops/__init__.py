"""TensorFlow glue: op registrations (C++), kernels and their Python wrappers.

Image ops, loaded on first use: `similarity_warp` (tf_gulp/ops/warp_ops.py), `decode_hevc`,
`decode_hevc_warped` (tf_gulp/ops/hevc_ops.py), `decode_jpeg_warped` (tf_gulp/ops/jpeg_ops.py).
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # Lazy, so importing a submodule (library, the dataset wrappers) stays cheap.
    if name == "similarity_warp":
        from tf_gulp.ops.warp_ops import similarity_warp

        globals()[name] = similarity_warp
        return similarity_warp
    if name == "decode_hevc":
        from tf_gulp.ops.hevc_ops import decode_hevc

        globals()[name] = decode_hevc
        return decode_hevc
    if name == "decode_hevc_warped":
        from tf_gulp.ops.hevc_ops import decode_hevc_warped

        globals()[name] = decode_hevc_warped
        return decode_hevc_warped
    if name == "decode_jpeg_warped":
        from tf_gulp.ops.jpeg_ops import decode_jpeg_warped

        globals()[name] = decode_jpeg_warped
        return decode_jpeg_warped
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
