#!/usr/bin/env bash
# Proof that the wheel installs where TensorFlow does (`make test-wheel`; docs/wheel.md):
#
#   bash tools/wheel/test_bare_root.sh [WHEEL] [PYTHON]
#       WHEEL: default the newest dist/tf_gulp-*.whl (make wheel); PYTHON: the development
#       interpreter that writes the test data (default .venv/bin/python; it needs PyAV, make setup)
#
# 1. a minimal Debian 12 root file system: `debootstrap --variant=minbase bookworm` plus python3 and
#    python3-venv and nothing else (cached in build/bare-root/base; each run works on a fresh copy);
# 2. TensorFlow (tensorflow-cpu of the version the wheel was built for) and the wheel's Python
#    dependencies downloaded from PyPI by pip on the host into build/bare-root/wheelhouse, so the root
#    installs them with `pip install --no-index` (the same files; it needs no network itself);
# 3. inside the root (chroot, in a private mount namespace, /proc mounted): a venv, `pip install` of
#    the wheel and TensorFlow, then tools/wheel/bare_root_check.py reads a gulp directory (JPEG),
#    FFRecord files and a Benzina file (HEVC) and compares them with the expected values;
# 4. `dpkg -l` in the root: its packages are exactly debootstrap's, none is a -dev package and none
#    ships libavcodec, libavutil, libjpeg/libturbojpeg, libpng16, liburing or libdeflate.
# Needs root (chroot, mount) and debootstrap (apt-get install debootstrap). The output is also
# written to build/bare-root/last-run.log.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
wheel=${1:-$(ls -t dist/tf_gulp-*.whl 2>/dev/null | head -1)}
python=${2:-.venv/bin/python}
[[ -n $wheel && -f $wheel ]] || { echo "test_bare_root: no wheel (make wheel first)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "test_bare_root: needs root (chroot and mount)" >&2; exit 1; }
command -v debootstrap >/dev/null || {
  echo "test_bare_root: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
wheel=$(realpath "$wheel")

work=$root/build/bare-root
mkdir -p "$work"
exec > >(tee "$work/last-run.log") 2>&1
echo "==> $(date -u '+%Y-%m-%d %H:%M UTC') bare-root test of $(basename "$wheel")"

base=$work/base
if [[ ! -x $base/usr/bin/python3 ]]; then
  echo "==> debootstrap --variant=minbase --include=python3,python3-venv bookworm"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$base.tmp" \
    http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
      tail -20 "$work/debootstrap.log"; exit 1; }
  mv "$base.tmp" "$base"
fi

tf_version=$(python3 -c 'import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.loads(z.read("tf_gulp/ops/_build_info.json"))["tensorflow_version"])' "$wheel")
echo "==> the wheel was built for TensorFlow $tf_version"

echo "==> pip download tensorflow-cpu==$tf_version and the wheel's dependencies (host, from PyPI)"
downloader=$work/pip-venv
[[ -x $downloader/bin/pip ]] || python3 -m venv "$downloader"
# PIP_CONFIG_FILE=/dev/null: plain PyPI, as a user has it, whatever this machine's pip.conf says.
PIP_CONFIG_FILE=/dev/null "$downloader/bin/pip" download -q -d "$work/wheelhouse" "tensorflow-cpu==$tf_version" "$wheel"

echo "==> test data (tools/wheel/make_bare_root_data.py with $python)"
nice "$python" tools/wheel/make_bare_root_data.py "$work/data"

run=$work/run
rm -rf "$run"
cp -a "$base" "$run"
dpkg_before=$(chroot "$run" dpkg-query -W -f='${Package}\n' | sort)
mkdir -p "$run/test/wheelhouse"
cp "$wheel" "$run/test/"
cp -r "$work/data" "$run/test/data"
cp tools/wheel/bare_root_check.py "$run/test/"
wheel_name=$(basename "$wheel")

# A private mount namespace: the mounts vanish with it, whatever happens.
unshare --mount --propagation private -- bash -euo pipefail -c '
  run=$1; wheelhouse=$2; wheel_name=$3; tf_version=$4
  mount -t proc proc "$run/proc"
  mount --bind -o ro "$wheelhouse" "$run/test/wheelhouse"
  in_root() { chroot "$run" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
  echo "==> in the root: python3 -m venv /venv; pip install $wheel_name tensorflow-cpu==$tf_version"
  in_root python3 -m venv /venv
  in_root /venv/bin/pip install -q --no-index --find-links /test/wheelhouse \
    "/test/$wheel_name" "tensorflow-cpu==$tf_version"
  in_root /venv/bin/pip list 2>/dev/null | grep -iE "^(tf-gulp|tensorflow[-_]cpu|numpy) "
  echo "==> in the root: bare_root_check.py"
  in_root /usr/bin/env TF_CPP_MIN_LOG_LEVEL=2 /venv/bin/python /test/bare_root_check.py /test/data
' bare-root "$run" "$work/wheelhouse" "$wheel_name" "$tf_version"

echo "==> dpkg -l in the root"
dpkg_after=$(chroot "$run" dpkg-query -W -f='${Package}\n' | sort)
echo "$(echo "$dpkg_after" | wc -l) packages (debootstrap minbase + python3, python3-venv)"
if [[ $dpkg_before != "$dpkg_after" ]]; then
  echo "FAIL: the package set changed during the test:"
  diff <(echo "$dpkg_before") <(echo "$dpkg_after") || true
  exit 1
fi
bad=$(echo "$dpkg_after" | grep -E -- '-dev$|^lib(avcodec|avutil|jpeg|turbojpeg|png16|uring|deflate)' || true)
if [[ -n $bad ]]; then
  echo "FAIL: the root has packages the test must run without: $bad"
  exit 1
fi
echo "no -dev package; no libavcodec/libavutil/libjpeg/libturbojpeg/libpng16/liburing/libdeflate package"
echo "==> bare-root test passed"
