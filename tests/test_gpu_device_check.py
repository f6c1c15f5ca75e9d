"""The GPU device check (tools/gpu_device_check.sh, cc/gpu/testing), so it cannot rot between GPU draws.

The dry run is the same script on this machine: CMake builds the device check against the host
stand-in of the driver (cc/gpu/testing/check_driver_host.cc, the kernels' own source run on the CPU,
no NVDEC), and every phase must write valid JSON the moment it ends, report NVDEC's absence as a
result, and keep within what the device tool gives back (8 files, 16 MiB each, two folders deep) and
its time (the phases' timeouts add up to at most 9 minutes). The CPU reference outputs carried in
cc/gpu/testing/data must still be what the CPU path makes today."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO_ROOT / "tools" / "gpu_device_check.sh"
DATA = REPO_ROOT / "cc" / "gpu" / "testing" / "data"
PHASE_FILES = ["env.json", "logs.txt", "runtime.json", "warp.json", "nvdec.json",
               "throughput.json", "memcheck.json", "extra.json"]
PHASES = ("env", "build", "runtime", "warp", "nvdec", "throughput", "profile", "situations",
          "memcheck", "jpeg", "nvjpeg")
EXTRA = ("profile", "situations", "jpeg", "nvjpeg")  # extra.json's keys
NINE_MINUTES = 540
MIB = 1 << 20


def needs_build_tools() -> None:
    missing = [t for t in ("cmake", "g++") if shutil.which(t) is None]
    if not (shutil.which("ninja") or shutil.which("make")):
        missing.append("ninja or make")
    if missing:
        pytest.skip(f"the device check is built with CMake; missing here: {', '.join(missing)}")


def strict_json(text: str) -> dict:
    """json.loads that refuses NaN and Infinity (not JSON: the device check writes null)."""
    def refuse(token: str):
        raise ValueError(f"{token} is not JSON")
    return json.loads(text, parse_constant=refuse)


def run_script(out: pathlib.Path, build: pathlib.Path, env_extra: dict | None = None,
               timeout: int = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, GPU_CHECK_BUILD=str(build), TMPDIR=str(build.parent))
    env.update(env_extra or {})
    return subprocess.run([str(SCRIPT), "--dry-run", str(out)], capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, pathlib.Path]:
    needs_build_tools()
    root = tmp_path_factory.mktemp("device_check")
    out = root / "out"
    proc = run_script(out, root / "build")
    return proc, out


def test_dry_run_passes_and_ends_with_its_summary(dry_run):
    proc, _ = dry_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # The device tool returns the last 12,000 characters: the whole output fits, summary last.
    assert len(proc.stdout) + len(proc.stderr) < 6000
    tail = proc.stdout.strip().splitlines()
    assert tail[-1] == "==== all phases passed"
    summary = proc.stdout[proc.stdout.index("==== summary"):]
    for phase in PHASES:
        assert re.search(rf"^{phase} +ok ", summary, re.M), summary


def test_every_phase_writes_valid_json(dry_run):
    _, out = dry_run
    assert sorted(p.name for p in out.iterdir()) == sorted(PHASE_FILES)
    reports = {p.stem: strict_json(p.read_text()) for p in out.glob("*.json")}
    assert set(reports) == {"env", "runtime", "warp", "nvdec", "throughput", "memcheck", "extra"}
    assert set(reports["extra"]) == set(EXTRA)
    reports.update(reports.pop("extra"))
    for phase in ("runtime", "warp", "nvdec", "throughput", "profile", "situations"):
        assert reports[phase]["phase"] == phase
        assert reports[phase]["gpu"] is False  # no GPU was used: the host stand-in ran
        assert reports[phase]["driver"] == "host stand-in (dry run)"


def test_no_nvdec_is_reported_as_a_result(dry_run):
    _, out = dry_run
    extra = strict_json((out / "extra.json").read_text())
    for phase in ("runtime", "warp", "nvdec", "throughput", "profile", "situations"):
        report = extra[phase] if phase in extra else strict_json((out / f"{phase}.json").read_text())
        assert report["nvdec"].startswith("unavailable: dry run"), report
        assert "error" not in report, report


def test_runtime_measures_the_decoders_memory_where_it_can(dry_run):
    """docs/gpu.md, "GPU memory": the runtime phase reads device memory with cuMemGetInfo (a
    64 MiB allocation must read as 64 MiB) and, where there is NVDEC, one decode session's
    footprint; the dry run has none, and says so."""
    _, out = dry_run
    memory = strict_json((out / "runtime.json").read_text())["decoder_memory"]
    assert memory["a_64_mib_alloc_reads_mib"] == 64 and memory["device_total_mib"] > 0
    assert memory["decoders"] == "not measured: no NVDEC" and "error" not in memory


def test_the_warp_kernels_are_checked_without_nvdec(dry_run):
    """RGB, clips and the fused NV12 kernel, uint8 and float, both layouts, on the shipped
    launchers, against the CPU path: within 2 levels (the stand-in runs the kernels' source)."""
    _, out = dry_run
    warp = strict_json((out / "warp.json").read_text())
    assert warp["within_2_levels"] is True
    names = [c["check"] for c in warp["checks"]]
    for needed in ("rgb NHWC 3ch", "rgb NCHW 1ch", "rgb NHWC 4ch", "clips NHWC", "clips NCHW",
                   "nv12 fused float NHWC bilinear", "nv12 fused uint8 NCHW nearest"):
        assert any(n.startswith(needed) for n in names), (needed, names)
    for check in warp["checks"]:
        assert check["max_abs_diff_levels"] <= 1 and "error" not in check, check
    assert warp["rgb_warp_512_to_224_images_per_s"] > 0
    assert warp["fused_nv12_warp_512_to_224_images_per_s"] > 0


def test_the_jpeg_path_is_checked_on_the_fake_nvjpeg(dry_run):
    """The nvjpeg phase on the dry run: the fake nvJPEG (real JPEG bytes decoded by TurboJPEG) and
    the fused kernel's source on the host stand-in; every picture kind of data/jpeg_ref within 2
    levels of the CPU fused path's stored outputs; each rate cell ran without a frame error."""
    _, out = dry_run
    nv = extra_of(out)["nvjpeg"]
    assert nv["gpu"] is False and nv["library"] == "fake nvJPEG (dry run)", nv
    assert nv["within_2_levels"] is True and nv["max_abs_diff_levels"] <= 2
    assert {c["kind"] for c in nv["correctness"]} == {"420", "422", "444", "gray", "progressive420"}
    assert all(c["status"] == "ok" for c in nv["correctness"]), nv["correctness"]
    assert {(r["set"], r["clip"]) for r in nv["rates"]} == {("gulp_320x240", 8),
                                                            ("imagenet_like", 1)}
    for r in nv["rates"]:
        assert r["calls"] >= 1 and r["frames_per_s"] > 0 and r["frame_errors"] == [], r
    assert any("progressive" in r for r in nv["reasons_logged"]), nv["reasons_logged"]


def test_outputs_fit_what_the_device_tool_returns(dry_run):
    _, out = dry_run
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8
    for p in files:
        assert p.stat().st_size <= 16 * MIB
        assert len(p.relative_to(out).parts) <= 3  # at most two folders down
        assert re.fullmatch(r"[A-Za-z0-9._-]+", p.name), p.name


def test_phase_timeouts_add_up_to_nine_minutes_at_most(dry_run):
    _, out = dry_run
    env = strict_json((out / "env.json").read_text())
    timeouts = env["phase_timeouts_s"]
    assert set(timeouts) == set(PHASES)
    assert sum(timeouts.values()) == env["total_timeout_s"] <= NINE_MINUTES
    # The script's own numbers, as written (what `timeout` is given).
    declared = re.search(r"^T_ENV=.*$", SCRIPT.read_text(), re.M).group(0)
    assert sum(int(v) for v in re.findall(r"=(\d+)", declared)) <= NINE_MINUTES


def test_a_failed_phase_is_named_by_the_exit_status_and_loses_nothing(tmp_path):
    """A build that fails (a cmake that exits 1 first on PATH): exit 11 names `build`, every later
    phase still writes its JSON, and the env phase's file is there."""
    needs_build_tools()
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    cmake = fake_bin / "cmake"
    cmake.write_text("#!/bin/sh\necho 'cmake: broken on purpose' >&2\nexit 1\n")
    cmake.chmod(cmake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "out"
    proc = run_script(out, tmp_path / "build",
                      {"PATH": f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}"}, timeout=120)
    assert proc.returncode == 11, proc.stdout
    assert "first failed phase: build (exit 11)" in proc.stdout
    assert "broken on purpose" in (out / "logs.txt").read_text()
    for phase in ("env", "runtime", "warp", "nvdec", "throughput", "memcheck"):
        strict_json((out / f"{phase}.json").read_text())
    extra = strict_json((out / "extra.json").read_text())
    assert extra["profile"]["error"] == extra["situations"]["error"] == "not built"
    assert extra["nvjpeg"]["error"] == "not built"
    assert extra["jpeg"]["phase"] == "jpeg"  # needs no build


def test_the_tree_the_device_tool_sends_is_under_64_mib():
    """The device tool sends tracked and untracked-not-ignored files (64 MiB at most); the device
    check needs nothing carried (it builds there)."""
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs the git checkout to list what the device tool sends (not under Bazel)")
    listed = subprocess.run(["git", "-C", str(REPO_ROOT), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    total = 0
    for name in filter(None, listed.split(b"\0")):
        path = REPO_ROOT / os.fsdecode(name)
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    assert total < 64 * MIB, f"{total / MIB:.1f} MiB"


def test_no_gpu_code_uploads_with_a_synchronous_pageable_copy():
    """A pageable cuMemcpyHtoD returns once staged and runs on the NULL stream, which a
    CU_STREAM_NON_BLOCKING stream (TensorFlow's, the device check's) does not wait for: uploads go
    on the kernels' stream (cuMemcpyHtoDAsync; the ops use TensorFlow's device context copies)."""
    sync_upload = re.compile(r"\bcuMemcpyHtoD(_v2)?\s*[(=;,]")
    offenders = [str(p.relative_to(REPO_ROOT)) for p in sorted((REPO_ROOT / "cc" / "gpu").rglob("*"))
                 if p.suffix in (".h", ".cc", ".cu") and sync_upload.search(p.read_text())]
    offenders += [str(p.relative_to(REPO_ROOT)) for p in sorted((REPO_ROOT / "tf_gulp" / "ops").rglob("*gpu*"))
                  if sync_upload.search(p.read_text())]
    assert offenders == []
    # The device check's driver table offers only the ordered copy.
    check_driver = (REPO_ROOT / "cc/gpu/testing/check_driver.h").read_text()
    assert "cuMemcpyHtoDAsync" in check_driver and not sync_upload.search(check_driver)


def samples() -> list[tuple[str, int, int]]:
    rows = (DATA / "index.txt").read_text().split("\n")
    return [(f, int(w), int(h)) for f, w, h in (r.split() for r in rows if r)]


def test_data_is_complete_and_small():
    listed = samples()
    assert len(listed) >= 15 and sum(1 for f, w, h in listed if (w, h) == (512, 512)) >= 12
    n = len(listed)
    assert (DATA / "matrices.f32").stat().st_size == n * 9 * 4
    assert (DATA / "reference.f16").stat().st_size == n * 224 * 224 * 3 * 2
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert total < 16 * MIB, total
    index = json.loads((DATA / "index.json").read_text())
    assert [s["file"] for s in index["samples"]] == [f for f, _, _ in listed]


def test_reference_outputs_are_what_the_cpu_path_makes_today(tmp_path):
    have_avcodec = any(pathlib.Path(d, "libavcodec/avcodec.h").exists()
                       for d in ("/usr/include", "/usr/include/x86_64-linux-gnu"))
    if shutil.which("g++") is None or not have_avcodec:
        pytest.skip("needs g++ and libavcodec's headers (tools/apt-packages.txt)")
    tool = tmp_path / "make_reference"
    subprocess.run(["g++", "-std=c++17", "-O2", "-I", str(REPO_ROOT),
                    str(REPO_ROOT / "cc/gpu/testing/make_reference.cc"),
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


def test_bench_gpu_check_keeps_every_round(dry_run, tmp_path):
    """bench/bench_gpu_check.py (what docs/gpu.md's figures come from): the device check once, then
    its timed phases again on the same build; every round kept, the commit the caller names
    recorded beside git's own answer."""
    _, out = dry_run
    report_path = tmp_path / "gpu_check.json"
    env = dict(os.environ, GPU_CHECK_BUILD=str(out.parent / "build"))
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "bench_gpu_check.py"), "--dry-run", "--rounds",
         "3", "--commit", "abc1234", "--clean-tree", "--output", str(report_path)],
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = strict_json(report_path.read_text())
    assert report["device_check"]["exit_status"] == 0
    assert report["device_check"]["summary"][-1] == "==== all phases passed"
    assert set(report["device_check"]["phases"]) == {
        "env", "runtime", "warp", "nvdec", "throughput", "memcheck", *EXTRA}
    assert all(report["device_check"]["phases"][p] for p in EXTRA)
    assert report["machine"]["tf_gulp_commit"] == "abc1234"
    assert report["machine"]["clean_tree"] is True and "git_says" in report["machine"]
    warps = report["runs"]["warp"]
    assert len(warps) == 3 and all(w["within_2_levels"] is True for w in warps)
    rates = sorted(w["rgb_warp_512_to_224_images_per_s"] for w in warps)
    assert report["medians"]["warp"]["rgb_warp_512_to_224_images_per_s"] == rates[1]
    assert len(report["runs"]["throughput"]) == 3
    assert all(t["nvdec"].startswith("unavailable") for t in report["runs"]["throughput"])


def test_bench_gpu_check_medians_per_cell():
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    import bench_gpu_check

    def round_(a, b):
        return {"runs": [{"samples": "512x512", "sessions": 7, "decode_images_per_s": a,
                          "decode_and_warp_images_per_s": b}]}
    cells = bench_gpu_check.median_throughput([round_(1, 10), round_(5, 30), round_(3, 20),
                                               {"error": "timed out"}])
    assert cells == [{"samples": "512x512", "sessions": 7, "rounds": 3,
                      "decode_images_per_s": 3, "decode_and_warp_images_per_s": 20}]


# ---------------------------------------------------------------- issue 44: the new phases

def extra_of(out: pathlib.Path) -> dict:
    return strict_json((out / "extra.json").read_text())


def ffprobe_coded_size(path: pathlib.Path) -> tuple[int, int]:
    got = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=coded_width,coded_height",
                          "-of", "csv=p=0", str(path)], capture_output=True, text=True, check=True)
    w, h = got.stdout.strip().split(",")[:2]
    return int(w), int(h)


def test_throughput_sizes_decoders_from_coded_sizes_and_warms_every_one(dry_run):
    """Issue 44 item 9: the decoders' maximum comes from the pictures' coded sizes (the SPS's:
    tall600x700 is coded 1024x1024) and every session decodes every coded size before the clock,
    so the timed loops create and destroy no decoder. On the dry run the same runs go to the fake
    NVDEC: with the old sizing (display sizes, only the first picture warmed) its dataset_mix runs
    create and destroy decoders inside the clock."""
    _, out = dry_run
    report = strict_json((out / "throughput.json").read_text())
    assert report["coded_sizes"]["tall600x700.hevc"] == [1024, 1024]
    assert report["coded_sizes"]["landscape300x200.hevc"] == [512, 512]
    if shutil.which("ffprobe"):
        for name, size in report["coded_sizes"].items():
            assert list(ffprobe_coded_size(DATA / name)) == size, name
    fake = report["fake_nvdec"]
    assert fake["problems"] == []
    runs = fake["runs"]
    cells = {(r["samples"], r["sessions"]) for r in runs}
    assert cells == {(s, n) for s in ("512x512", "dataset_mix", "imagenet_like")
                     for n in (1, 2, 4, 7, 14)}
    for r in runs:
        assert "error" not in r and "skipped" not in r, r
        assert r["timed_decoder_creates"] == 0 and r["timed_decoder_destroys"] == 0, r
        assert r["timed_reconfigures_refused"] == 0, r
        assert r["decode_second_half_images_per_s"] > 0
        # Every picture is mapped once inside the clock: the counts cover the timed loop exactly.
        assert r["timed_pool_calls"]["map"]["calls"] == report["images_per_run"]
    # The mixes change size inside the loop: reconfigures there, none for one size.
    assert all(r["timed_pool_calls"]["reconfigure"]["calls"] > 0 for r in runs
               if r["samples"] != "512x512")
    assert all(r["timed_pool_calls"]["reconfigure"]["calls"] == 0 for r in runs
               if r["samples"] == "512x512")


def test_throughput_times_8192_images_a_run_by_default(dry_run):
    _, out = dry_run
    exe = out.parent / "build" / "device_check_dry"
    proc = subprocess.run([str(exe), "throughput", "--data", str(DATA), "--sessions", "7"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = strict_json(proc.stdout)
    assert report["images_per_run"] == 8192
    assert all(r["timed_pool_calls"]["map"]["calls"] == 8192 and r["timed_decoder_creates"] == 0
               for r in report["fake_nvdec"]["runs"])


def test_profile_counts_the_pools_calls_per_set_and_session_count(dry_run):
    """Issue 44 item 10: at 1, 7 and 14 sessions, on the mix, 512x512 and 1024x1024 at equal bytes
    and one size at three rates (and the ImageNet-like set), the pool's per-call counts and times
    (fake NVDEC on the dry run: the counts are the pool's own)."""
    _, out = dry_run
    prof = extra_of(out)["profile"]
    assert prof["problems"] == [] and prof["source"].startswith("fake NVDEC")
    sets = prof["sets"]
    assert set(sets) == {"dataset_mix", "equal_bytes_512", "equal_bytes_1024", "bitrate_crf16",
                         "bitrate_crf26", "bitrate_crf36", "imagenet_like"}
    assert all(s["pictures"] >= 8 for s in sets.values())
    small, large = sets["equal_bytes_512"]["mean_bytes"], sets["equal_bytes_1024"]["mean_bytes"]
    assert abs(small - large) < 0.1 * small  # the same bytes per picture at both sizes
    assert (sets["bitrate_crf16"]["mean_bytes"] > sets["bitrate_crf26"]["mean_bytes"]
            > sets["bitrate_crf36"]["mean_bytes"])
    names = {"create", "destroy", "reconfigure", "reconfigure_refused", "drain",
             "end_of_stream_flush", "map", "session_wait"}
    assert {(r["samples"], r["sessions"]) for r in prof["runs"]} == {
        (s, n) for s in sets for n in (1, 7, 14)}
    for r in prof["runs"]:
        assert "error" not in r, r
        for part in ("warmup_pool_calls", "timed_pool_calls", "second_half_pool_calls"):
            assert set(r[part]) == names, r[part]
        assert r["timed_pool_calls"]["map"]["calls"] == r["images"]
        assert r["timed_pool_calls"]["session_wait"]["calls"] == r["images"]
        assert r["warmup_pool_calls"]["create"]["calls"] == r["sessions"]  # one per session
        assert r["timed_pool_calls"]["create"]["calls"] == 0
    mix = [r for r in prof["runs"] if r["samples"] == "dataset_mix"]
    assert all(r["timed_pool_calls"]["reconfigure"]["calls"] > 0 for r in mix)


def test_profile_and_imagenet_sets_are_what_the_index_says():
    """Issue 44 item 11: the ImageNet-like mix (short sides 200-800, aspects 3:4 to 16:9, a few
    dozen pictures) and the profile's sets, each file's size as listed."""
    rows = [r.split() for r in (DATA / "sets" / "index.txt").read_text().splitlines() if r]
    by_set: dict[str, list] = {}
    for name, file, w, h in rows:
        by_set.setdefault(name, []).append((file, int(w), int(h)))
    imagenet = by_set["imagenet_like"]
    assert 24 <= len(imagenet) <= 64
    assert all(200 <= min(w, h) <= 800 and max(w, h) / min(w, h) <= 16 / 9 + 0.01
               for _, w, h in imagenet)
    assert any(w < h for _, w, h in imagenet) and any(w > h for _, w, h in imagenet)
    assert len({min(w, h) for _, w, h in imagenet}) > 10  # many sizes, not a few
    assert all((w, h) == (512, 512) for n in ("equal_bytes_512", "bitrate_crf16")
               for _, w, h in by_set[n])
    assert all((w, h) == (1024, 1024) for _, w, h in by_set["equal_bytes_1024"])
    if shutil.which("ffprobe"):
        for file, w, h in imagenet[:6] + by_set["equal_bytes_1024"][:2]:
            got = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width,height",
                                  "-of", "csv=p=0", str(DATA / "sets" / file)],
                                 capture_output=True, text=True, check=True).stdout.strip()
            assert got == f"{w},{h}", file
    jpegs = [r.split() for r in (DATA / "jpeg" / "index.txt").read_text().splitlines() if r]
    assert {r[0] for r in jpegs} == {"gulp_320x240", "imagenet_like"}
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import gpu_jpeg_ceiling
    for name, file, w, h in jpegs:
        assert gpu_jpeg_ceiling.jpeg_size((DATA / "jpeg" / file).read_bytes()) == (int(h), int(w))


def test_jpeg_ceiling_is_skipped_with_its_reason_and_its_logic_still_runs(dry_run):
    """Issue 44 item 12: without torchvision on CUDA the GPU rates are skipped with the reason,
    and the same batches (64 and 256, both sets) run through a CPU decoder."""
    _, out = dry_run
    jpeg = extra_of(out)["jpeg"]
    assert jpeg["gpu_decode"].startswith("skipped: needs torchvision with CUDA")
    assert "gpu_runs" not in jpeg
    cells = {(r["samples"], r["batch"]) for r in jpeg["cpu_runs"]}
    assert cells == {(s, b) for s in ("gulp_320x240", "imagenet_like") for b in (64, 256)}
    assert all(r["wrong_shapes"] == [] and r["images_per_s"] > 0 for r in jpeg["cpu_runs"])


def test_jpeg_ceiling_fails_on_a_wrong_shape(monkeypatch, capsys):
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import gpu_jpeg_ceiling
    swapped = lambda batch: [gpu_jpeg_ceiling.jpeg_size(b)[::-1] for b in batch]  # noqa: E731
    monkeypatch.setattr(gpu_jpeg_ceiling, "gpu_decoder", lambda: (swapped, "test decoder"))
    assert gpu_jpeg_ceiling.main(["--small", "--batches", "4"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["gpu_runs"][0]["wrong_shapes"] and "cpu_runs" not in report


def test_situations_tensorflow_creates_give_the_expected_results(dry_run):
    """Issue 44 item 13, on the fake NVDEC: work pending on the caller's stream (a pool that
    unmaps without waiting for the caller's event breaks the fake's rules here: 26 broken), a
    second context (its own pool), a thread with another context current."""
    _, out = dry_run
    sit = extra_of(out)["situations"]
    assert sit["all_as_expected"] is True
    got = {s["situation"]: s for s in sit["situations"]}
    assert set(got) == {"map_behind_host_function", "second_context", "other_context_current"}
    assert all(s["ok"] for s in got.values()), got
    assert got["second_context"]["detail"] == "pools 2"
    waits = int(re.search(r"waits on the callers' events: (\d+)",
                          got["map_behind_host_function"]["detail"]).group(1))
    assert waits > 0


def test_figures_render_the_new_phases(dry_run, tmp_path, monkeypatch):
    """bench/figures.py's gpu_check block shows the ImageNet-like set, the profile, the situations
    and the JPEG ceiling when the results hold them (and nothing new for results without)."""
    _, out = dry_run
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    import figures
    report = json.loads((figures.RESULTS / "gpu_check.json").read_text())
    old = figures.render("gpu_check")
    extra = extra_of(out)
    report["device_check"]["phases"].update(extra)
    report["medians"]["throughput"].append(
        {"samples": "imagenet_like", "sessions": 7, "rounds": 1, "decode_images_per_s": 123.0,
         "decode_and_warp_images_per_s": 45.0, "decode_and_warp_second_half_images_per_s": 67.0})
    (tmp_path / "gpu_check.json").write_text(json.dumps(report))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    text = figures.render("gpu_check")
    assert text.startswith(old.rstrip("\n").rsplit("\n", 1)[0])
    assert "| 7 | 123 | 45 | 67 |" in text
    assert "| dataset_mix | 14 |" in text and "session_wait" in text
    assert "| map_behind_host_function |" in text
    assert "skipped: needs torchvision with CUDA" in text
