"""Which GPU path a machine gets (cc/gpu/gpu_runtime.h), checked with stand-in driver libraries.

The probe (cc/gpu/gpu_runtime_probe.cc) loads libcuda.so.1 and libnvcuvid.so.1 through ffnvcodec's
loader, as the product does. Here stand-ins built from ffnvcodec's own symbol lists sit on
LD_LIBRARY_PATH: no driver, too old a driver, no NVDEC library, a library missing a function, and
everything present. Each must give the right path and a message that says what is missing and how
to get it. Needs g++ and ffnvcodec's headers (Debian: libffmpeg-nvenc-dev), not a GPU."""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
LOADER_H = pathlib.Path("/usr/include/ffnvcodec/dynlink_loader.h")

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or not LOADER_H.exists(),
    reason="needs g++ and ffnvcodec's headers (Debian: libffmpeg-nvenc-dev, tools/apt-packages.txt)")


def required_symbols(function: str) -> list[str]:
    """The symbols ffnvcodec's `function` (cuda_load_functions, ...) loads, from its header."""
    text = LOADER_H.read_text()
    body = re.search(r"static inline int %s\(.*?\n}\n" % function, text, re.S).group(0)
    return sorted(set(re.findall(r'LOAD_SYMBOL(?:_OPT)?\([^"]*"(\w+)"\)', body)))


