"""Python wrappers of BznaTrackIndex and ReadFileRange (registered in bzna_index_op.cc).

Used by tf_gulp.bzna.dataset; the index op runs inside the dataset graph.
"""

from __future__ import annotations

import tensorflow as tf

from tf_gulp.ops.library import load_ops

tf.no_gradient("BznaTrackIndex")
tf.no_gradient("ReadFileRange")


def bzna_track_index(path, track: str):
    """(offsets, sizes): int64 byte ranges of every sample of the MP4 track named `track`."""
    return load_ops().bzna_track_index(path=tf.convert_to_tensor(path, tf.string), track=str(track))


def read_file_range(path, offset, size) -> tf.Tensor:
    """Exactly `size` bytes at `offset` of the file `path` (DataLossError past its end)."""
    return load_ops().read_file_range(path=tf.convert_to_tensor(path, tf.string),
                                      offset=tf.cast(offset, tf.int64),
                                      size=tf.cast(size, tf.int64))
