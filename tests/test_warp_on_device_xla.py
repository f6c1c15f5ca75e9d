"""WarpOnDevice and XLA (docs/gpu.md, "XLA"): tf_gulp's custom ops cannot be compiled by XLA.

Keras 3's ``compile(jit_compile="auto")`` turns XLA on by itself where TensorFlow lists a GPU and
every layer's ``supports_jit`` is true (``Trainer._resolve_auto_jit_compile``); this machine has no
GPU, so the tests make ``tf.config.list_physical_devices`` list one while Keras decides. An explicit
XLA request that reaches the layer (tf-keras' ``compile(jit_compile=True)``, a custom step under
``tf.function(jit_compile=True)``) must fail naming the layer and the fix.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from gpu_testing import list_a_gpu_too
from tf_gulp.bzna.on_device import WarpOnDevice
from tf_gulp.transforms import Resize, ToDtype

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A 3 x 3 float output of levels: the layer's augment list.
LEVELS_3X3 = [Resize((3, 3)), ToDtype(tf.float32)]


def _batches(count: int = 2) -> tf.data.Dataset:
    """What DataLoader(..., device=...) yields (decode="host"): 4x4 pictures, labels."""
    x = {"image": tf.fill([count, 4, 4, 3], tf.constant(100, tf.uint8)),
         "size": tf.fill([count, 2], 4), "matrix": tf.eye(3, batch_shape=[count]),
         "bias": tf.zeros([count, 3]), "norm": tf.ones([count, 3])}
    return tf.data.Dataset.from_tensors((x, tf.zeros([count], tf.int64))).repeat()


def _model(first=None) -> tf.keras.Model:
    layers = [first] if first is not None else []
    return tf.keras.Sequential(layers + [tf.keras.layers.GlobalAveragePooling2D(),
                                         tf.keras.layers.Dense(2)])


def _compile(model: tf.keras.Model, **kwargs) -> None:
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), **kwargs)


@pytest.fixture
def a_gpu_listed(monkeypatch):
    """TensorFlow's physical devices as Keras sees them, plus a GPU."""
    list_a_gpu_too(monkeypatch, "physical")


def test_jit_compile_auto_resolves_to_no_xla_on_a_gpu_machine(a_gpu_listed, monkeypatch):
    if not tf.__version__.startswith("2.") or not hasattr(tf.keras, "version") or \
            not tf.keras.version().startswith("3."):
        pytest.skip("jit_compile='auto' is Keras 3's (tf.keras here is another Keras)")
    plain = _model(tf.keras.layers.Identity())
    _compile(plain)
    assert plain.jit_compile is True  # the stand-in GPU is what Keras consults: XLA on
    with_layer = _model(WarpOnDevice(LEVELS_3X3))
    _compile(with_layer)
    assert with_layer.jit_compile is False
    monkeypatch.undo()
    history = with_layer.fit(_batches(), steps_per_epoch=2, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_explicit_jit_compile_in_keras_3_runs_without_xla_and_names_the_layer(caplog,
                                                                               monkeypatch):
    if not hasattr(tf.keras, "version") or not tf.keras.version().startswith("3."):
        pytest.skip("Keras 3's compile() (tf.keras here is another Keras)")
    monkeypatch.setattr(WarpOnDevice, "_said_no_xla", False)
    model = _model(WarpOnDevice(LEVELS_3X3))
    with caplog.at_level(logging.WARNING, logger="tf_gulp"), \
            pytest.warns(UserWarning, match="doesn't support `jit_compile=True`"):
        _compile(model, jit_compile=True)
    assert model.jit_compile is False
    said = [r.getMessage() for r in caplog.records if "WarpOnDevice" in r.getMessage()]
    assert len(said) == 1 and "without XLA" in said[0] and "jit_compile=False" in said[0], said
    history = model.fit(_batches(), steps_per_epoch=2, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_a_step_compiled_with_xla_fails_naming_the_layer_and_the_fix():
    layer = WarpOnDevice(LEVELS_3X3)
    x, _ = next(iter(_batches()))
    step = tf.function(lambda inputs: tf.reduce_sum(layer(inputs)), jit_compile=True)
    with pytest.raises(ValueError, match=r"WarpOnDevice \(warp_on_device\) cannot run under XLA "
                                         r"\(jit_compile=True\).*Fix: leave the model's "
                                         r"jit_compile at its default"):
        step(x)
    # The same step without XLA runs, and the layer outside XLA inside an outer function too.
    assert np.isfinite(tf.function(lambda inputs: tf.reduce_sum(layer(inputs)))(x).numpy())


TF_KERAS = r"""
import numpy as np, tensorflow as tf, tf_keras
assert tf.keras is tf_keras or tf.keras.__name__.startswith("tf_keras"), tf.keras
from tf_gulp.bzna.on_device import WarpOnDevice
from tf_gulp.transforms import Resize, ToDtype
LEVELS_3X3 = [Resize((3, 3)), ToDtype(tf.float32)]
x = {"image": tf.fill([2, 4, 4, 3], tf.constant(100, tf.uint8)), "size": tf.fill([2, 2], 4),
     "matrix": tf.eye(3, batch_shape=[2]), "bias": tf.zeros([2, 3]), "norm": tf.ones([2, 3])}
ds = tf.data.Dataset.from_tensors((x, tf.zeros([2], tf.int64))).repeat()
def fit(**kwargs):
    model = tf.keras.Sequential([WarpOnDevice(LEVELS_3X3), tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(2)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  **kwargs)
    return model.fit(ds, steps_per_epoch=2, epochs=1, verbose=0).history["loss"]
assert np.all(np.isfinite(fit()))  # tf-keras' default: no XLA
try:
    fit(jit_compile=True)
except ValueError as e:
    print("REFUSED:", e)
else:
    print("TRAINED UNDER XLA")
"""


def test_tf_keras_jit_compile_true_fails_naming_the_layer_and_the_fix():
    pytest.importorskip("tf_keras")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", TF_KERAS], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # tf-keras' autograph puts the traceback of the step before the layer's message.
    assert proc.stdout.startswith("REFUSED: "), proc.stdout + proc.stderr[-3000:]
    assert "ValueError: tf_gulp.bzna.WarpOnDevice (warp_on_device) cannot run under XLA" in \
        proc.stdout, proc.stdout
    assert "Fix: leave the model's jit_compile at its default" in proc.stdout
