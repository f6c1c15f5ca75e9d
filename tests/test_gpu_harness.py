"""The GPU code (cc/gpu) builds with nvcc and its standalone harness runs.

Everywhere, the kernel's per-pixel arithmetic (cc/gpu/warp_pixel.h, run on the host) must match
the CPU reference. On a machine without an NVIDIA driver (the development machines) the harness must
then say so and exit with status 3; on one with a GPU it must find the GPU warp within 2 levels of
the CPU reference.
The GPU figures themselves come from running the harness on a GPU machine (docs/gpu.md)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

from gpu_testing import find_nvcc

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> pathlib.Path:
    nvcc, cmake = find_nvcc(), shutil.which("cmake")
    if nvcc is None or cmake is None:
        pytest.skip("the GPU code is built only where the CUDA toolkit (nvcc) and CMake are "
                    f"installed; missing here: {'nvcc' if nvcc is None else 'cmake'}")
    build = tmp_path_factory.mktemp("gpu_build")
    env = dict(os.environ, TMPDIR=str(build))  # nvcc's scratch files (Bazel's sandbox)
    for cmd in ([cmake, "-S", str(REPO_ROOT / "cc" / "gpu"), "-B", str(build)],
                [cmake, "--build", str(build), "-j", "2"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    fatbin = build / "similarity_warp.fatbin"
    assert fatbin.stat().st_size > 10_000  # sm_75 ... sm_90 code and PTX
    return build / "warp_harness"


def test_harness_proves_the_warp_or_says_why_it_cannot(harness):
    proc = subprocess.run([str(harness), "--batch", "16", "--in", "96", "--out", "48",
                           "--iterations", "2"], capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    # On every machine: the kernel's per-pixel function, run on the host, matches the CPU
    # reference (float vs double coordinates move a rounded value by at most one level).
    for kind, diffs in report["host_emulation"].items():  # "rgb" and "nv12" (fused colour)
        assert diffs["max_abs_diff_levels"] and all(
            d <= 1.0 for d in diffs["max_abs_diff_levels"].values()), (kind, report)
    if report["gpu"]:
        assert proc.returncode == 0, proc.stdout
        assert report["within_2_levels"] is True
        assert report["warp_images_per_s"] > 0
    else:
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "libcuda.so.1" in report["reason"] or "no device" in report["reason"]
        assert isinstance(report["libnvcuvid_present"], bool)


def test_harness_rejects_bad_arguments(harness):
    proc = subprocess.run([str(harness), "--batch", "zero"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "usage" in proc.stderr
