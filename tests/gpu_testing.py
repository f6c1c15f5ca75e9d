"""Helpers shared by the GPU tests (tests/test_gpu_*.py)."""

from __future__ import annotations

import os
import shutil


def find_nvcc() -> str | None:
    """Where cc/gpu/CMakeLists.txt looks too: $CUDA_HOME/bin, /usr/local/cuda/bin, PATH."""
    candidates = [os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "nvcc"),
                  "/usr/local/cuda/bin/nvcc", shutil.which("nvcc")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def list_a_gpu_too(monkeypatch, kind: str) -> None:
    """Makes ``tf.config.list_<kind>_devices`` list a GPU besides TensorFlow's own devices, on a
    machine without one: `kind` "physical" (what Keras consults for ``jit_compile="auto"``) or
    "logical" (what check_device consults)."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    lister = f"list_{kind}_devices"
    real = getattr(tf.config, lister)
    gpu = (tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU") if kind == "physical" else
           tf.config.LogicalDevice("/device:GPU:0", "GPU"))

    def with_gpu(device_type=None):
        found = real(device_type)
        if device_type in (None, "GPU"):
            found = found + [gpu]
        return found

    monkeypatch.setattr(tf.config, lister, with_gpu)
