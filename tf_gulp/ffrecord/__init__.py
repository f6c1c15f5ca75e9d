"""FFRecord files (HFAiLab's format): reading, writing, packed folders, and the tf.data dataset.

Compatible both ways with the reference implementation: files it wrote read here, files written here
read there. Everything except :class:`FFRecordDataset` works without TensorFlow (the readers and
writers call the C++ core through ``tf_gulp._core``); ``FFRecordDataset`` is imported on first use.

- :class:`FileReader`, :class:`FileWriter`, :func:`dump`: the reference's API;
- :func:`pack_folder`, :class:`PackedFolder`: a directory tree as one file;
- ``__version__`` (tf_gulp's), :mod:`tf_gulp.ffrecord.utils` (``dump``) and :func:`checkFsAlign`,
  the rest of the reference's public names (docs/compat.md);
- :class:`FFRecordDataset`: records as a ``tf.data.Dataset`` (also ``tf_gulp.FFRecordDataset``).

See docs/ffrecord.md.
"""

from tf_gulp import __version__
from tf_gulp._lazy import lazy_exports
# Imported for its name: the reference's users reach `ffrecord.utils.dump` as an attribute.
from tf_gulp.ffrecord import utils  # noqa: F401
from tf_gulp.ffrecord.fs_align import checkFsAlign
from tf_gulp.ffrecord.packed import PackedFolder, pack_folder
from tf_gulp.ffrecord.reader import DataLossError, FFRecordWarning, FileReader
from tf_gulp.ffrecord.writer import FileWriter, dump

__all__ = [
    "DataLossError",
    "FFRecordDataset",
    "FFRecordWarning",
    "FileReader",
    "FileWriter",
    "PackedFolder",
    "__version__",
    "checkFsAlign",
    "dump",
    "pack_folder",
]


# Lazy: importing tf_gulp.ffrecord must not import TensorFlow.
__getattr__, __dir__ = lazy_exports(__name__, {"FFRecordDataset": "tf_gulp.ffrecord.dataset"}, __all__)
