"""tf_gulp.FFRecordDataset: contents, batching, shuffling, composition, checkpoints, serialization,
skip, and bad files."""

from __future__ import annotations

import struct
import time
import zlib

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp

from epoch_testing import resumed
from ffrecord_testing import (EXPECTED, FIXTURES, ffrecord_bytes, offset_field, patch,
                              sample_records, sha256)
from tf_gulp import _core

N = 103


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """103 records of varied sizes in three files (40 + 40 + 23)."""
    root = tmp_path_factory.mktemp("ffr")
    records = sample_records(N)
    for k, (a, b) in enumerate([(0, 40), (40, 80), (80, N)]):
        (root / f"part{k}.ffr").write_bytes(ffrecord_bytes(records[a:b]))
    return {"dir": str(root), "records": records,
            "files": [str(root / f"part{k}.ffr") for k in range(3)]}


def values(ds):
    out = []
    for x in ds:
        x = x.numpy()
        out.extend(x.tolist() if isinstance(x, np.ndarray) else [x])
    return out


def first_numbers(ds):
    return [int(r.split(b":")[0]) for r in values(ds)]


# --- contents -------------------------------------------------------------------------------------

def test_reference_fixtures():
    got = values(tf_gulp.FFRecordDataset(FIXTURES / "multi"))
    digests = EXPECTED["multi/PART_00000.ffr"]["sha256"] + EXPECTED["multi/PART_00001.ffr"]["sha256"]
    assert [sha256(r) for r in got] == digests
    assert values(tf_gulp.FFRecordDataset(str(FIXTURES / "three.ffr"), batch_size=2)) == [
        b"A", b"BBB", b"\x00\x01\x02\x03\xff"]


def test_single_records_in_storage_order(data):
    ds = tf_gulp.FFRecordDataset(data["dir"])
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert ds.cardinality().numpy() == N
    assert values(ds) == data["records"]
    assert values(tf_gulp.FFRecordDataset(data["files"][1:])) == data["records"][40:]


@pytest.mark.parametrize("drop", [False, True])
def test_batches(data, drop):
    ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=10, drop_remainder=drop)
    assert ds.element_spec == tf.TensorSpec([10 if drop else None], tf.string)
    shapes = [b.shape[0] for b in ds]
    assert shapes == [10] * 10 + ([] if drop else [3])
    assert ds.cardinality().numpy() == len(shapes)
    assert values(ds) == data["records"][:100 if drop else N]


def test_records_outlive_their_batch(data):
    # A small batch's strings share one block (counted views): a record taken out of its batch,
    # here and by a graph op, keeps its bytes after the batch and many later ones are freed.
    kept = []
    for b in tf_gulp.FFRecordDataset(data["dir"], batch_size=10, drop_remainder=True):
        kept.append(b[3])
        kept.append(tf.strings.substr(b, 0, 1_000_000)[7])
        del b
    for _ in range(3):  # reuse the freed memory
        for b in tf_gulp.FFRecordDataset(data["dir"], batch_size=10, shuffle=True, seed=1):
            b.numpy()
    expected = [data["records"][i] for a in range(0, 100, 10) for i in (a + 3, a + 7)]
    assert [t.numpy() for t in kept] == expected


@pytest.mark.parametrize("batch_size", [None, 16])
def test_shuffle_is_a_seeded_permutation_with_a_new_order_each_epoch(data, batch_size):
    ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True, seed=7)
    epoch0, epoch1 = first_numbers(ds), first_numbers(ds)
    assert sorted(epoch0) == list(range(N)) and sorted(epoch1) == list(range(N))
    assert epoch0 != list(range(N)) and epoch0 != epoch1
    again = tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True, seed=7)
    assert first_numbers(again) == epoch0 and first_numbers(again) == epoch1
    repeated = tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True, seed=7)
    assert first_numbers(repeated.repeat(2)) == epoch0 + epoch1
    other = tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True, seed=8)
    assert first_numbers(other) != epoch0


@pytest.mark.parametrize("engine", ["io_uring", "pread"])
def test_engines_queue_depths_and_direct_io(data, engine):
    if engine == "io_uring" and not _core.io_uring_available():
        pytest.skip("io_uring is not available here")
    for kwargs in (dict(queue_depth=1), dict(queue_depth=3, direct_io=True), dict()):
        ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=25, io_engine=engine, **kwargs)
        assert values(ds) == data["records"], kwargs


