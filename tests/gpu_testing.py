"""Helpers shared by the GPU tests (tests/test_gpu_*.py)."""

from __future__ import annotations

import os
import shutil


def find_nvcc() -> str | None:
    """Where cc/gpu/CMakeLists.txt looks too: $CUDA_HOME/bin, /usr/local/cuda/bin, PATH."""
    candidates = [os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "nvcc"),
                  "/usr/local/cuda/bin/nvcc", shutil.which("nvcc")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)
