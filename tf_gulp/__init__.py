"""tf_gulp: video and image training data for TensorFlow, read by C++ kernels.

>>> import tf_gulp
>>> ds = tf_gulp.GulpDataset("/data/my_gulp_dir", num_frames=8)   # doctest: +SKIP

Importing tf_gulp registers its ops with TensorFlow (now, or when TensorFlow is imported), so a
SavedModel, a tf.data service worker or any other saved graph that uses them loads after a plain
``import tf_gulp`` (tf_gulp/ops/library.py); it does not import TensorFlow itself.
"""

from tf_gulp._lazy import lazy_exports
from tf_gulp.ops import library as _library

__version__ = "0.1.0"

__all__ = ["BenzinaDataset", "FFRecordDataset", "GulpDataset", "JpegOnDevice", "keep_epoch_counts",
           "transforms", "__version__"]

_library.install()


# Lazy, so `import tf_gulp.gulp` (writers, readers) works without TensorFlow.
__getattr__, __dir__ = lazy_exports(__name__, {
    "GulpDataset": "tf_gulp.gulp.dataset",
    "FFRecordDataset": "tf_gulp.ffrecord.dataset",
    "BenzinaDataset": "tf_gulp.bzna.dataset",
    "JpegOnDevice": "tf_gulp.jpeg_on_device",
    "keep_epoch_counts": "tf_gulp.epochs",
    "transforms": "tf_gulp.transforms:",
}, __all__)