# --- composition ----------------------------------------------------------------------------------

def test_inside_tf_function_and_with_map_prefetch(data):
    @tf.function
    def total_bytes():
        ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=8)
        return ds.reduce(tf.constant(0, tf.int64),
                         lambda acc, b: acc + tf.cast(tf.reduce_sum(tf.strings.length(b)), tf.int64))

    assert total_bytes().numpy() == sum(len(r) for r in data["records"])
    ds = (tf_gulp.FFRecordDataset(data["dir"], batch_size=10)
          .map(lambda b: tf.strings.length(b), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE))
    assert np.concatenate([x.numpy() for x in ds]).tolist() == [len(r) for r in data["records"]]


def test_interleave_over_files_and_shard(data):
    files = tf.data.Dataset.from_tensor_slices(data["files"])
    ds = files.interleave(lambda f: tf_gulp.FFRecordDataset(f, batch_size=7), cycle_length=3,
                          num_parallel_calls=3)
    assert sorted(first_numbers(ds)) == list(range(N))
    shards = [first_numbers(tf_gulp.FFRecordDataset(data["dir"]).shard(3, i)) for i in range(3)]
    assert sorted(sum(shards, [])) == list(range(N))


def test_skip_reads_nothing_and_gives_the_same_elements(data, tmp_path):
    ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=10, shuffle=True, seed=3)
    full = first_numbers(ds)  # epoch 0 of this dataset object; a new object for the skip
    skipped = tf_gulp.FFRecordDataset(data["dir"], batch_size=10, shuffle=True, seed=3).skip(4)
    assert first_numbers(skipped) == full[40:]
    # O(1): skipping almost all of a 2M-record file is instant (nothing is read, no order table).
    n = 2_000_000
    table = (struct.pack("<q", n) + struct.pack("<I", 0) * (n - 1) +
             struct.pack("<I", zlib.crc32(b"last")) + struct.pack("<q", 12 + 12 * n) * n)
    big = tmp_path / "big.ffr"
    big.write_bytes(struct.pack("<I", zlib.crc32(table)) + table + b"last")
    start = time.perf_counter()
    tail = values(tf_gulp.FFRecordDataset(big, shuffle=True, seed=1).skip(n - 2))
    assert time.perf_counter() - start < 5.0
    assert len(tail) == 2 and set(tail) <= {b"", b"last"}


@pytest.mark.parametrize("batch_size", [None, 4])
def test_shard_skips_inside_read_ahead_chunks_exactly(data, batch_size):
    # shard() skips between elements; reads run ahead of the caller in chunks (32 records, or
    # batches), so skips land inside chunks that are already being read.
    def make():
        return tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True, seed=9)

    full = [x.numpy().tolist() if batch_size else x.numpy() for x in make()]
    for n, i in ((3, 0), (5, 2), (40, 39)):
        got = [x.numpy().tolist() if batch_size else x.numpy() for x in make().shard(n, i)]
        assert got == full[i::n], (n, i)


def test_a_one_thread_pool_does_not_stall_read_ahead(data):
    # Reads ahead are scheduled on tf.data's threads; with one thread busy elsewhere the iterator
    # reads what it needs itself.
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=5).with_options(options)
    assert values(ds) == data["records"]
    ds = (tf.data.Dataset.from_tensor_slices([data["dir"]] * 3).with_options(options)
          .interleave(lambda d: tf_gulp.FFRecordDataset(d, batch_size=7), cycle_length=3,
                      num_parallel_calls=3))
    assert sorted(first_numbers(ds)) == sorted(list(range(N)) * 3)


# --- checkpoints and serialization ----------------------------------------------------------------

@pytest.mark.parametrize("batch_size,repeat,stop", [(None, 1, 37), (None, 2, 150), (8, 1, 5),
                                                    (8, 3, 30)])
def test_checkpoint_restore_resumes_at_the_exact_next_element(data, tmp_path, batch_size, repeat,
                                                              stop):
    def make():
        return tf_gulp.FFRecordDataset(data["dir"], batch_size=batch_size, shuffle=True,
                                       seed=11).repeat(repeat)

    reference = [x.numpy() for x in make()]
    rest = [x.numpy() for x in resumed(make, stop, tmp_path)]
    assert len(rest) == len(reference) - stop
    for a, b in zip(rest, reference[stop:]):
        np.testing.assert_array_equal(a, b)


