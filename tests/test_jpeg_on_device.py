"""JPEG decoding in the step (docs/gpu.md, "JPEG on the GPU"): FFRecordDataset.decode_jpeg_warped(
..., device=...) hands the bytes and keys to tf_gulp.JpegOnDevice, checked on a machine without a
GPU: on "/CPU:0" the layer's output is the CPU path's pixel for pixel, the refusals name the fix,
the layer survives get_config and refuses XLA, and DecodeJpegWarped's GPU kernel is registered
with the CPU kernel's inputs in host memory (the GPU kernel itself has run only under a fake
nvJPEG: cc/gpu tests)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import simplejpeg
import tensorflow as tf
from tensorflow.python.framework import kernels

import tf_gulp
import tf_gulp.bzna.on_device as on_device
from gpu_testing import list_a_gpu_too
from tf_gulp import transforms as T
from tf_gulp.jpeg_on_device import JpegOnDevice, jpeg_on_device
from tf_gulp.ops.image.jpeg_ops import decode_jpeg_warped, nvjpeg_unavailable_reason
from tf_gulp.ops.library import load_ops

AUGMENT = [T.RandomResizedCrop(16), T.RandomHorizontalFlip(), T.ToDtype(tf.float32, scale=True),
           T.Normalize(T.IMAGENET_MEAN, T.IMAGENET_STD)]
COLOR = [T.RandomResizedCrop((12, 20)), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.RandomGrayscale(0.3)]


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> str:
    from tf_gulp.ffrecord import dump
    rng = np.random.default_rng(0)
    pictures = []
    for i in range(13):
        h, w = 30 + 2 * i, 44 - i
        pictures.append(simplejpeg.encode_jpeg(
            rng.integers(0, 255, (h, w, 3), dtype=np.uint8), quality=85,
            colorsubsampling=("420", "444", "422")[i % 3]))
    path = tmp_path_factory.mktemp("jpeg_on_device") / "images"
    dump(pictures, path, nfiles=2, progress=False)
    return str(path)


def _dataset(records: str, **kwargs) -> tf_gulp.FFRecordDataset:
    return tf_gulp.FFRecordDataset(records, batch_size=4, shuffle=True, seed=7, **kwargs)


@pytest.mark.parametrize("augment", [AUGMENT, COLOR], ids=["crop_flip_normalize", "colour_uint8"])
def test_the_layer_gives_the_cpu_paths_pixels(records, augment):
    cpu = _dataset(records).decode_jpeg_warped(augment)
    step = _dataset(records).decode_jpeg_warped(augment, device="/CPU:0")
    layer = JpegOnDevice(augment, device="/CPU:0")
    for _ in range(2):  # two passes: epochs 0 and 1 (the key carries the epoch)
        count = 0
        for expected, batch in zip(cpu, step):
            assert set(batch) == {"jpeg", "key", "name"}
            assert batch["jpeg"].dtype == tf.string and batch["key"].shape[1:] == [3]
            np.testing.assert_array_equal(layer(batch).numpy(), expected.numpy())
            count += len(expected)
        assert count == 13


def test_the_decode_options_reach_the_kernel(records):
    options = dict(colorspace="gray", dct_method="accurate", dct_scaling=False)
    cpu = _dataset(records).decode_jpeg_warped(COLOR, **options)
    step = _dataset(records).decode_jpeg_warped(COLOR, device="/CPU:0")
    layer = JpegOnDevice(COLOR, device="/CPU:0", **options)
    for expected, batch in zip(cpu, step):
        assert expected.shape[-1] == 1
        np.testing.assert_array_equal(layer(batch).numpy(), expected.numpy())
    # Given to the dataset with device=, they would be lost: refused, naming where they go.
    with pytest.raises(ValueError, match=r"give \{'colorspace': 'gray'\} to it"):
        _dataset(records).decode_jpeg_warped(COLOR, device="/CPU:0", colorspace="gray")


def test_the_batch_carries_each_records_seed_epoch_and_index(records):
    keyed = _dataset(records, keys=True, epoch=2)
    step = _dataset(records, epoch=2).decode_jpeg_warped(AUGMENT, device="/CPU:0")
    for e, batch in zip(keyed, step):
        key = tf.strings.to_number(batch["key"], tf.int64).numpy()
        np.testing.assert_array_equal(key[:, 0], 7)
        np.testing.assert_array_equal(key[:, 1], 2)
        np.testing.assert_array_equal(key[:, 2], e["index"].numpy())
        assert all(n.decode().endswith(f" record {i}")
                   for n, i in zip(batch["name"].numpy(), e["index"].numpy()))
        np.testing.assert_array_equal(batch["jpeg"].numpy(), e["record"].numpy())


def test_a_batch_spanning_epochs_is_decoded_per_epoch(records):
    """Each picture keyed by its own epoch (a batch mixed across epochs, e.g. after unbatch and
    batch), as the CPU op draws it."""
    jpegs = next(iter(tf_gulp.FFRecordDataset(records, batch_size=6)))
    epochs = np.array([0, 3, 0, 3, 3, 1], np.int64)
    elements = np.arange(6, dtype=np.int64) + 4
    key = tf.strings.as_string(tf.stack([tf.fill([6], tf.constant(5, tf.int64)), epochs,
                                         elements], axis=1))
    out = jpeg_on_device({"jpeg": jpegs, "key": key, "name": tf.fill([6], "x")}, AUGMENT,
                         "/CPU:0").numpy()
    for i in range(6):
        alone = decode_jpeg_warped(jpegs[i:i + 1], AUGMENT, seed=5, epoch=int(epochs[i]),
                                   elements=elements[i:i + 1]).numpy()
        np.testing.assert_array_equal(out[i], alone[0])


def test_the_layer_trains_in_model_fit(records):
    ds = _dataset(records, drop_remainder=True).decode_jpeg_warped(AUGMENT, device="/CPU:0")
    ds = ds.map(lambda b: (b, tf.zeros([4], tf.int64)))
    model = tf.keras.Sequential([JpegOnDevice(AUGMENT), tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(2)])
    model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_a_gpu_tensorflow_lacks_is_refused_naming_the_devices(records):
    if tf.config.list_logical_devices("GPU"):
        pytest.skip("TensorFlow sees a GPU here: the refusal of a GPU it lacks cannot be staged")
    with pytest.raises(ValueError, match=r"decode_jpeg_warped: device='/GPU:0': TensorFlow has no "
                                         r"GPU:0 .*its devices are \[.*CPU:0"):
        _dataset(records).decode_jpeg_warped(AUGMENT, device="/GPU:0")
    with pytest.raises(ValueError, match="give a device type"):
        _dataset(records).decode_jpeg_warped(AUGMENT, device="/job:localhost")


@pytest.fixture
def a_gpu_listed(monkeypatch):
    """TensorFlow's logical devices as check_device sees them, plus a GPU."""
    list_a_gpu_too(monkeypatch, "logical")


