"""DataLoader(device="/GPU:i", decode="device") checks TensorFlow's GPU memory settings before the
first step (docs/gpu.md, "GPU memory"): without memory growth or a memory limit TensorFlow takes
nearly all GPU memory, and NVDEC's surfaces (the driver's, outside TensorFlow) may not fit.

This machine has no GPU: TensorFlow's device listing and memory settings are replaced by fakes.
"""

from __future__ import annotations

import logging

import pytest
import tensorflow as tf

from tf_gulp.bzna.dataset import DataLoader
from tf_gulp.bzna.on_device import gpu_memory_unsettled

GPU0 = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
GPU1 = tf.config.PhysicalDevice("/physical_device:GPU:1", "GPU")


@pytest.fixture
def gpus(monkeypatch):
    """Two fake physical GPUs; the test sets their memory growth and logical configurations."""
    state = {"growth": {GPU0.name: False, GPU1.name: False}, "configs": {}}
    real_physical, real_logical = tf.config.list_physical_devices, tf.config.list_logical_devices

    def physical(device_type=None):
        cpus = real_physical("CPU") if device_type in (None, "CPU") else []
        return cpus + ([GPU0, GPU1] if device_type in (None, "GPU") else [])

    def logical(device_type=None):
        if device_type != "GPU":
            return real_logical(device_type)
        count = sum(len(state["configs"].get(g.name) or [None]) for g in (GPU0, GPU1))
        return [tf.config.LogicalDevice(f"/device:GPU:{i}", "GPU") for i in range(count)]

    monkeypatch.setattr(tf.config, "list_physical_devices", physical)
    monkeypatch.setattr(tf.config, "list_logical_devices", logical)
    monkeypatch.setattr(tf.config.experimental, "get_memory_growth",
                        lambda gpu: state["growth"][gpu.name])
    monkeypatch.setattr(tf.config, "get_logical_device_configuration",
                        lambda gpu: state["configs"].get(gpu.name))
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    return state


def _said(caplog) -> list:
    return [r.getMessage() for r in caplog.records if "memory" in r.getMessage()]


def _loader(tmp_path, caplog, **kwargs) -> list:
    """DataLoader's warnings up to the point it opens the (missing) file."""
    with caplog.at_level(logging.WARNING, logger="tf_gulp"):
        with pytest.raises((FileNotFoundError, ValueError, tf.errors.NotFoundError),
                           match="never-read.bzna"):
            DataLoader(str(tmp_path / "never-read.bzna"), (8, 8), 2, **kwargs)
    said = _said(caplog)
    caplog.clear()
    return said


def test_device_decoding_without_memory_growth_or_limit_warns_before_the_first_step(
        gpus, tmp_path, caplog):
    said = _loader(tmp_path, caplog, device="/GPU:0", decode="device")
    assert len(said) == 1, said
    assert said[0].startswith("DataLoader: decode='device': /GPU:0 (/physical_device:GPU:0) has "
                              "neither memory growth nor a memory limit")
    for fix in ("tf.config.experimental.set_memory_growth(gpu, True)",
                "LogicalDeviceConfiguration(memory_limit=...)", "before TensorFlow first uses",
                "ResourceExhaustedError"):
        assert fix in said[0]

    gpus["growth"][GPU0.name] = True
    assert _loader(tmp_path, caplog, device="/GPU:0", decode="device") == []
    gpus["growth"][GPU0.name] = False
    gpus["configs"][GPU0.name] = [tf.config.LogicalDeviceConfiguration(memory_limit=30000)]
    assert _loader(tmp_path, caplog, device="/GPU:0", decode="device") == []
    # Nothing decoded on the device (decode="host"), or no GPU: NVDEC is not used.
    gpus["configs"].clear()
    assert _loader(tmp_path, caplog, device="/GPU:0", decode="host") == []
    assert _loader(tmp_path, caplog, device="/CPU:0", decode="device") == []


def test_the_setting_of_the_gpu_behind_the_logical_device_is_checked(gpus, monkeypatch):
    gpus["growth"][GPU0.name] = True
    assert gpu_memory_unsettled("/GPU:0") is None
    assert "/physical_device:GPU:1" in gpu_memory_unsettled("/GPU:1")
    # GPU 0 split into two logical GPUs with limits: logical GPU:2 is physical GPU 1.
    gpus["growth"][GPU0.name] = False
    gpus["configs"][GPU0.name] = [tf.config.LogicalDeviceConfiguration(memory_limit=1000)] * 2
    assert gpu_memory_unsettled("/GPU:1") is None
    assert "/physical_device:GPU:1" in gpu_memory_unsettled("/GPU:2")
    # A logical device without a limit leaves nothing either.
    gpus["configs"][GPU1.name] = [tf.config.LogicalDeviceConfiguration()]
    assert gpu_memory_unsettled("/GPU:2") is not None
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")  # TensorFlow's own switch for it
    assert gpu_memory_unsettled("/GPU:2") is None
    assert gpu_memory_unsettled("/CPU:0") is None
