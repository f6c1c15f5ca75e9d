"""`make gpu-proof`'s program and data (cc/gpu/proof, tools/gpu_proof.sh).

Everywhere: the CPU reference outputs carried in cc/gpu/proof/data are what the CPU path (the
libavcodec decoder + the CPU warp, cc/gpu/proof/make_reference.cc) makes from the carried samples
today, so a change to the CPU path cannot leave the proof comparing against stale numbers. Where
nvcc and CMake are present: the proof builds; without a GPU it says why and exits 3; with one it
must find NVDEC + GPU warp within 2 levels of the CPU path."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from gpu_testing import find_nvcc

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = REPO_ROOT / "cc" / "gpu" / "proof" / "data"


def samples() -> list[tuple[str, int, int]]:
    rows = (DATA / "index.txt").read_text().split("\n")
    return [(f, int(w), int(h)) for f, w, h in (r.split() for r in rows if r)]


def test_data_is_complete_and_small():
    listed = samples()
    assert len(listed) >= 15 and sum(1 for f, w, h in listed if (w, h) == (512, 512)) >= 12
    n = len(listed)
    assert (DATA / "matrices.f32").stat().st_size == n * 9 * 4
    assert (DATA / "reference.f16").stat().st_size == n * 224 * 224 * 3 * 2
    total = sum(p.stat().st_size for p in DATA.iterdir())
    assert total < 16 << 20, total  # a GPU run carries the repository in 64 MiB
    index = json.loads((DATA / "index.json").read_text())
    assert [s["file"] for s in index["samples"]] == [f for f, _, _ in listed]


def test_reference_outputs_are_what_the_cpu_path_makes_today(tmp_path):
    have_avcodec = any(pathlib.Path(d, "libavcodec/avcodec.h").exists()
                       for d in ("/usr/include", "/usr/include/x86_64-linux-gnu"))
    if shutil.which("g++") is None or not have_avcodec:
        pytest.skip("needs g++ and libavcodec's headers (tools/apt-packages.txt)")
    tool = tmp_path / "make_reference"
    subprocess.run(["g++", "-std=c++17", "-O2", "-I", str(REPO_ROOT),
                    str(REPO_ROOT / "cc/gpu/proof/make_reference.cc"),
                    str(REPO_ROOT / "cc/codec/hevc_decoder.cc"),
                    str(REPO_ROOT / "cc/codec/ycbcr.cc"),
                    str(REPO_ROOT / "cc/warp/similarity_warp.cc"), "-o", str(tool),
                    "-lavcodec", "-lavutil", "-pthread"], check=True, timeout=600)
    out = tmp_path / "reference.f32"
    args = [str(tool), str(out), str(DATA / "matrices.f32"), "224"]
    for f, w, h in samples():
        args += [str(DATA / f), str(w), str(h)]
    subprocess.run(args, check=True, timeout=300)
    now = np.frombuffer(out.read_bytes(), "<f4")
    carried = np.frombuffer((DATA / "reference.f16").read_bytes(), "<f2").astype(np.float32)
    # float16 keeps levels to 1/8 near 255: half of that is the most storing moved them.
    assert np.abs(now - carried).max() <= 0.0625
    # Not a constant picture: the warp reads the pictures (and the out-of-picture colour shows).
    assert now.std() > 20 and (now == 128).mean() < 0.5


def test_proof_builds_and_proves_or_says_why(tmp_path):
    nvcc, cmake = find_nvcc(), shutil.which("cmake")
    if nvcc is None or cmake is None:
        pytest.skip("the proof is built only where nvcc and CMake are installed")
    env = dict(os.environ, TMPDIR=str(tmp_path), GPU_PROOF_BUILD=str(tmp_path / "build"))
    proc = subprocess.run([str(REPO_ROOT / "tools/gpu_proof.sh"), "--images", "512",
                           "--sessions", "1,2"], capture_output=True, text=True, env=env,
                          timeout=1800)
    report = json.loads(proc.stdout)
    if report["gpu"]:
        assert proc.returncode == 0, report
        assert report["within_2_levels"] is True
        assert [r["sessions"] for r in report["runs"]] == [1, 2]
    else:
        assert proc.returncode == 3, proc.stdout + proc.stderr[-2000:]
        assert report["path"] in ("cpu", "cpu_decode_gpu_warp")
        assert report["reason"]