def test_a_gpu_without_nvjpeg_is_refused_naming_the_fix(records, a_gpu_listed, monkeypatch):
    reason = nvjpeg_unavailable_reason()
    if not reason:
        pytest.skip("nvJPEG is usable here (library, driver and kernels): the refusal of a "
                    "GPU without it cannot be staged")
    # This machine has no libnvjpeg.so.12 and no driver: both named, each with its fix.
    assert "pip install nvidia-nvjpeg-cu12" in reason and "LD_LIBRARY_PATH" in reason
    with pytest.raises(ValueError, match=r"device='/GPU:0': the GPU kernel cannot decode JPEG "
                                         r"here: nvJPEG unavailable.*pip install "
                                         r"nvidia-nvjpeg-cu12.*leave device out"):
        _dataset(records).decode_jpeg_warped(AUGMENT, device="/GPU:0")
    # Where nvJPEG is usable the same call is accepted (the refusal is the reason's).
    import tf_gulp.ops.image.jpeg_ops as jpeg_ops
    monkeypatch.setattr(jpeg_ops, "nvjpeg_unavailable_reason", lambda: "")
    assert _dataset(records).decode_jpeg_warped(AUGMENT, device="/GPU:0") is not None


def test_the_layer_says_once_that_no_gpu_kernel_ran(records, caplog, monkeypatch):
    if tf.config.list_logical_devices("GPU"):
        pytest.skip("TensorFlow sees a GPU here: the GPU kernel runs, nothing falls back to "
                    "the CPU to report")
    monkeypatch.setattr(on_device, "_said_no_gpu", False)
    batch = next(iter(_dataset(records).decode_jpeg_warped(AUGMENT, device="/CPU:0")))
    with caplog.at_level(logging.WARNING, logger="tf_gulp"):
        for _ in range(2):
            JpegOnDevice(AUGMENT, device="/GPU:0")(batch)  # soft placement: runs on the CPU
    said = [r.getMessage() for r in caplog.records if "no GPU kernel ran" in r.getMessage()]
    assert len(said) == 1 and "jpeg_on_device was asked for /GPU:0" in said[0], said


