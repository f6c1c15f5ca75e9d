# tf_gulp developer entry points. On a fresh Debian 12 machine: bash tools/bootstrap.sh <demo|test>.
#
#   make setup    Debian packages (apt-get, only those missing) + .venv with TensorFlow and the
#                 dev requirements (only when requirements-dev.txt or the Makefile changed)
#   make build    pip install --no-build-isolation -e .  (only when a C++/build file changed)
#   make test     bazel test //...  with the .venv interpreter (C++ unit tests + every pytest file)
#   make pytest   the fast loop: pytest tests/ against the pip -e build
#   make demo     python examples/video_demo.py
#   make bench    python bench/bench_gulp_read.py
#   make bench-ingest  python bench/bench_ingest.py (tf-gulp ingest vs gulpio2)
#   make bench-ffrecord  python bench/bench_ffrecord.py (FFRecord readers vs the reference, fio)
#   make wheel    a binary wheel in dist/ carrying its native libraries (tools/wheel/build_wheel.sh:
#                 minimal HEVC-only FFmpeg built from Debian's source, pip wheel, auditwheel repair)
#   make test-wheel  installs that wheel + TensorFlow in a bare Debian 12 root (debootstrap, needs
#                 root) and reads every format there (tools/wheel/test_bare_root.sh; docs/wheel.md)
#   make fuzz     libFuzzer targets of the C++ parsers (tools/fuzz.py, clang), FUZZ_SECONDS each
#                 (default 600) or FUZZ_RUNS executions each; FUZZ_TARGETS to pick (docs/fuzzing.md)
#   make clean    remove build outputs (keeps .venv)
#
# Variables: PYTHON (interpreter the venv is made from; default python3 on PATH), VENV (.venv),
# BAZEL (bazel), PYTEST_ARGS, BAZEL_ARGS, FUZZ_SECONDS, FUZZ_RUNS, FUZZ_TARGETS, WHEEL (the wheel
# test-wheel installs; default the newest dist/tf_gulp-*.whl).

SHELL := /bin/bash
.DEFAULT_GOAL := build

PYTHON ?= python3
VENV ?= .venv
BAZEL ?= bazel
PYTEST_ARGS ?=
BAZEL_ARGS ?=

# The TensorFlow pin is build_config.bzl's TENSORFLOW_VERSION (read with sed: python3 may not be
# installed yet when `make setup` starts).
TENSORFLOW_VERSION := $(shell sed -n 's/^TENSORFLOW_VERSION = "\(.*\)"$$/\1/p' build_config.bzl)
TF_REQUIREMENT := tensorflow-cpu==$(TENSORFLOW_VERSION)
GULPIO2_REQUIREMENT := gulpio2==0.0.4
# Keras 2 for TensorFlow 2.21 (tests/test_multi_worker.py: model.fit under MultiWorkerMirroredStrategy,
# which Keras 3 cannot run). --no-deps: it requires the `tensorflow` package, which pip would
# otherwise install over tensorflow-cpu. tf-keras is released with TensorFlow's version numbers.
TF_KERAS_REQUIREMENT := tf-keras==$(TENSORFLOW_VERSION)

# Everything the builds and tests need from Debian 12, listed once in tools/apt-packages.txt (which
# tools/bootstrap.sh installs too; docs/building.md says why each is there). Read with sed for the
# same reason as above.
APT_PACKAGES := $(shell sed -e 's/\#.*//' tools/apt-packages.txt)

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VPY := $(VENV)/bin/python
DEPS_STAMP := $(VENV)/.tf_gulp-deps
BUILD_STAMP := $(VENV)/.tf_gulp-build
OPS_LIBRARY := tf_gulp/ops/_tf_gulp_ops.so
# The sources the op library and _core are built from (build_config.bzl's globs). Empty before
# python3 is installed, which only `make setup` meets, and it does not build.
OPS_SOURCES := $(shell python3 tools/build_settings.py sources 2>/dev/null)

.PHONY: setup apt venv build test pytest demo bench bench-ingest bench-ffrecord gpu-check gpu-check-dry fuzz \
	clean wheel test-wheel FORCE

setup: apt $(DEPS_STAMP)

apt:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q 'install ok installed' || echo "$$p"; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:" $$missing; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $$missing; \
	fi

venv: $(VPY)

$(VPY):
	$(PYTHON) -m venv $(VENV)

$(DEPS_STAMP): $(VPY) requirements-dev.txt Makefile build_config.bzl
	$(VPY) -m pip install $(TF_REQUIREMENT) -r requirements-dev.txt
	$(VPY) -m pip install --no-deps $(GULPIO2_REQUIREMENT) $(TF_KERAS_REQUIREMENT)
	touch $@

build: setup $(BUILD_STAMP)

# Rebuilt when a C++ source or a build file changed, or when the library is missing.
$(BUILD_STAMP): $(DEPS_STAMP) $(OPS_SOURCES) setup.py pyproject.toml build_config.bzl tools/build_settings.py \
		$(if $(wildcard $(OPS_LIBRARY)),,FORCE)
	$(VPY) -m pip install --no-build-isolation -e .
	touch $@

test: setup
	TF_GULP_PYTHON="$(abspath $(VPY))" $(BAZEL) test //... $(BAZEL_ARGS)

pytest: build
	$(VPY) -m pytest tests/ $(PYTEST_ARGS)

demo: build
	$(VPY) examples/video_demo.py

bench: build
	$(VPY) bench/bench_gulp_read.py

bench-ingest: build
	$(VPY) bench/bench_ingest.py

bench-ffrecord: build
	$(VPY) bench/bench_ffrecord.py $(BENCH_ARGS)

# The binary wheel (docs/wheel.md). nasm (FFmpeg's x86 SIMD) and debootstrap (the bare-root test)
# are only needed here, so they are not in tools/apt-packages.txt.
wheel: setup
	@command -v nasm >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y nasm; }
	bash tools/wheel/build_wheel.sh $(VPY)

test-wheel: setup
	@command -v debootstrap >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y debootstrap; }
	$(SUDO) bash tools/wheel/test_bare_root.sh "$(WHEEL)" $(VPY)

# The GPU path's device check (docs/gpu.md): builds cc/gpu with CMake + Ninja and runs every phase,
# writing one file per phase into $(GPU_CHECK_OUT); needs nvcc and an NVIDIA driver, not TensorFlow.
# `make gpu-check-dry` runs the same script against the host stand-in (no GPU, no nvcc).
GPU_CHECK_OUT ?= build/gpu_check_out
gpu-check:
	tools/gpu_device_check.sh $(GPU_CHECK_OUT)

gpu-check-dry:
	tools/gpu_device_check.sh --dry-run $(GPU_CHECK_OUT)

# Coverage-guided fuzzing of the C++ parsers (docs/fuzzing.md): builds cc/fuzz with clang under
# build/fuzz, then fuzzes each target in turn (one process each); the corpus grows across runs,
# crashes land in build/fuzz/crashes/<target>/ and fail the target. Needs only the apt packages.
FUZZ_SECONDS ?= 600
FUZZ_RUNS ?=
FUZZ_TARGETS ?=
fuzz: apt
	python3 tools/fuzz.py run $(FUZZ_TARGETS) \
	  $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),--seconds $(FUZZ_SECONDS)) --json build/fuzz/results.json

clean:
	rm -rf build dist *.egg-info $(OPS_LIBRARY) tf_gulp/_core*.so tf_gulp/ops/_build_info.json $(BUILD_STAMP)
	-$(BAZEL) clean

FORCE:
