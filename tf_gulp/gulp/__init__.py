"""Gulp (GulpIO / GulpIO2) video datasets: reading, writing, ingestion, and the tf.data dataset.

Everything here except :class:`GulpDataset` is plain Python + numpy + simplejpeg and imports without
TensorFlow; ``GulpDataset`` (which needs TensorFlow and the op library) is imported on first use.
gulpio2's module names are here too (``fileio``, ``utils``, ``sanity_utils``, ``adapters``):
replacing ``gulpio2`` by ``tf_gulp.gulp`` in imports is the migration (docs/compat.md).
"""

from tf_gulp import __version__
from tf_gulp._lazy import lazy_exports
from tf_gulp.gulp.adapters import (AbstractDatasetAdapter, FrameOptions, ImageFolderAdapter,
                                   ImageListAdapter, InputError, KineticsAdapter,
                                   TwentyBNAdapter, VideoFolderAdapter)
from tf_gulp.gulp.chunk import GulpChunk, GulpDataError
from tf_gulp.gulp.directory import GulpDirectory
from tf_gulp.gulp.ingest import ChunkWriter, GulpIngestor, IngestError
from tf_gulp.gulp.label_maps import LabelMapWarning, read_class_list, read_label2idx

__all__ = [
    "AbstractDatasetAdapter",
    "ChunkWriter",
    "FrameOptions",
    "GulpChunk",
    "GulpDataError",
    "GulpDataset",
    "GulpDirectory",
    "GulpIngestor",
    "ImageFolderAdapter",
    "ImageListAdapter",
    "IngestError",
    "InputError",
    "KineticsAdapter",
    "LabelMapWarning",
    "TwentyBNAdapter",
    "VideoFolderAdapter",
    "__version__",
    "read_class_list",
    "read_label2idx",
]


# Lazy: importing tf_gulp.gulp must not import TensorFlow.
__getattr__, __dir__ = lazy_exports(__name__, {"GulpDataset": "tf_gulp.gulp.dataset"}, __all__)
