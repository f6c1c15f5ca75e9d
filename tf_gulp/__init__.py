"""tf_gulp: video and image training data for TensorFlow, read by C++ kernels.

>>> import tf_gulp
>>> ds = tf_gulp.GulpDataset("/data/my_gulp_dir", num_frames=8)   # doctest: +SKIP

Importing tf_gulp registers its ops with TensorFlow (now, or when TensorFlow is imported), so a
SavedModel, a tf.data service worker or any other saved graph that uses them loads after a plain
``import tf_gulp`` (tf_gulp/_op_registration.py); it does not import TensorFlow itself.
"""

from typing import Any

from tf_gulp import _op_registration

__version__ = "0.1.0"

__all__ = ["BenzinaDataset", "FFRecordDataset", "GulpDataset", "keep_epoch_counts", "__version__"]

_op_registration.install()


def __getattr__(name: str) -> Any:
    # Lazy, so `import tf_gulp.gulp` (writers, readers) works without TensorFlow.
    if name == "GulpDataset":
        from tf_gulp.gulp.dataset import GulpDataset

        globals()["GulpDataset"] = GulpDataset
        return GulpDataset
    if name == "FFRecordDataset":
        from tf_gulp.ffrecord.dataset import FFRecordDataset

        globals()["FFRecordDataset"] = FFRecordDataset
        return FFRecordDataset
    if name == "BenzinaDataset":
        from tf_gulp.bzna.dataset import BenzinaDataset

        globals()["BenzinaDataset"] = BenzinaDataset
        return BenzinaDataset
    if name == "transforms":
        import tf_gulp.transforms as transforms

        return transforms
    if name == "keep_epoch_counts":
        from tf_gulp.epochs import keep_epoch_counts

        globals()["keep_epoch_counts"] = keep_epoch_counts
        return keep_epoch_counts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
