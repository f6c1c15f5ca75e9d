"""tools/check_skips.py, which makes .ci/run fail on a skip outside the allowlist, against the
reports real pytest and GoogleTest runs write (as Bazel lays them out under bazel-testlogs)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))

import check_skips  # noqa: E402

PYTEST_FILE = textwrap.dedent("""
    import pytest

    def test_runs():
        pass

    def test_gpu():
        pytest.skip("the GPU code is built only where the CUDA toolkit (nvcc) and CMake are here")

    def test_lazy():
        pytest.skip("could not be bothered")
""")

GTEST_FILE = textwrap.dedent("""
    #include <gtest/gtest.h>
    TEST(Engine, Uring) { GTEST_SKIP() << "io_uring is not available on this machine"; }
    TEST(Engine, Odd) { GTEST_SKIP() << "the moon is full"; }
    TEST(Engine, Runs) { EXPECT_EQ(1, 1); }
""")


def pytest_target(logs: pathlib.Path, name: str, source: str) -> None:
    """Runs a pytest file as tests/pytest_main.py runs it under Bazel (-rfEs, the JUnit report in
    XML_OUTPUT_FILE), leaving test.xml and test.log in logs/name/."""
    folder = logs / name
    folder.mkdir(parents=True)
    test = folder / "test_sample.py"
    test.write_text(source)
    env = dict(os.environ, XML_OUTPUT_FILE=str(folder / "test.xml"))
    env.pop("TESTBRIDGE_TEST_ONLY", None)  # this test's own --test_filter
    env.pop("TEST_TMPDIR", None)  # this test's own: the inner run's basetemp would hold its cwd
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "pytest_main.py"), str(test)],
                          capture_output=True, text=True, env=env, cwd=folder, timeout=300)
    (folder / "test.log").write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    test.unlink()


def gtest_binary(folder: pathlib.Path) -> pathlib.Path:
    src, binary = folder / "t.cc", folder / "t"
    src.write_text(GTEST_FILE)
    subprocess.run(["g++", "-std=c++17", str(src), "-o", str(binary), "-lgtest_main", "-lgtest",
                    "-pthread"], check=True, timeout=300)
    return binary


def gtest_target(logs: pathlib.Path, name: str, binary: pathlib.Path, xml: bool) -> None:
    """Runs a GoogleTest binary as Bazel runs a cc_test (XML_OUTPUT_FILE set, which GoogleTest
    writes its report to), or without a report when `xml` is False."""
    folder = logs / name
    folder.mkdir(parents=True)
    env = dict(os.environ)
    env.pop("XML_OUTPUT_FILE", None)
    env.pop("GTEST_OUTPUT", None)
    if xml:
        env["XML_OUTPUT_FILE"] = str(folder / "test.xml")
    proc = subprocess.run([str(binary)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (folder / "test.log").write_text(proc.stdout + proc.stderr)


def test_finds_every_skip_in_pytest_and_gtest_reports_and_refuses_unlisted_ones(tmp_path):
    logs = tmp_path / "bazel-testlogs"
    pytest_target(logs, "tests/test_sample", PYTEST_FILE)
    binary = gtest_binary(tmp_path)
    gtest_target(logs, "cc/io/xml_test", binary, xml=True)
    gtest_target(logs, "cc/io/log_only_test", binary, xml=False)
    skips, targets = check_skips.find_skips(logs)
    assert targets == 3
    by_target = {}
    for s in skips:
        by_target.setdefault(s.target, []).append(s)
    assert sorted(by_target) == ["cc/io/log_only_test", "cc/io/xml_test", "tests/test_sample"]
    assert all(len(v) == 2 for v in by_target.values())  # the passing tests are not skips
    allowed = {(s.target, check_skips.allowed_by(s.reason) is not None) for s in skips}
    assert allowed == {(t, ok) for t in by_target for ok in (True, False)}
    reasons = " | ".join(s.reason for s in skips)
    assert "could not be bothered" in reasons and "the moon is full" in reasons
    assert "io_uring is not available on this machine" in reasons

    text, ok = check_skips.report(skips, targets)
    assert not ok
    assert text.count("NOT ALLOWED") == 3
    assert "FAILED: 3 test(s) skipped" in text
    for entry in check_skips.ALLOWLIST:  # printed in every run
        assert entry.name in text and entry.why in text

    # The command line: exit 1 here, 0 once the unlisted skips are gone.
    run = lambda: subprocess.run(  # noqa: E731
        [sys.executable, str(REPO_ROOT / "tools" / "check_skips.py"), str(logs)],
        capture_output=True, text=True, timeout=60)
    proc = run()
    assert proc.returncode == 1 and "NOT ALLOWED" in proc.stdout
    for folder in ("tests/test_sample", "cc/io/xml_test", "cc/io/log_only_test"):
        shutil.rmtree(logs / folder)
    pytest_target(logs, "tests/test_clean", PYTEST_FILE.replace(
        'pytest.skip("could not be bothered")', "pass"))
    proc = run()
    assert proc.returncode == 0, proc.stdout
    assert "allowed (needs a GPU)" in proc.stdout and "Skip allowlist" in proc.stdout


def test_no_reports_is_a_failure(tmp_path):
    text, ok = check_skips.report([], 0)
    assert not ok and "no test reports" in text
    (tmp_path / "logs").mkdir()
    assert check_skips.main([str(tmp_path / "logs")]) == 1
    assert check_skips.main([str(tmp_path / "missing")]) == 1


def test_the_allowlist_is_short_and_explained():
    assert len(check_skips.ALLOWLIST) <= 4
    for entry in check_skips.ALLOWLIST:
        assert len(entry.why) > 40, entry.name
    assert check_skips.allowed_by("no io_uring").name == "io_uring blocked by the container"
    assert (check_skips.allowed_by("this CPU has no AVX2: only the portable path runs").name
            == "CPU without AVX2")  # color_transform_test's bit-exact comparison
    assert check_skips.allowed_by("Debian's ffmpeg/ffprobe not installed") is None
    assert check_skips.allowed_by("gulpio2 is the reference implementation") is None


def test_docs_list_the_allowlist():
    text = (REPO_ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    for entry in check_skips.ALLOWLIST:
        assert f"| {entry.name} |" in text, entry.name
