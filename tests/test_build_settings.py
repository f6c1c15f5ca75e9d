"""Build settings are defined once (build_config.bzl, tools/apt-packages.txt), read by the rest.

These tests pin that the readers really read them: setup.py's sources and TensorFlow query, the
Makefile's TensorFlow pin and Debian packages, and the docs that quote the pin.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_build_settings():
    spec = importlib.util.spec_from_file_location(
        "_tf_gulp_build_settings_test", REPO_ROOT / "tools" / "build_settings.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


settings = _load_build_settings()
CONFIG = settings.load_build_config(str(REPO_ROOT))


def test_config_defines_the_shared_settings():
    assert re.fullmatch(r"\d+\.\d+\.\d+", CONFIG["TENSORFLOW_VERSION"])
    assert "tf.sysconfig.get_compile_flags()" in CONFIG["TF_QUERY"]
    for name in ("CORE_SRCS", "CORE_EXCLUDE", "OPS_SRCS", "PYBIND_SRCS", "CORE_COPTS"):
        assert CONFIG[name] and all(isinstance(v, str) for v in CONFIG[name]), name


def test_sources_follow_the_globs():
    sources = settings.library_sources(CONFIG, str(REPO_ROOT))
    core = sources["core"]
    assert "cc/gulp/chunk_index.cc" in core
    assert not [s for s in core if s.endswith("_test.cc")]
    assert not [s for s in core if s.startswith(("cc/gpu/", "cc/fuzz/"))]
    assert "tf_gulp/ops/gulp/gulp_dataset_op.cc" in sources["ops"]
    assert "tf_gulp/pybind/core_module.cc" in sources["pybind"]
    inputs = settings.library_inputs(CONFIG, str(REPO_ROOT))
    assert "cc/util/status.h" in inputs and "tf_gulp/ops/framework/core_status.h" in inputs
    assert set(core) <= set(inputs)


def test_expand_globs_matches_nested_folders_and_excludes(tmp_path):
    for name in ("cc/a.cc", "cc/x/b.cc", "cc/x/b_test.cc", "cc/gpu/k.cc", "cc/x/y/c.cc"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    found = settings.expand_globs(
        ["cc/**/*.cc"], ["cc/**/*_test.cc", "cc/gpu/**"], root=str(tmp_path)
    )
    assert found == ["cc/a.cc", "cc/x/b.cc", "cc/x/y/c.cc"]


def test_apt_packages_strip_comments(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "apt-packages.txt").write_text("# header\na b   # why\n\nc\n")
    assert settings.apt_packages(str(tmp_path)) == ["a", "b", "c"]
    real = settings.apt_packages()
    assert "libturbojpeg0-dev" in real and len(real) == len(set(real))


def test_command_line():
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, str(REPO_ROOT / "tools" / "build_settings.py"), *args],
        capture_output=True, text=True,
    )
    got = run("get", "TENSORFLOW_VERSION")
    assert got.returncode == 0 and got.stdout.strip() == CONFIG["TENSORFLOW_VERSION"]
    missing = run("get", "NO_SUCH_SETTING")
    assert missing.returncode == 1 and "NO_SUCH_SETTING" in missing.stderr
    assert run("bogus").returncode == 2


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_makefile_reads_the_pin_and_the_packages():
    # `make -p -n` prints the variables as make expanded them, without running any rule.
    proc = subprocess.run(
        ["make", "-p", "-n", "-C", str(REPO_ROOT), "--no-print-directory", "FORCE"],
        capture_output=True, text=True, env=dict(os.environ, MAKEFLAGS=""),
    )
    assert proc.returncode == 0, proc.stderr
    variables = {}
    for line in proc.stdout.splitlines():
        match = re.match(r"^(\w+) :?= (.*)$", line)
        if match:
            variables.setdefault(match.group(1), match.group(2))
    version = CONFIG["TENSORFLOW_VERSION"]
    assert variables["TF_REQUIREMENT"] == f"tensorflow-cpu=={version}"
    assert variables["TF_KERAS_REQUIREMENT"] == f"tf-keras=={version}"
    assert variables["APT_PACKAGES"].split() == settings.apt_packages()


def test_docs_quote_the_pin():
    # Docs cannot read build_config.bzl: every TensorFlow version they give as the one to install
    # must be the pin.
    version = CONFIG["TENSORFLOW_VERSION"]
    files = [REPO_ROOT / "README.md", REPO_ROOT / "requirements-dev.txt",
             REPO_ROOT / "pyproject.toml", REPO_ROOT / "setup.py", REPO_ROOT / "Makefile"] + sorted(
                 (REPO_ROOT / "docs").glob("*.md"))
    stale = [
        f"{path.relative_to(REPO_ROOT)}: {m.group(0)}"
        for path in files if path.exists()
        for m in PIN_QUOTES.finditer(path.read_text(encoding="utf-8"))
        if next(v for v in m.groups() if v) != version
    ]
    assert not stale, f"pin is {version} (build_config.bzl), but: {stale}"


# The ways the docs quote the pin (other TensorFlow versions they name, e.g. the older releases the
# wheel was tried with, are not the pin): a requirement, tf-keras (released with TensorFlow's
# version numbers), and a version called the pin.
_V = r"(\d+\.\d+\.\d+)"
PIN_QUOTES = re.compile("|".join([
    r"(?:tensorflow(?:-cpu)?|tf-keras)==" + _V,
    r"tf-keras " + _V,
    _V + r" \(the pin\b",
    r"pinned to [^.\n]*?TensorFlow " + _V,
    r"^\| " + _V + r" \|[^\n]*\bthe pin\b",
]), re.M)


def test_pin_quotes_are_found():
    # Each form above, as the docs write it; another version beside the pin is not a quote.
    text = ("pip install tensorflow-cpu==1.0.0\ntf-keras 1.0.1 (Keras 2)\n"
            "compile against: 1.0.2 (the pin, built), 0.9.0 and 0.8.0\n"
            "The sources are pinned to and tested with TensorFlow 1.0.3 (`build_config.bzl`)\n"
            "| 1.0.4 | yes | the pin, the version |\n| 0.9.0 | yes | older |\n")
    found = [next(v for v in m.groups() if v) for m in PIN_QUOTES.finditer(text)]
    assert found == ["1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4"]


def _expected_guard(relative: str) -> str:
    # tf_gulp/ops/x/y.h -> TF_GULP_OPS_X_Y_H_; cc/x/y.h -> TF_GULP_CC_X_Y_H_
    name = re.sub(r"[^A-Za-z0-9]", "_", relative).upper() + "_"
    return name if name.startswith("TF_GULP_") else "TF_GULP_" + name


def test_header_guards_name_their_path():
    # A header's include guard is its path: a guard left from before a move (two headers could
    # then share one and silently hide each other) fails here.
    wrong = []
    for root in ("cc", "tf_gulp"):
        for path in sorted((REPO_ROOT / root).rglob("*.h")):
            relative = path.relative_to(REPO_ROOT).as_posix()
            guard = re.search(r"^#ifndef (\w+)", path.read_text(), re.M)
            if guard is None or guard.group(1) != _expected_guard(relative):
                wrong.append(f"{relative}: {guard.group(1) if guard else None}")
    assert not wrong, wrong
