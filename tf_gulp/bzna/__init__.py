"""Benzina-style datasets: images as single-frame H.265 in MP4, decoded and warped by C++ kernels.

- :func:`create_dataset` (also ``tf-gulp bzna create``): write a .bzna file from an image folder or
  list (needs PyAV; no TensorFlow);
- :func:`describe`: tracks, counts, sizes and split table of any MP4; :func:`read_container`
  (``tf-gulp bzna info``): a container judged as the datasets judge it (entries, targets,
  splits); both parse with the C++ reader (``tf_gulp._core``);
- :func:`BenzinaDataset`, :func:`ClassificationDataset`, :func:`ImageNet`, :func:`DataLoader`:
  reading with tf.data (imported on first use);
- :class:`WarpOnDevice`, :func:`warp_on_device`: the warp in the training step, on a GPU, for
  ``DataLoader(..., device="/GPU:0")`` (docs/gpu.md);
- :mod:`tf_gulp.bzna.transforms`: warp / bias / norm transforms for
  :func:`tf_gulp.ops.similarity_warp`.

See docs/benzina.md.
"""

from typing import Any

from tf_gulp.bzna.container import describe, read_container
from tf_gulp.bzna.create import create_dataset

__all__ = ["BenzinaDataset", "ClassificationDataset", "DataLoader", "ImageNet", "WarpOnDevice",
           "create_dataset", "describe", "read_container", "warp_on_device"]

_DATASET_NAMES = ("BenzinaDataset", "ClassificationDataset", "DataLoader", "ImageNet")
_ON_DEVICE_NAMES = ("WarpOnDevice", "warp_on_device")


def __getattr__(name: str) -> Any:
    if name in _ON_DEVICE_NAMES:
        import importlib

        value = getattr(importlib.import_module("tf_gulp.bzna.on_device"), name)
        globals()[name] = value
        return value
    if name in _DATASET_NAMES or name == "transforms":
        import importlib

        module = importlib.import_module(
            "tf_gulp.bzna.transforms" if name == "transforms" else "tf_gulp.bzna.dataset")
        value = module if name == "transforms" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
