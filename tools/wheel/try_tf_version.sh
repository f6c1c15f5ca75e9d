#!/usr/bin/env bash
# Builds the wheel against another TensorFlow release and runs the bare-root check with it, on this
# machine (docs/wheel.md, "TensorFlow versions"):
#
#   bash tools/wheel/try_tf_version.sh VERSION       # e.g. 2.20.0
#
# A venv build/tf-versions/VERSION/venv gets tensorflow-cpu==VERSION (PyPI) and the build tools;
# tools/wheel/build_wheel.sh builds and repairs the wheel with it into build/tf-versions/VERSION/;
# the wheel is installed there and tools/wheel/bare_root_check.py reads the test data of
# tools/wheel/make_bare_root_data.py (run `make test-wheel` once first, or pass DATA=dir).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: try_tf_version.sh VERSION" >&2; exit 2; }
version=$1
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=build/tf-versions/$version
data=$(realpath "${DATA:-build/bare-root/data}")
[[ -f $data/images.bzna ]] || { echo "try_tf_version: no test data in $data" >&2; exit 1; }
mkdir -p "$work"
if [[ ! -x $work/venv/bin/python ]]; then
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install -q "tensorflow-cpu==$version" pybind11 setuptools wheel
bash tools/wheel/build_wheel.sh "$work/venv/bin/python" "$work"
"$work/venv/bin/pip" install -q --force-reinstall --no-deps "$work"/tf_gulp-*.whl
"$work/venv/bin/pip" install -q numpy tqdm simplejpeg
# From another folder, so `import tf_gulp` finds the installed wheel, not this checkout.
(cd "$work" && TF_CPP_MIN_LOG_LEVEL=2 venv/bin/python "$OLDPWD/tools/wheel/bare_root_check.py" \
   "$data")
