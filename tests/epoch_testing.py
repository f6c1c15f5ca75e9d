"""Helpers for the tests of per-epoch randomness: what Keras feeds a model, epoch by epoch."""

from __future__ import annotations

from typing import List

import tensorflow as tf


class Recorder(tf.keras.Model):
    """Records the inputs Keras feeds it, batch by batch (no training)."""

    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.seen: List[list] = []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, _ = data
        self.seen.append(x.numpy().ravel().tolist())
        return {"loss": tf.constant(0.0)}


def keras_epochs(ds: tf.data.Dataset, epochs: int = 3) -> List[list]:
    """The inputs of each of `epochs` Keras epochs of ``fit(ds)`` (ds: (x, y) batches)."""
    model = Recorder()
    model.compile(run_eagerly=True)
    model.fit(ds, epochs=epochs, verbose=0)
    per_epoch = len(model.seen) // epochs
    return [sum(model.seen[i * per_epoch:(i + 1) * per_epoch], []) for i in range(epochs)]


def assert_all_differ(epochs: list) -> None:
    for i in range(len(epochs)):
        for j in range(i + 1, len(epochs)):
            assert epochs[i] != epochs[j], f"epochs {i} and {j} are identical"


def resumed(make, stop: int, directory) -> tf.data.Iterator:
    """An iterator over ``make()`` restored from a checkpoint of another one taken after `stop`
    elements (saved under `directory`)."""
    it = iter(make())
    for _ in range(stop):
        next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(directory / "ckpt"))
    fresh = iter(make())
    tf.train.Checkpoint(iterator=fresh).restore(path)
    return fresh
