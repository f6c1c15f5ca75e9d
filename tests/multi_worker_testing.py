"""One worker of a MultiWorkerMirroredStrategy cluster on localhost (a helper run as a child
process by tests/test_multi_worker.py, not a test file).

    python tests/multi_worker_testing.py MODE FORMAT PATH NUM_ELEMENTS OUT_JSON

TF_CONFIG is set by the caller. ``FORMAT`` names an entry of tests/formats_testing.py's registry;
NUM_ELEMENTS is the size of one epoch of it. ``MODE``:

* ``fit``: ``model.fit`` of a tiny Keras model for one epoch of this worker's share, through
  ``strategy.distribute_datasets_from_function`` with the source sharded by the worker's
  InputContext (docs/distributed.md). Run with TF_USE_LEGACY_KERAS=1 (tf-keras): Keras 3's
  ``model.fit`` fails under this strategy with two workers, see ``custom-loop``.
* ``custom-loop``: with Keras 3, first ``model.fit`` (its error is recorded: the test checks that
  docs/distributed.md still describes Keras 3 accurately), then the same training as a custom loop
  (``strategy.run``), which is what a Keras 3 user writes.

Either way every element the input pipeline decodes is labelled (its key written to a file by a
``tf.print`` in the pipeline), so the test sees exactly what each worker decoded during training.
Then the worker checks what ``experimental_distribute_dataset`` on the unsharded source says, and
times its share read alone against one reader of everything. All of it goes to OUT_JSON.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from importlib import metadata
import time
import warnings

import tensorflow as tf

from formats_testing import FORMATS

SEED = 1234
STEPS = 4  # training steps: one epoch of the share, so the share is decoded exactly once
# Seconds each element's labelling waits (TF_GULP_TEST_ELEMENT_DELAY): a slow machine on demand.
ELEMENT_DELAY = float(os.environ.get("TF_GULP_TEST_ELEMENT_DELAY", "0"))


def source(fmt: str, path: str) -> tf.data.Dataset:
    """The whole dataset of the registry's format `fmt` (tests/formats_testing.py), and a function
    of its element to (key, features, label): the key names the element (the registry's key);
    the features and the label are numbers drawn from it, all a tiny model needs to train."""
    f = FORMATS[fmt]
    ds = f.open(path, shuffle=True, seed=SEED)

    def to_example(e):
        key = f.key(e)
        h = tf.strings.to_hash_bucket_fast(key, 1000)
        return key, tf.cast(tf.stack([h % 10, h // 10 % 10, h // 100]), tf.float32) / 10.0, h % 2
    return ds, to_example


def labelled(fmt: str, path: str, ctx: tf.distribute.InputContext, keys_file: str,
             per_replica_batch: int) -> tf.data.Dataset:
    """This worker's share as batches of (features, label), as docs/distributed.md writes it; the
    key of every element the source yields is appended to ``keys_file`` on the way."""
    ds, to_example = source(fmt, path)
    ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)  # read only this share

    def record(e):
        key, x, y = to_example(e)
        if ELEMENT_DELAY:
            x = slowed(x)
        with tf.control_dependencies([tf.print(key, output_stream="file://" + keys_file)]):
            return tf.identity(x), y

    return ds.map(record).batch(per_replica_batch, drop_remainder=True)


def slowed(x: tf.Tensor) -> tf.Tensor:
    """x, after ELEMENT_DELAY seconds: a machine as slow as the test wants (its own knob, so the
    test can check the labels stay right however long the pipeline lags the training)."""
    def sleep(v):
        time.sleep(ELEMENT_DELAY)
        return v
    y = tf.numpy_function(sleep, [x], x.dtype, stateful=True)
    y.set_shape(x.shape)
    return y


def count_lines(path: str) -> int:
    try:
        with open(path) as f:
            return len(f.read().split())
    except FileNotFoundError:
        return 0


def keras_in_use() -> str:
    """Which Keras ``tf.keras`` is here: "tf_keras 2.x" (TF_USE_LEGACY_KERAS=1) or "keras 3.x"."""
    package = tf.keras.Model.__module__.split(".")[0]
    return f"{package} {metadata.version(package.replace('_', '-'))}"


def tiny_model(keras) -> "tf.keras.Model":
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])


def train_with_fit(strategy, dist) -> tuple:
    """``model.fit`` for one epoch of STEPS steps; returns (losses, model)."""
    keras = tf.keras
    with strategy.scope():
        model = tiny_model(keras)
        model.compile(optimizer=keras.optimizers.SGD(0.01),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(dist, epochs=1, steps_per_epoch=STEPS, verbose=0)
    return history.history["loss"], model


def keras3_fit_error(strategy, dist) -> str:
    """What Keras 3's ``model.fit`` does under this strategy: "" if it trains, else its error."""
    try:
        train_with_fit(strategy, dist)
    except Exception as e:  # the error is the result: the test compares it with the docs
        return f"{type(e).__name__}: {e}"
    return ""


def train_with_custom_loop(strategy, dist) -> tuple:
    """The same training as a custom loop (strategy.run, gradients all-reduced across the
    workers); returns (losses, model)."""
    keras = tf.keras
    with strategy.scope():
        model = tiny_model(keras)
        optimizer = keras.optimizers.SGD(0.01)
        optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="sum_over_batch_size")

    @tf.function
    def train_step(batch):
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True)) / strategy.num_replicas_in_sync
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        per_replica = strategy.run(step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    iterator = iter(dist)
    return [float(train_step(next(iterator))) for _ in range(STEPS)], model


def main(mode: str, fmt: str, path: str, num_elements: str, out: str) -> None:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    num_workers = strategy.num_replicas_in_sync
    share = int(num_elements) // num_workers
    assert share % STEPS == 0, (num_elements, num_workers, STEPS)
    per_replica_batch = share // STEPS
    contexts = []
    keys_file = f"{out}.keys"

    def distribute(keys_file: str):
        def dataset_fn(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
            contexts.append((ctx.num_input_pipelines, ctx.input_pipeline_id))
            return labelled(fmt, path, ctx, keys_file, per_replica_batch)
        return strategy.distribute_datasets_from_function(dataset_fn)

    result = {"keras": keras_in_use(), "mode": mode}
    if mode == "custom-loop":
        # Keras 3's model.fit pulls batches before it fails, and the iterator it made outlives the
        # failure: its prefetch goes on decoding (and labelling) elements of the share while the
        # custom loop trains. So the failed fit labels into a file of its own, and the custom loop
        # reads a fresh epoch from a new dataset that labels into keys_file alone. (Truncating one
        # shared file between the two let the old iterator's late keys land in it: "an element
        # decoded twice", more often the slower the machine.)
        fit_keys = f"{out}.fit-keys"
        result["keras3_fit_error"] = keras3_fit_error(strategy, distribute(fit_keys))
        gc.collect()  # the failed fit's iterator, once nothing refers to it
        result["fit_keys_after_failure"] = count_lines(fit_keys)
        dist = distribute(keys_file)
        train = train_with_custom_loop
    else:
        dist = distribute(keys_file)
        train = train_with_fit
    start = time.perf_counter()
    losses, model = train(strategy, dist)
    result["train_seconds"] = time.perf_counter() - start
    result["losses"] = [float(l) for l in losses]
    # The weights are mirrored: equal on both workers after the all-reduced steps.
    result["weights"] = [float(v) for v in tf.reshape(model.trainable_variables[0], [-1]).numpy()]
    with open(keys_file) as f:
        result["keys"] = f.read().split()
    if mode == "custom-loop":  # reported: how long the failed fit's iterator went on decoding
        result["fit_keys_after_training"] = count_lines(fit_keys)

    # experimental_distribute_dataset (auto-shard AUTO) on an unsharded tf_gulp pipeline: every
    # worker would read everything, which tf_gulp's one-time warning says.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds, to_example = source(fmt, path)
        strategy.experimental_distribute_dataset(
            ds.map(to_example).map(lambda k, x, y: (x, y)).batch(per_replica_batch))
    result["auto_shard_warnings"] = [str(w.message) for w in caught if "tf_gulp:" in str(w.message)]

    # This worker's share of an epoch, read alone, against one reader of the whole epoch in the
    # same process (each timed after a first pass has paid for tracing and opening).
    (num_shards, index), = set(contexts)
    result.update(num_shards=num_shards, index=index)

    def timed(shard: bool):
        ds, to_example = source(fmt, path)
        if shard:
            ds = ds.shard(num_shards, index)
        ds = ds.map(to_example)
        # Counted inside the graph: no Python per element in the timing.
        count = lambda: int(ds.reduce(tf.constant(0, tf.int64), lambda n, *_: n + 1))  # noqa: E731
        n = count()
        best = float("inf")
        for _ in range(2):  # the faster of two passes: less noise from a busy machine
            start = time.perf_counter()
            assert count() == n
            best = min(best, time.perf_counter() - start)
        return n, best

    result["share"], result["seconds"] = timed(True)
    result["whole"], result["whole_seconds"] = timed(False)
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(*sys.argv[1:6])