def stand_in(directory: pathlib.Path, soname: str, symbols: list[str], driver_version: int = 0,
             leave_out: str = "") -> None:
    """A shared library exporting `symbols` (all returning CUDA_SUCCESS)."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in symbols:
        if name == leave_out:
            continue
        if name == "cuDriverGetVersion":
            lines.append(f"int {name}(int* v) {{ *v = {driver_version}; return 0; }}")
        else:
            lines.append(f"int {name}(void) {{ return 0; }}")
    source = directory / f"{soname}.c"
    source.write_text("\n".join(lines) + "\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(directory / soname), str(source)],
                   check=True)


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("probe") / "gpu_runtime_probe"
    subprocess.run(["g++", "-std=c++17", "-O1", "-I", str(REPO_ROOT),
                    str(REPO_ROOT / "cc/gpu/gpu_runtime.cc"),
                    str(REPO_ROOT / "cc/gpu/gpu_runtime_probe.cc"), "-o", str(out), "-ldl"],
                   check=True, timeout=600)
    return out


CUDA_SYMBOLS = required_symbols("cuda_load_functions") + ["cuDriverGetVersion", "cuCtxSynchronize",
                                                           "cuStreamGetCtx"]
CUVID_SYMBOLS = required_symbols("cuvid_load_functions")


def run_probe(probe: pathlib.Path, library_dir: pathlib.Path) -> dict:
    env = dict(os.environ, LD_LIBRARY_PATH=str(library_dir))
    proc = subprocess.run([str(probe)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def system_has(library: str) -> bool:
    try:
        ctypes.CDLL(library)
        return True
    except OSError:
        return False


def expect_path(report, path, *phrases):
    """The probe chose `path` and its message says each of `phrases`."""
    assert report["path"] == path, report
    for phrase in phrases:
        assert phrase in report["message"], report["message"]


def test_symbol_lists_come_from_the_header():
    assert "cuMemAlloc_v2" in CUDA_SYMBOLS and "cuInit" in CUDA_SYMBOLS
    assert "cuvidMapVideoFrame64" in CUVID_SYMBOLS and "cuvidCreateDecoder" in CUVID_SYMBOLS


def test_no_driver_means_the_cpu_path(probe, tmp_path):
    if system_has("libcuda.so.1"):
        pytest.skip("this machine has an NVIDIA driver: 'no driver' cannot be staged here")
    report = run_probe(probe, tmp_path / "empty")
    assert report["ok"] is False
    expect_path(report, "cpu", "using the CPU path", "Cannot load libcuda.so.1",
                "install the NVIDIA driver (R580 or newer)")


def test_too_old_a_driver_means_the_cpu_path(probe, tmp_path):
    stand_in(tmp_path, "libcuda.so.1", CUDA_SYMBOLS, driver_version=12080)
    stand_in(tmp_path, "libnvcuvid.so.1", CUVID_SYMBOLS)
    report = run_probe(probe, tmp_path)
    assert report["driver_version"] == 12080
    expect_path(report, "cpu", "the NVIDIA driver supports CUDA 12.8, the GPU kernels need "
                "CUDA 13.0 (driver R580 or newer)")


def test_no_nvdec_library_means_cpu_decoding_and_gpu_warp(probe, tmp_path):
    if system_has("libnvcuvid.so.1"):
        pytest.skip("this machine has libnvcuvid.so.1: its absence cannot be staged here")
    stand_in(tmp_path, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000)
    report = run_probe(probe, tmp_path)
    assert report["ok"] is False
    expect_path(report, "cpu_decode_gpu_warp", "decoding on the CPU and warping on the GPU",
                "Cannot load libnvcuvid.so.1", "NVIDIA_DRIVER_CAPABILITIES=compute,utility,video")


def test_an_nvdec_library_missing_a_function_is_named(probe, tmp_path):
    stand_in(tmp_path, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000)
    stand_in(tmp_path, "libnvcuvid.so.1", CUVID_SYMBOLS, leave_out="cuvidMapVideoFrame64")
    report = run_probe(probe, tmp_path)
    expect_path(report, "cpu_decode_gpu_warp", "Cannot load cuvidMapVideoFrame64")


def test_a_driver_missing_a_function_is_named(probe, tmp_path):
    stand_in(tmp_path, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000,
             leave_out="cuMemAlloc_v2")
    report = run_probe(probe, tmp_path)
    expect_path(report, "cpu", "Cannot load cuMemAlloc_v2")


def test_everything_present_means_nvdec_and_gpu_warp(probe, tmp_path):
    stand_in(tmp_path, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000)
    stand_in(tmp_path, "libnvcuvid.so.1", CUVID_SYMBOLS)
    report = run_probe(probe, tmp_path)
    assert report == {"path": "nvdec_gpu_warp", "driver_version": 13000, "ok": True,
                      "message": ""}


def op_library_reason(library_dir: pathlib.Path) -> str:
    """What the op library answers in a process whose loader path is `library_dir`: the question
    decode_hevc's and decode_hevc_warped's GPU kernels ask before decoding (NvdecRgbDecoder::Get,
    one decoder object and pool per GPU for both): "" = NVDEC, else why they fall back to the CPU."""
    code = ("from tf_gulp.ops.bzna.hevc_ops import nvdec_unavailable_reason as r; "
            "import sys; sys.stdout.write('REASON:' + r())")
    # The tf_gulp beside this file (under Bazel: the runfiles' one, with the built op library),
    # not REPO_ROOT's, which follows the links back to the source tree.
    from ingest_testing import REPO_ROOT as TESTED_ROOT, cli_env

    env = dict(cli_env(), LD_LIBRARY_PATH=str(library_dir), TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, cwd=str(TESTED_ROOT))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split("REASON:", 1)[1]


def test_the_op_librarys_gpu_decode_kernels_fall_back_with_the_reason(tmp_path):
    """The fallbacks of the GPU decode kernels (decode_hevc: CPU decode + copy; decode_hevc_warped:
    its CPU kernel's decode + fused warp + copy) are taken on exactly this answer."""
    if system_has("libcuda.so.1") or system_has("libnvcuvid.so.1"):
        pytest.skip("this machine has NVIDIA driver libraries: their absence cannot be staged")
    reason = op_library_reason(tmp_path / "empty")
    if "built without nvcc" in reason:
        pytest.skip("this op library holds no GPU kernels (built without nvcc): " + reason)
    assert "Cannot load libcuda.so.1" in reason and "R580" in reason
    old = tmp_path / "old"
    stand_in(old, "libcuda.so.1", CUDA_SYMBOLS, driver_version=12080)
    stand_in(old, "libnvcuvid.so.1", CUVID_SYMBOLS)
    assert "driver R580 or newer" in op_library_reason(old)
    no_video = tmp_path / "no_video"
    stand_in(no_video, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000)
    reason = op_library_reason(no_video)
    assert "Cannot load libnvcuvid.so.1" in reason
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility,video" in reason
    everything = tmp_path / "everything"
    stand_in(everything, "libcuda.so.1", CUDA_SYMBOLS, driver_version=13000)
    stand_in(everything, "libnvcuvid.so.1", CUVID_SYMBOLS)
    assert op_library_reason(everything) == ""
