"""The fatbin the GPU kernels ship in: which GPUs it has code for, and which drivers can load it.

Built by cc/gpu/CMakeLists.txt's `tfg_fatbin` target (the flags the product uses), then taken apart
here: the fatbin container's entries (machine code per architecture, PTX), each cubin's ELF header
read by `readelf` (its CUDA ELF ABI version) and its e_flags (its architecture), the PTX entry's ISA
version. The driver these need must be the one cc/gpu/gpu_runtime.h checks for
(kKernelsMinDriverVersion) and the one docs promise. No cuobjdump here (nvcc 13 alone), hence the
small reader of the container's documented-by-use layout."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import struct
import subprocess

import pytest

from gpu_testing import find_nvcc

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

# Machine code for Turing..Hopper, PTX for newer GPUs (cc/gpu/CMakeLists.txt).
CUBIN_ARCHS = {75, 80, 86, 89, 90}
PTX_ARCHS = {90}
# The first CUDA version (driver API version, cuDriverGetVersion) that loads each: PTX ISA 9.0
# and the CUDA ELF ABI version 8 come with CUDA 13.0 (CUDA 12 writes PTX 8.x and ABI 7).
PTX_ISA_DRIVER = {(9, 0): 13000}
ELF_ABI_DRIVER = {8: 13000}


@pytest.fixture(scope="module")
def fatbin(tmp_path_factory) -> bytes:
    nvcc, cmake = find_nvcc(), shutil.which("cmake")
    if nvcc is None or cmake is None or shutil.which("readelf") is None:
        pytest.skip("the fatbin is built only where nvcc and CMake are installed (readelf too)")
    build = tmp_path_factory.mktemp("fatbin_build")
    env = dict(os.environ, TMPDIR=str(build))
    for cmd in ([cmake, "-S", str(REPO_ROOT / "cc" / "gpu"), "-B", str(build)],
                [cmake, "--build", str(build), "--target", "tfg_fatbin"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return (build / "similarity_warp.fatbin").read_bytes()


def entries(data: bytes) -> list[dict]:
    """The fatbin container: a 16-byte header (magic 0xBA55ED50, version, header size, size), then
    entries of a header (kind 1 = PTX, 2 = ELF; header size; payload size; version; arch) and
    their payload."""
    magic, _, header_size, size = struct.unpack_from("<IHHQ", data, 0)
    assert magic == 0xBA55ED50, hex(magic)
    found, offset = [], header_size
    while offset < header_size + size:
        kind, _, entry_header, payload_size = struct.unpack_from("<HHIQ", data, offset)
        minor, major, arch = struct.unpack_from("<HHI", data, offset + 24)
        found.append({"kind": {1: "ptx", 2: "elf"}[kind], "arch": arch, "version": (major, minor),
                      "payload": data[offset + entry_header:offset + entry_header + payload_size]})
        offset += entry_header + payload_size
    return found


def min_driver_promised() -> int:
    header = (REPO_ROOT / "cc/gpu/gpu_runtime.h").read_text()
    return int(re.search(r"kKernelsMinDriverVersion = (\d+);", header).group(1))


def test_code_for_every_promised_architecture(fatbin):
    found = entries(fatbin)
    assert {e["arch"] for e in found if e["kind"] == "elf"} == CUBIN_ARCHS
    assert {e["arch"] for e in found if e["kind"] == "ptx"} == PTX_ARCHS


def test_cubins_are_what_their_entries_say(fatbin, tmp_path):
    for entry in entries(fatbin):
        if entry["kind"] != "elf":
            continue
        elf = entry["payload"]
        assert elf[:4] == b"\x7fELF"
        e_flags = struct.unpack_from("<I", elf, 48)[0]  # 64-bit ELF header
        assert (e_flags >> 8) & 0xFF == entry["arch"], hex(e_flags)


def test_the_driver_needed_is_the_one_checked_at_run_time(fatbin, tmp_path):
    needed = []
    for i, entry in enumerate(entries(fatbin)):
        if entry["kind"] == "ptx":
            assert entry["version"] in PTX_ISA_DRIVER, (
                f"PTX ISA {entry['version']}: add the CUDA version that loads it to the table")
            needed.append(PTX_ISA_DRIVER[entry["version"]])
            continue
        path = tmp_path / f"entry{i}.cubin"
        path.write_bytes(entry["payload"])
        header = subprocess.run(["readelf", "-h", str(path)], capture_output=True, text=True,
                                check=True).stdout
        assert "NVIDIA CUDA architecture" in header
        abi = int(re.search(r"ABI Version:\s+(\d+)", header).group(1))
        assert abi in ELF_ABI_DRIVER, f"CUDA ELF ABI {abi}: add the CUDA version that loads it"
        needed.append(ELF_ABI_DRIVER[abi])
    # The run-time check (and the R580 the docs and errors name) matches what the fatbin needs:
    # a lower value would let too old a driver fail at cuModuleLoadData instead of falling back.
    assert max(needed) == min_driver_promised() == 13000
