"""Benzina-style datasets: images as single-frame H.265 in MP4, decoded and warped by C++ kernels.

- :mod:`tf_gulp.bzna.transforms`: warp / bias / norm transforms for
  :func:`tf_gulp.ops.similarity_warp`.
"""
