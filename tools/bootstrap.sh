#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for tf_gulp and runs the demo or the whole test suite:
#
#   bash tools/bootstrap.sh demo     # build the op library (pip -e) and run examples/video_demo.py
#   bash tools/bootstrap.sh test     # bazel test //...  (C++ unit tests and every pytest file)
#
# Steps: apt-get the Debian packages of tools/apt-packages.txt (sudo only when not root), create .venv with the python3 on
# PATH, pip-install TensorFlow (tensorflow-cpu of build_config.bzl's TENSORFLOW_VERSION) and requirements-dev.txt into it, then
# `make demo` or `make test`. Running it again skips what is already done.
set -euo pipefail

usage() {
  echo "usage: bash tools/bootstrap.sh <demo|test>" >&2
  exit 2
}

[[ $# -eq 1 ]] || usage
mode=$1
case "${mode}" in
  demo | test) ;;
  *) usage ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ "$(id -u)" -eq 0 ]]; then
  sudo=()
else
  sudo=(sudo)
fi

# The one list of Debian packages, shared with the Makefile's APT_PACKAGES (make checks it again,
# quickly): names separated by whitespace, `#` starts a comment.
read -r -a packages <<<"$(sed -e 's/#.*//' tools/apt-packages.txt | tr '\n' ' ')"

echo "==> apt-get install ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y "${packages[@]}"

echo "==> make setup (.venv with $(command -v python3): TensorFlow + requirements-dev.txt)"
make setup PYTHON=python3

echo "==> make ${mode}"
make "${mode}"
