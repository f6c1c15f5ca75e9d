"""TensorFlow glue: op registrations (C++), kernels and their Python wrappers.

Image ops, loaded on first use: `similarity_warp`, `similarity_transform_matrices`
(tf_gulp/ops/image/warp_ops.py), `decode_hevc`, `decode_hevc_warped` (tf_gulp/ops/bzna/hevc_ops.py),
`decode_jpeg_warped` (tf_gulp/ops/image/jpeg_ops.py).
"""

import importlib
from typing import Any

# Public op wrapper -> the module that defines it.
_LAZY = {
    "similarity_warp": "tf_gulp.ops.image.warp_ops",
    "similarity_transform_matrices": "tf_gulp.ops.image.warp_ops",
    "decode_hevc": "tf_gulp.ops.bzna.hevc_ops",
    "decode_hevc_warped": "tf_gulp.ops.bzna.hevc_ops",
    "decode_jpeg_warped": "tf_gulp.ops.image.jpeg_ops",
}


def __getattr__(name: str) -> Any:
    # Lazy, so importing a submodule (library, the dataset wrappers) stays cheap.
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
