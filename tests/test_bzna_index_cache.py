"""The per-process Benzina entry index cache (cc/mp4/entry_index_cache.h).

Every BenzinaDataset kernel that is made (the Python dataset, each graph rewrite of an iterator,
each re-creation by repeat() or interleave, each tf.data service worker's) reads the container's
entry index through this cache: a process reads a file's index once, not once per dataset, and
must never serve a rewritten file's old index. The cache's counters (``bzna_index_cache_stats``:
reads from files, hits) say what happened.
"""

from __future__ import annotations

import os
import struct
import uuid
from typing import List

import tensorflow as tf

from tf_gulp.bzna import container as C
from tf_gulp.bzna.dataset import BenzinaDataset
from tf_gulp.ops.bzna.bzna_ops import bzna_index_cache_stats


def write_container(path: str, labels: List[int]) -> None:
    """A container of len(labels) entries with stand-in samples (nothing here decodes)."""
    samples = [b"sample %04d" % i for i in range(len(labels))]
    head = C.ftyp()
    base = len(head) + 8
    offsets = [base + sum(len(s) for s in samples[:i]) for i in range(len(samples))]
    t_base = base + sum(len(s) for s in samples)
    payload = b"".join(samples) + b"".join(struct.pack("<q", t) for t in labels)
    data = head + C.box(b"mdat", payload) + C.moov(
        [C.TrackSpec("bzna_input", offsets, [len(s) for s in samples]),
         C.TrackSpec("bzna_target", [t_base + 8 * i for i in range(len(labels))],
                     [8] * len(labels))])
    if path.startswith("ram://") and tf.io.gfile.exists(path):
        tf.io.gfile.remove(path)  # ram:// "wb" appends to an existing file instead of replacing it
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


def entries(ds: tf.data.Dataset) -> List[tuple]:
    return sorted((int(x["index"]), int(x["label"])) for x in ds.as_numpy_iterator())


def test_service_workers_read_the_index_once_per_file(service, tmp_path):
    """Two in-process workers (one process, so one cache) share a pass image by image: the index
    is read from the file once (when the dataset is made), every later kernel's lookup (the
    iterators', the workers') is a hit, and the elements are the plain iteration's, each
    exactly once."""
    n = 24
    path = str(tmp_path / "data.bzna")
    write_container(path, [i % 5 for i in range(n)])
    expected = [(i, i % 5) for i in range(n)]
    reads, hits = bzna_index_cache_stats()
    ds = BenzinaDataset(path, decode=False, shuffle=True, seed=2)
    assert entries(ds) == expected
    assert entries(ds.repeat(2)) == sorted(expected * 2)
    assert bzna_index_cache_stats()[0] == reads + 1
    distributed = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target, job_name="bzna_index_cache"))
    assert entries(distributed) == expected
    after_reads, after_hits = bzna_index_cache_stats()
    assert after_reads == reads + 1, "the service pass read the index again"
    assert after_hits - hits >= 2, (after_hits - hits)  # both workers' kernels: hits


def test_a_rewritten_file_is_read_again(tmp_path):
    """A file rewritten with the same size (new labels) is read afresh: its modification time
    changed. Untouched, it is served from the cache."""
    path = str(tmp_path / "data.bzna")
    write_container(path, [1, 2, 3])
    reads, _ = bzna_index_cache_stats()
    first = entries(BenzinaDataset(path, decode=False))
    again = entries(BenzinaDataset(path, decode=False))
    assert first == again == [(0, 1), (1, 2), (2, 3)]
    assert bzna_index_cache_stats()[0] == reads + 1
    size = os.path.getsize(path)
    write_container(path, [7, 8, 9])  # same layout, other targets: the same size
    # File times can be coarser than two writes apart: move the time on explicitly.
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert os.path.getsize(path) == size
    assert entries(BenzinaDataset(path, decode=False)) == [(0, 7), (1, 8), (2, 9)]
    assert bzna_index_cache_stats()[0] == reads + 2
    # A file that grew (another entry) is read again too, whatever its time says.
    write_container(path, [7, 8, 9, 10])
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert int(BenzinaDataset(path, decode=False).cardinality()) == 4
    assert bzna_index_cache_stats()[0] == reads + 3


def test_files_without_modification_times_are_not_cached():
    """TensorFlow's ram:// reports no modification time, so a same-size rewrite could not be
    told apart: such files are read every time, and a rewrite is always seen."""
    path = f"ram://tf_gulp_index_cache_{uuid.uuid4().hex}/data.bzna"
    tf.io.gfile.makedirs(os.path.dirname(path))
    write_container(path, [1, 2])
    reads, _ = bzna_index_cache_stats()
    BenzinaDataset(path, decode=False)
    BenzinaDataset(path, decode=False)
    assert bzna_index_cache_stats()[0] == reads + 2
    write_container(path, [5, 6])
    assert entries(BenzinaDataset(path, decode=False)) == [(0, 5), (1, 6)]
