"""``ds.shard(num_shards, index)`` on GulpDataset / FFRecordDataset: the same elements as tf.data's
shard, the shards of each epoch disjoint and covering it, and only the share read (a damaged
element outside the share is never touched); tf.distribute's auto-sharding of a tf_gulp pipeline
warns once."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp
import tf_gulp.ops
from ffrecord_testing import ffrecord_bytes, sample_records
from gulp_testing import make_gulp_dir
from tf_gulp import _source_dataset


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("gulp")
    return make_gulp_dir(path, num_videos=23, frames_per_video=[2 + i % 3 for i in range(23)],
                         height=16, width=16, videos_per_chunk=5)


def ids_of(ds):
    return [e["id"].numpy().decode() for e in ds]


def epochs_of(ds, n):
    """n passes over one dataset object: n epochs (each iterator is the next epoch)."""
    return [ids_of(ds) for _ in range(n)]


@pytest.mark.parametrize("num_shards", [2, 3, 5])
def test_gulp_shards_are_tf_data_shards(gulp_dir, num_shards):
    make = lambda: tf_gulp.GulpDataset(gulp_dir["path"], decode=False, shuffle=True, seed=11)
    whole = epochs_of(make(), 2)
    assert whole[0] != whole[1]  # a new order each epoch
    shards = [epochs_of(make().shard(num_shards, i), 2) for i in range(num_shards)]
    for epoch in range(2):
        for i in range(num_shards):
            assert shards[i][epoch] == whole[epoch][i::num_shards]
        union = [x for i in range(num_shards) for x in shards[i][epoch]]
        assert sorted(union) == sorted(gulp_dir["ids"])  # disjoint, and all of the epoch
    for i in range(num_shards):
        ds = make().shard(num_shards, i)
        assert isinstance(ds, tf_gulp.GulpDataset)
        assert int(ds.cardinality()) == len(range(i, 23, num_shards))


def test_gulp_shard_frames_match_unsharded(gulp_dir):
    """Frame sampling keys on the element, not its position: a shard decodes the same frames."""
    kwargs = dict(num_frames=2, training=True, shuffle=True, seed=5)
    whole = list(tf_gulp.GulpDataset(gulp_dir["path"], **kwargs))
    part = list(tf_gulp.GulpDataset(gulp_dir["path"], **kwargs).shard(3, 1))
    assert len(part) == len(whole[1::3])
    for a, b in zip(part, whole[1::3]):
        assert a["id"].numpy() == b["id"].numpy()
        np.testing.assert_array_equal(a["frames"].numpy(), b["frames"].numpy())


def test_gulp_shard_of_shard_and_errors(gulp_dir):
    ds = tf_gulp.GulpDataset(gulp_dir["path"], decode=False)
    whole = ids_of(ds)
    assert ids_of(ds.shard(2, 1).shard(3, 2)) == whole[1::2][2::3]
    assert ids_of(ds.shard(tf.constant(4, tf.int64), np.int64(3))) == whole[3::4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_shards"):
        ds.shard(2, 2)
    with pytest.raises(ValueError, match="explicit seed="):
        tf_gulp.GulpDataset(gulp_dir["path"], shuffle=True).shard(2, 0)


def test_gulp_shard_never_decodes_other_shares(gulp_dir, tmp_path):
    """A clip whose JPEG bytes are damaged fails the shard that holds it, and no other."""
    info = make_gulp_dir(tmp_path / "g", num_videos=6, frames_per_video=2, height=16, width=16,
                         videos_per_chunk=6)
    whole = ids_of(tf_gulp.GulpDataset(info["path"], decode=False))
    victim = whole[4]  # position 4: shard 0 of 2
    meta = json.loads((tmp_path / "g" / "meta_0.gmeta").read_text())
    offset, _, length = meta[victim]["frame_info"][0]
    with open(tmp_path / "g" / "data_0.gulp", "r+b") as f:
        f.seek(offset + 2)
        f.write(b"\x00" * (length - 2))
    assert len(list(tf_gulp.GulpDataset(info["path"]).shard(2, 1))) == 3
    with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.DataLossError), match=victim):
        list(tf_gulp.GulpDataset(info["path"]).shard(2, 0))


@pytest.fixture(scope="module")
def ffr_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ffr")
    (path / "a.ffr").write_bytes(ffrecord_bytes(sample_records(17, seed=1)))
    (path / "b.ffr").write_bytes(ffrecord_bytes(sample_records(9, seed=2)))
    return str(path)


@pytest.mark.parametrize("batch_size", [None, 4])
@pytest.mark.parametrize("num_shards", [2, 3])
def test_ffrecord_shards_are_tf_data_shards(ffr_path, batch_size, num_shards):
    make = lambda: tf_gulp.FFRecordDataset(ffr_path, batch_size=batch_size, shuffle=True, seed=3)
    as_list = lambda ds: [x.numpy().tolist() if batch_size else x.numpy() for x in ds]
    whole_ds = make()
    whole = [as_list(whole_ds) for _ in range(2)]
    assert whole[0] != whole[1]
    for i in range(num_shards):
        part_ds = make().shard(num_shards, i)
        assert isinstance(part_ds, tf_gulp.FFRecordDataset)
        assert int(part_ds.cardinality()) == len(whole[0][i::num_shards])
        for epoch in range(2):
            assert as_list(part_ds) == whole[epoch][i::num_shards]


def test_ffrecord_shard_never_reads_other_shares(tmp_path):
    records = sample_records(8)
    data = bytearray(ffrecord_bytes(records))
    # Damage record 7's last byte: its checksum fails when (and only when) it is read.
    data[-1] ^= 0xFF
    (tmp_path / "x.ffr").write_bytes(bytes(data))
    path = str(tmp_path / "x.ffr")
    assert [x.numpy() for x in tf_gulp.FFRecordDataset(path).shard(2, 0)] == records[0::2]
    with pytest.raises(tf.errors.DataLossError, match="record 7"):
        list(tf_gulp.FFRecordDataset(path).shard(2, 1))
    with pytest.raises(ValueError, match="explicit seed="):
        tf_gulp.FFRecordDataset(path, shuffle=True).shard(2, 0)


def test_auto_shard_warns_once(gulp_dir, ffr_path, monkeypatch):
    from tensorflow.python.distribute import input_ops

    monkeypatch.setattr(_source_dataset, "_warned", False)
    plain = tf.data.Dataset.range(10).map(lambda x: x + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        input_ops.auto_shard_dataset(plain, 2, 0)
        assert not caught  # not ours: no word
        ds = tf_gulp.FFRecordDataset(ffr_path).map(tf.strings.length).batch(2)
        input_ops.auto_shard_dataset(ds, 2, 0)
        input_ops.auto_shard_dataset(tf_gulp.GulpDataset(gulp_dir["path"]), 2, 1)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "every worker would read and decode the whole dataset" in messages[0]
    assert ".shard(ctx.num_input_pipelines, ctx.input_pipeline_id)" in messages[0]


def test_importing_patches_nothing_the_first_source_installs_the_warning(ffr_path):
    # Importing tf_gulp (and its dataset modules) leaves TensorFlow as it is; the auto-shard
    # warning is installed when the first source is made.
    code = (
        "import tensorflow as tf\n"
        "from tensorflow.python.distribute import input_ops\n"
        "import tf_gulp, tf_gulp.gulp.dataset, tf_gulp.ffrecord.dataset, tf_gulp.bzna.dataset\n"
        "wrapped = lambda: getattr(input_ops.auto_shard_dataset, '_tf_gulp_wrapped', False)\n"
        "assert not wrapped(), 'patched at import'\n"
        f"tf_gulp.FFRecordDataset({ffr_path!r})\n"
        "assert wrapped(), 'not installed by the first dataset'\n")
    # REPO_ROOT: the tested tree (under Bazel the runfiles', whose tf_gulp has the built _core;
    # resolving this file's path would lead to the source checkout, which may have none).
    from ingest_testing import REPO_ROOT, cli_env
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=str(REPO_ROOT), env=cli_env())
    assert result.returncode == 0, result.stderr[-2000:]


FORMAT_SIZE = 15  # elements of each format's dataset (each_format): five in shard 2 of 3


def test_sharded_iterator_checkpoint_resumes_exactly(each_format, tmp_path):
    """each_format: every format of the registry (tests/conftest.py)."""
    fmt, written = each_format

    def make():
        return fmt.open(written.path, shuffle=True, seed=4).shard(3, 2).map(fmt.key)

    expected = [x.numpy() for x in make()]
    it = iter(make())
    first = [next(it).numpy() for _ in range(3)]
    ckpt = tf.train.Checkpoint(iterator=it)
    saved = ckpt.write(str(tmp_path / "ckpt"))
    it2 = iter(make())
    tf.train.Checkpoint(iterator=it2).read(saved).assert_consumed()
    assert first + [x.numpy() for x in it2] == expected
