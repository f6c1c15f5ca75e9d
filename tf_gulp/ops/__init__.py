"""TensorFlow glue: op registrations (C++), kernels and their Python wrappers.

Image ops, loaded on first use: `similarity_warp`, `similarity_transform_matrices`
(tf_gulp/ops/image/warp_ops.py), `decode_hevc`, `decode_hevc_warped` (tf_gulp/ops/bzna/hevc_ops.py),
`decode_jpeg_warped` (tf_gulp/ops/image/jpeg_ops.py).
"""

from tf_gulp._lazy import lazy_exports

# Public op wrapper -> the module that defines it.
_LAZY = {
    "similarity_warp": "tf_gulp.ops.image.warp_ops",
    "similarity_transform_matrices": "tf_gulp.ops.image.warp_ops",
    "decode_hevc": "tf_gulp.ops.bzna.hevc_ops",
    "decode_hevc_warped": "tf_gulp.ops.bzna.hevc_ops",
    "decode_jpeg_warped": "tf_gulp.ops.image.jpeg_ops",
}


# Lazy, so importing a submodule (library, the dataset wrappers) stays cheap.
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
