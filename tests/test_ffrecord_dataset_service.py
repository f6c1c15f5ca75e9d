"""FFRecordDataset on an in-process tf.data service (the `service` fixture in conftest.py)."""

from __future__ import annotations

import pytest
import tensorflow as tf

import tf_gulp
from ffrecord_testing import ffrecord_bytes, sample_records


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("svc") / "d.ffr"
    p.write_bytes(ffrecord_bytes(sample_records(57)))
    return str(p)


def numbers(ds):
    out = []
    for x in ds.as_numpy_iterator():
        for r in (x if hasattr(x, "shape") and x.shape else [x]):
            out.append(int(r.split(b":")[0]))
    return out


@pytest.mark.parametrize("batch_size", [None, 5])
def test_distributed_epoch_gives_every_record_exactly_once(service, path, batch_size):
    ds = tf_gulp.FFRecordDataset(path, batch_size=batch_size, shuffle=True, seed=4)
    # Dynamic sharding: the dispatcher hands out element indices (records or batches) from the
    # dataset's split provider; each worker reads only those.
    distributed = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
        service=service.target, job_name=f"ffrecord_once_{batch_size}"))
    assert sorted(numbers(distributed)) == list(range(57))


def test_parallel_epochs_run_the_graph_on_each_worker(service, path):
    ds = tf_gulp.FFRecordDataset(path, batch_size=10)
    distributed = ds.apply(tf.data.experimental.service.distribute(
        processing_mode=tf.data.experimental.service.ShardingPolicy.OFF,
        service=service.target))
    assert sorted(numbers(distributed)) == sorted(list(range(57)) * 2)