def test_missing_inputs_are_named():
    with pytest.raises(ValueError, match=r"jpeg_on_device: inputs lack \['key', 'name'\]"):
        jpeg_on_device({"jpeg": tf.constant(["x"])}, AUGMENT)


def test_get_config_round_trip(records):
    layer = JpegOnDevice(COLOR, device="/CPU:0", dct_method="accurate", name="decode")
    config = layer.get_config()
    again = JpegOnDevice.from_config(config)
    assert again.get_config() == config
    assert config["device"] == "/CPU:0" and config["dct_method"] == "accurate"
    batch = next(iter(_dataset(records).decode_jpeg_warped(COLOR, device="/CPU:0")))
    np.testing.assert_array_equal(again(batch).numpy(), layer(batch).numpy())
    # Through Keras' own serialization too.
    model = tf.keras.Sequential([JpegOnDevice(AUGMENT)])
    rebuilt = tf.keras.Sequential.from_config(model.get_config(),
                                              custom_objects={"JpegOnDevice": JpegOnDevice})
    assert rebuilt.layers[0].get_config()["augment"] == model.layers[0].get_config()["augment"]


def test_a_step_compiled_with_xla_fails_naming_the_layer_and_the_fix(records):
    layer = JpegOnDevice(AUGMENT)
    batch = next(iter(_dataset(records).decode_jpeg_warped(AUGMENT, device="/CPU:0")))
    step = tf.function(lambda inputs: tf.reduce_sum(layer(inputs)), jit_compile=True)
    with pytest.raises(ValueError, match=r"JpegOnDevice \(jpeg_on_device\) cannot run under XLA "
                                         r"\(jit_compile=True\): its ops "
                                         r"\(tf_gulp.ops.decode_jpeg_warped\).*Fix: leave the "
                                         r"model's jit_compile at its default"):
        step(batch)
    assert np.isfinite(tf.function(lambda inputs: tf.reduce_sum(layer(inputs)))(batch).numpy())


def test_keras_is_told_no_xla_once(caplog, monkeypatch):
    monkeypatch.setattr(JpegOnDevice, "_said_no_xla", False)
    layer = JpegOnDevice(AUGMENT)
    with caplog.at_level(logging.WARNING, logger="tf_gulp"):
        assert layer.supports_jit is False and layer.supports_jit is False
    said = [r.getMessage() for r in caplog.records if "JpegOnDevice" in r.getMessage()]
    assert len(said) == 1 and "without XLA" in said[0], said


def test_decode_jpeg_warped_has_a_gpu_kernel_reading_the_cpu_kernels_inputs_on_the_host():
    load_ops()
    found = {k.device_type: set(k.host_memory_arg)
             for k in kernels.get_registered_kernels_for_op("TfGulp>DecodeJpegWarped").kernel}
    assert set(found) == {"CPU", "GPU"}
    # Only the output lives in GPU memory: nvJPEG parses on the host, the draws are made there.
    assert found["GPU"] == {"contents", "what", "seed", "epoch", "elements"}
