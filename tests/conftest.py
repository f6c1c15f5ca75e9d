"""Fixtures shared by several test files."""

from __future__ import annotations

import pytest
import tensorflow as tf

from formats_testing import format_params


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


@pytest.fixture(scope="module", params=format_params())
def each_format(request, tmp_path_factory):
    """(format, a tiny dataset of it) for every format of the registry (tests/formats_testing.py):
    a test that takes it runs on every format. Its size: the test module's FORMAT_SIZE (default 8
    elements)."""
    fmt = request.param
    size = getattr(request.module, "FORMAT_SIZE", 8)
    return fmt, fmt.write(tmp_path_factory.mktemp(fmt.name), size)
