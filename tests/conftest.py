"""Fixtures shared by several test files."""

from __future__ import annotations

import pytest
import tensorflow as tf


@pytest.fixture(scope="module")
def service():
    """An in-process tf.data service: a dispatcher and two workers on localhost."""
    dispatcher = tf.data.experimental.service.DispatchServer()
    address = dispatcher.target.split("://")[1]
    workers = [
        tf.data.experimental.service.WorkerServer(
            tf.data.experimental.service.WorkerConfig(dispatcher_address=address))
        for _ in range(2)
    ]
    yield dispatcher
    for w in workers:
        w.stop()
    dispatcher.stop()
