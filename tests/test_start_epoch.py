"""Starting a source at epoch e (``epoch=``): its first pass is exactly pass e of the same dataset
made at epoch 0 (order, frame offsets, crops), with nothing of the skipped epochs read
(tf_gulp/ops/framework/epoch_cursor.h's first_epoch). Every format of the registry
(tests/formats_testing.py); the far epoch, checkpoint and service cases on GulpDataset. A bad
epoch= is refused by every source: tests/test_arguments.py."""

from __future__ import annotations

import glob
import json
import os
import shutil

import pytest
import tensorflow as tf

import tf_gulp
from formats_testing import contents
from gulp_testing import frame_value, make_gulp_dir
from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("start_epoch")
    make_gulp_dir(root / "gulp", 10, 9, 16, 16, videos_per_chunk=3)
    return {"gulp": str(root / "gulp")}


def gulp(path, **kw):
    return tf_gulp.GulpDataset(path, shuffle=True, seed=5, num_frames=3, training=True,
                               augment=[RandomResizedCrop(8), RandomHorizontalFlip()], **kw)


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


def frames_used(ds):
    """{id: the frame indices its clip holds}, told by each frame's green level
    (gulp_testing.frame_value: constant over the frame, so any crop keeps it)."""
    used = {}
    for e in ds:
        green = e["frames"].numpy()[..., 1].reshape(len(e["frames"]), -1).mean(axis=1)
        used[e["id"].numpy().decode()] = {
            min(range(9), key=lambda j: abs(frame_value(j) - level)) for level in green}
    return used


def damage_frames_but(path, keep):
    """Overwrites every frame's JPEG data (after its SOI marker) but those in `keep`, as
    test_gulp_dataset_errors.py's corrupt_frame does: decoding one is a DataLossError."""
    for meta_name in sorted(glob.glob(os.path.join(path, "meta_*.gmeta"))):
        data_name = meta_name.replace("meta_", "data_").replace(".gmeta", ".gulp")
        with open(meta_name) as f:
            meta = json.load(f)
        with open(data_name, "r+b") as f:
            for id_, item in meta.items():
                for j, (offset, pad, length) in enumerate(item["frame_info"]):
                    if j not in keep[id_]:
                        f.seek(offset + 2)
                        f.write(b"\x00garbage" * ((length - pad - 4) // 8))


def test_a_far_epoch_reads_nothing_of_the_ones_before(data, tmp_path):
    # repeat() + skip() would read and decode every pass before; epoch= reads one. Shown by what
    # the data lets through rather than by how long it takes: in a copy whose every frame is
    # damaged but those the epoch 1000 pass's clips hold, that pass reads as on the intact copy,
    # while any other pass (epoch 0's, the first a read-through would decode) meets a damaged
    # frame. (1000: far enough that a read-through decodes many passes, near enough that it ends
    # on the intact copy and fails here instead of running on.)
    far = keys(gulp(data["gulp"], epoch=1000))
    damaged = str(tmp_path / "damaged")
    shutil.copytree(data["gulp"], damaged)
    damage_frames_but(damaged, frames_used(gulp(data["gulp"], epoch=1000)))
    assert keys(gulp(damaged, epoch=1000)) == far
    with pytest.raises(tf.errors.DataLossError, match="frame"):
        keys(gulp(damaged))
    # And a billion passes on: one pass of its own, read as any other.
    billionth = keys(gulp(data["gulp"], epoch=10**9))
    assert len(billionth) == 10 and billionth not in (far, keys(gulp(data["gulp"])))


def test_a_checkpoint_of_a_started_dataset_resumes_there(data, tmp_path):
    reference = keys(gulp(data["gulp"], epoch=2).repeat(2))
    it = iter(gulp(data["gulp"], epoch=2).repeat(2))
    for _ in range(13):  # into its second pass (epoch 3)
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "ckpt"))
    fresh = iter(gulp(data["gulp"], epoch=2).repeat(2))
    tf.train.Checkpoint(iterator=fresh).restore(path)
    assert [(e["id"].numpy(), e["frames"].numpy().tobytes()) for e in fresh] == reference[13:]


@pytest.mark.parametrize("stop", [4, 13])  # inside the first pass (epoch 2), the second (epoch 3)
def test_the_passes_after_a_restored_one_are_those_of_an_uninterrupted_run(data, tmp_path, stop):
    # Uninterrupted: repeat(3) makes passes 2, 3, 4; a new iterator of the same dataset, pass 5.
    uninterrupted = gulp(data["gulp"], epoch=2)
    reference = keys(uninterrupted.repeat(3))
    after = keys(uninterrupted)
    it = iter(gulp(data["gulp"], epoch=2).repeat(3))
    for _ in range(stop):
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "ckpt"))
    restored = gulp(data["gulp"], epoch=2)
    fresh = iter(restored.repeat(3))
    tf.train.Checkpoint(iterator=fresh).restore(path)
    # The rest of the restored pass, then the passes repeat() opens after it: order, frame
    # offsets and crops are those of epochs 3 and 4 (not epochs counted from the restored one
    # without the start epoch).
    assert [(e["id"].numpy(), e["frames"].numpy().tobytes()) for e in fresh] == reference[stop:]
    assert keys(restored) == after


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