def test_save_and_load(data, tmp_path):
    ds = tf_gulp.FFRecordDataset(data["dir"], batch_size=10)
    ds.save(str(tmp_path / "saved"))
    assert values(tf.data.Dataset.load(str(tmp_path / "saved"))) == data["records"]


def test_serialized_graph_is_small_and_holds_no_index(data):
    graph = tf_gulp.FFRecordDataset(data["dir"], batch_size=4, shuffle=True,
                                    seed=1)._as_serialized_graph().numpy()
    assert len(graph) < 2048
    assert data["dir"].encode() in graph
    assert data["records"][5][:20] not in graph


# --- bad input ------------------------------------------------------------------------------------

GOOD_RECORDS = [b"first", b"second!", b"", b"fourth record"]
GOOD = ffrecord_bytes(GOOD_RECORDS)


@pytest.mark.parametrize("name,data_bytes,message", [
    ("truncated", GOOD[:30], "record count at offset 4 is 4, which needs 60 bytes"),
    ("count_too_large", patch(GOOD, 4, "<q", 10**15, reseal=False), "record count at offset 4"),
    ("decreasing", patch(GOOD, offset_field(4, 2), "<q", 61),
     "record 2: offset 61 (stored at byte 44) is before record 1"),
    ("past_end", patch(GOOD, offset_field(4, 3), "<q", 10**9),
     "record 3: offset 1000000000 (stored at byte 52) is past the end"),
    ("not_ffrecord", b"GIF89a" + bytes(300), "not an FFRecord file"),
])
def test_bad_headers_are_data_loss_naming_file_record_and_offset(tmp_path, name, data_bytes,
                                                                 message):
    path = tmp_path / f"{name}.ffr"
    path.write_bytes(data_bytes)
    with pytest.raises(tf.errors.DataLossError) as e:
        tf_gulp.FFRecordDataset(path)
    assert str(path) in e.value.message and message in e.value.message


def test_metadata_checksum_mismatch_fixture():
    with pytest.raises(tf.errors.DataLossError, match="metadata checksum mismatch"):
        tf_gulp.FFRecordDataset(FIXTURES / "corrupt_meta.ffr")
    # Without checks the header is taken as it is (the flipped byte is in the checksum table).
    assert len(values(tf_gulp.FFRecordDataset(FIXTURES / "corrupt_meta.ffr", check_data=False))) == 3


def test_sample_checksum_mismatch_fixture_fails_only_its_element():
    path = str(FIXTURES / "corrupt_sample.ffr")
    it = iter(tf_gulp.FFRecordDataset(path))
    assert next(it).numpy() == b"A"
    with pytest.raises(tf.errors.DataLossError) as e:
        next(it)
    assert f"{path}: record 1 at offset 49" in e.value.message
    assert "checksum mismatch" in e.value.message
    assert next(it).numpy() == b"\x00\x01\x02\x03\xff"
    ignored = tf_gulp.FFRecordDataset(path).ignore_errors()
    assert values(ignored) == [b"A", b"\x00\x01\x02\x03\xff"]
    batches = tf_gulp.FFRecordDataset(path, batch_size=2).ignore_errors()
    assert values(batches) == [b"\x00\x01\x02\x03\xff"]  # the batch holding record 1 is dropped


def test_old_header_without_meta_crc_reads():
    assert values(tf_gulp.FFRecordDataset(FIXTURES / "old_no_meta_crc.ffr")) == [
        b"A", b"BBB", b"\x00\x01\x02\x03\xff"]


def test_missing_paths_and_bad_options(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf_gulp.FFRecordDataset(tmp_path / "missing.ffr")
    with pytest.raises(tf.errors.NotFoundError, match="no .ffr files"):
        tf_gulp.FFRecordDataset(tmp_path)
    for kwargs in (dict(batch_size=0), dict(batch_size=2.5), dict(drop_remainder=True),
                   dict(queue_depth=0), dict(io_engine="aio")):
        with pytest.raises(ValueError):
            tf_gulp.FFRecordDataset(FIXTURES / "three.ffr", **kwargs)
