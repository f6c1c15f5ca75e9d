"""Benzina-style datasets: images as single-frame H.265 in MP4, decoded and warped by C++ kernels.

- :func:`create_dataset` (also ``tf-gulp bzna create``): write a .bzna file from an image folder or
  list (needs PyAV; no TensorFlow);
- :func:`describe`: tracks, counts, sizes and split table of any MP4; :func:`read_container`
  (``tf-gulp bzna info``): a container judged as the datasets judge it (entries, targets,
  splits); both parse with the C++ reader (``tf_gulp._core``);
- :class:`BenzinaDataset`, :func:`ClassificationDataset`, :func:`ImageNet`, :func:`DataLoader`:
  reading with tf.data (imported on first use);
- :class:`WarpOnDevice`, :func:`warp_on_device`: the warp in the training step, on a GPU, for
  ``DataLoader(..., device="/GPU:0")`` (docs/gpu.md);
- the warp / bias / norm transforms are :mod:`tf_gulp.transforms` (one module for every format).

See docs/benzina.md.
"""

from tf_gulp._lazy import lazy_exports

__all__ = ["BenzinaDataset", "ClassificationDataset", "DataLoader", "ImageNet", "WarpOnDevice",
           "create_dataset", "describe", "read_container", "warp_on_device"]

# Lazy: the datasets import TensorFlow, the reader and writer the C++ core; `tf-gulp bzna`'s
# options (tf_gulp.bzna._x265) need neither.
__getattr__, __dir__ = lazy_exports(__name__, {
    "describe": "tf_gulp.bzna.container",
    "read_container": "tf_gulp.bzna.container",
    "create_dataset": "tf_gulp.bzna.create",
    **{name: "tf_gulp.bzna.dataset"
       for name in ("BenzinaDataset", "ClassificationDataset", "DataLoader", "ImageNet")},
    **{name: "tf_gulp.bzna.on_device" for name in ("WarpOnDevice", "warp_on_device")},
}, __all__)
