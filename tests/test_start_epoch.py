"""Starting a source at epoch e (``epoch=``): its first pass is exactly pass e of the same dataset
made at epoch 0 (order, frame offsets, crops), with nothing of the skipped epochs read
(tf_gulp/ops/framework/epoch_cursor.h's first_epoch). Every format of the registry
(tests/formats_testing.py); the far epoch, checkpoint and service cases on GulpDataset. A bad
epoch= is refused by every source: tests/test_arguments.py."""

from __future__ import annotations

import time

import pytest
import tensorflow as tf

import tf_gulp
from formats_testing import contents
from gulp_testing import make_gulp_dir
from tf_gulp.transforms import RandomResizedCrop


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("start_epoch")
    make_gulp_dir(root / "gulp", 10, 9, 16, 16, videos_per_chunk=3)
    return {"gulp": str(root / "gulp")}


def gulp(path, **kw):
    return tf_gulp.GulpDataset(path, shuffle=True, seed=5, num_frames=3, training=True,
                               shape=(8, 8), warp=RandomResizedCrop(), **kw)


def keys(ds):
    return [(e["id"].numpy(), e["frames"].numpy().tobytes()) for e in ds]


def test_epoch_e_is_the_pass_e_of_epoch_0(each_format):
    fmt, written = each_format

    def make(**kw):
        return fmt.open(written.path, shuffle=True, seed=5, **fmt.random_options(), **kw)

    zero = make()
    passes = [contents(zero) for _ in range(5)]
    assert len({tuple(p) for p in passes}) == 5  # each pass its own order (and crops)
    for e in (1, 3):
        started = make(epoch=e)
        # Its first pass is pass e, its next ones e + 1, ...
        assert contents(started) == passes[e]
        assert contents(started) == passes[e + 1]
        # repeat() and sharding carry it too.
        assert contents(make(epoch=e).repeat(2)) == passes[e] + passes[e + 1]
        shards = [contents(make(epoch=e).shard(2, i)) for i in range(2)]
        assert shards[0] == passes[e][0::2] and shards[1] == passes[e][1::2]


def test_a_far_epoch_reads_nothing_of_the_ones_before(data):
    # repeat() + skip() would read and decode a billion passes; epoch= reads one.
    start = time.monotonic()
    far = keys(gulp(data["gulp"], epoch=10**9))
    assert time.monotonic() - start < 30
    assert len(far) == 10 and far != keys(gulp(data["gulp"]))


def test_a_checkpoint_of_a_started_dataset_resumes_there(data, tmp_path):
    reference = keys(gulp(data["gulp"], epoch=2).repeat(2))
    it = iter(gulp(data["gulp"], epoch=2).repeat(2))
    for _ in range(13):  # into its second pass (epoch 3)
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "ckpt"))
    fresh = iter(gulp(data["gulp"], epoch=2).repeat(2))
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert [(e["id"].numpy(), e["frames"].numpy().tobytes()) for e in fresh] == reference[13:]


def test_tf_data_service_gives_the_same_elements(data, service):
    # Dynamic sharding hands out [epoch, index] splits: the dispatcher's epochs start at epoch=
    # too, and each element (order position, frame offsets, crop) is the one a local pass makes.
    def by_id(ds):
        return {e["id"]: e["frames"].tobytes() for e in ds.as_numpy_iterator()}

    local = by_id(gulp(data["gulp"], epoch=3))
    distributed = gulp(data["gulp"], epoch=3).apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target, job_name="start_epoch"))
    assert by_id(distributed) == local
    assert local != by_id(gulp(data["gulp"]))  # epoch 3's offsets and crops, not epoch 0's
