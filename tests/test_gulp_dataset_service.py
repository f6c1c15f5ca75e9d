"""GulpDataset on an in-process tf.data service (the `service` fixture in conftest.py)."""

from __future__ import annotations

import tensorflow as tf

import tf_gulp
from gulp_testing import make_gulp_dir


def test_distributed_epoch_gives_every_element_exactly_once(service, tmp_path):
    info = make_gulp_dir(tmp_path / "g", num_videos=30, frames_per_video=2, height=16, width=16,
                         videos_per_chunk=7)
    ds = tf_gulp.GulpDataset(info["path"], shuffle=True, seed=5).map(lambda e: e["id"])
    # Dynamic sharding: the dispatcher hands out element indices (splits) from the dataset's
    # split provider; each worker reads only the elements it was given.
    distributed = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target, job_name="gulp_exactly_once"))
    got = [x.decode() for x in distributed.as_numpy_iterator()]
    assert sorted(got) == sorted(info["ids"])


def test_parallel_epochs_run_the_graph_on_each_worker(service, tmp_path):
    info = make_gulp_dir(tmp_path / "g", num_videos=6, frames_per_video=1, height=16, width=16,
                         videos_per_chunk=4)
    ds = tf_gulp.GulpDataset(info["path"]).map(lambda e: e["id"])
    distributed = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.OFF,
        service=service.target))
    got = [x.decode() for x in distributed.as_numpy_iterator()]
    assert sorted(got) == sorted(info["ids"] * 2)  # each worker produced the whole dataset
