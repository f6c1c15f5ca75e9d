"""Resuming ``model.fit`` at its epoch (docs/checkpoint.md): with ``BackupAndRestore`` and a dataset
made with ``epoch=tf_gulp.epochs.keras_backup_epoch(backup_dir)`` (repeated, with
``steps_per_epoch``), a run killed inside an epoch and resumed feeds each Keras epoch exactly the
batches (order, frame offsets, crops) of the same epoch in an uninterrupted run. The runs are
child processes; the kill is ``os._exit`` inside a batch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gulp_testing import make_gulp_dir
from ingest_testing import REPO_ROOT, cli_env

EPOCHS = 4

CHILD = r'''
import json, os, sys
import tensorflow as tf
import tf_gulp
from tf_gulp.epochs import keras_backup_epoch
from tf_gulp.transforms import RandomHorizontalFlip, RandomResizedCrop

path, backup, log, kill_epoch, kill_batch, epochs, use_start = sys.argv[1:8]
kill_epoch, kill_batch, epochs = int(kill_epoch), int(kill_batch), int(epochs)

# The recipe: the dataset starts at the epoch Keras resumes at.
start = keras_backup_epoch(backup) if use_start == "1" else 0
ds = tf_gulp.GulpDataset(path, shuffle=True, seed=4, num_frames=2, training=True,
                         augment=[RandomResizedCrop(4), RandomHorizontalFlip()], epoch=start)
ds = ds.map(lambda e: (tf.cast(tf.reshape(e["frames"], [-1]), tf.float32), tf.zeros([1])))
ds = ds.batch(3)
steps = int(ds.cardinality())


class Recorder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.epoch = None

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, _ = data
        with open(log, "a") as f:
            f.write(json.dumps([self.epoch, x.numpy().ravel().tolist()]) + "\n")
        return {"loss": tf.constant(0.0)}


class Kill(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.model.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.model.epoch, batch) == (kill_epoch, kill_batch):
            os._exit(3)


with open(log, "a") as f:  # a run starts: an epoch it repeats replaces the earlier part
    f.write(json.dumps(["start", None]) + "\n")
model = Recorder()
model(tf.zeros([1, 2 * 4 * 4 * 3]))
model.compile(run_eagerly=True)
# One endless iterator: each repeat() pass is one Keras epoch (Keras 3 opens two iterators per
# epoch over a finite dataset, each a pass of its own).
model.fit(ds.repeat(), steps_per_epoch=steps, epochs=epochs, initial_epoch=start, verbose=0,
          callbacks=[tf.keras.callbacks.BackupAndRestore(backup), Kill()])
'''


def run(path, backup, log, kill=(-1, -1), use_start=True) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(backup), str(log), str(kill[0]),
         str(kill[1]), str(EPOCHS), "1" if use_start else "0"],
        env=cli_env(), cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 3):
        pytest.fail(f"fit child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.returncode


def epochs_of(log) -> dict:
    """{Keras epoch: its batches}, the later run's where a resumed run repeats an epoch."""
    out: dict = {}
    last = None
    for line in log.read_text().splitlines():
        epoch, batch = json.loads(line)
        if epoch == "start":
            last = None
            continue
        if epoch != last:
            out[epoch] = []  # a resumed epoch starts again: its earlier part is replaced
            last = epoch
        out[epoch].append(batch)
    return out


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("keras_resume") / "gulp"
    make_gulp_dir(path, 9, 3, 12, 12, videos_per_chunk=3)
    return path


@pytest.fixture(scope="module")
def uninterrupted(gulp_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("uninterrupted")
    assert run(gulp_dir, root / "backup", root / "log") == 0
    epochs = epochs_of(root / "log")
    assert sorted(epochs) == list(range(EPOCHS))
    # Each epoch its own order and crops.
    assert len({json.dumps(b) for b in epochs.values()}) == EPOCHS
    return epochs


def test_killed_inside_an_epoch_then_resumed_gives_each_epoch_its_batches(gulp_dir, tmp_path,
                                                                          uninterrupted):
    backup, log = tmp_path / "backup", tmp_path / "log"
    assert run(gulp_dir, backup, log, kill=(2, 1)) == 3  # killed in epoch 2, at its 2nd batch
    assert run(gulp_dir, backup, log) == 0  # resumed: Keras restarts epoch 2
    assert epochs_of(log) == uninterrupted


def test_without_the_start_epoch_the_resumed_run_replays_epoch_0(gulp_dir, tmp_path,
                                                                 uninterrupted):
    # What the recipe prevents: the dataset made at epoch 0 feeds Keras epoch 2 epoch 0's batches.
    backup, log = tmp_path / "backup", tmp_path / "log"
    assert run(gulp_dir, backup, log, kill=(2, 1)) == 3
    assert run(gulp_dir, backup, log, use_start=False) == 0
    resumed = epochs_of(log)
    assert resumed[2] == uninterrupted[0] and resumed[2] != uninterrupted[2]


def test_keras_backup_epoch_reads_the_backup(tmp_path):
    from tf_gulp.epochs import keras_backup_epoch

    assert keras_backup_epoch(tmp_path) == 0
    (tmp_path / "training_metadata.json").write_text('{"epoch": 5, "batch": 0}')
    assert keras_backup_epoch(tmp_path) == 5
    (tmp_path / "training_metadata.json").write_text('{"step": 5}')
    with pytest.raises(ValueError, match="training_metadata.json: not Keras 3"):
        keras_backup_epoch(tmp_path)
