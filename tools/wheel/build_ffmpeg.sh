#!/usr/bin/env bash
# Builds the minimal FFmpeg the wheel bundles: libavcodec with the HEVC decoder only, plus libavutil
# (cc/codec/hevc_decoder.cc uses nothing else: no parser, no libswscale, no libavformat), shared,
# LGPL (no --enable-gpl / --enable-nonfree), no external or hardware libraries (--disable-autodetect).
#
#   bash tools/wheel/build_ffmpeg.sh            # prints the install prefix on its last line
#
# Source: Debian 12's FFmpeg source package, the upstream release tarball Debian ships as
# ffmpeg_<version>.orig.tar.xz (the same FFmpeg 5.1 API as Debian's libavcodec-dev), fetched from
# deb.debian.org (snapshot.debian.org as the fallback once the version leaves the pool) and checked
# against the SHA-256 below, which is the one in Debian's signed ffmpeg_5.1.9-0+deb12u1.dsc. With
# deb-src enabled, `apt-get source --download-only ffmpeg` fetches the same file.
# The result is cached under build/ffmpeg/<version>-<hash of this script>/install: a rerun with an
# unchanged script only prints the prefix. Builds with `nice make -j$TF_GULP_BUILD_JOBS` (default 2).
set -euo pipefail

FFMPEG_VERSION=5.1.9
FFMPEG_TARBALL=ffmpeg_${FFMPEG_VERSION}.orig.tar.xz
FFMPEG_SHA256=d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176
FFMPEG_URLS=(
  "http://deb.debian.org/debian/pool/main/f/ffmpeg/${FFMPEG_TARBALL}"
  "http://deb.debian.org/debian-security/pool/updates/main/f/ffmpeg/${FFMPEG_TARBALL}"
  "https://snapshot.debian.org/archive/debian/20251108T000000Z/pool/main/f/ffmpeg/${FFMPEG_TARBALL}"
)

# Everything off, then the one decoder back on. pthreads stays (frame/slice threads, a build
# default not covered by --disable-autodetect); nasm is needed for the x86 SIMD the decoder's
# speed depends on (--disable-x86asm would make it several times slower).
CONFIGURE_FLAGS=(
  --enable-shared --disable-static --enable-pic
  --disable-programs --disable-doc --disable-debug
  --disable-everything --enable-decoder=hevc
  --disable-avdevice --disable-avformat --disable-avfilter --disable-swscale --disable-swresample
  --disable-postproc --disable-network --disable-autodetect --enable-pthreads
  # libavcodec finds its own libavutil (not Debian's) through a run path to <prefix>/lib;
  # auditwheel follows it and rewrites it to the wheel's tf_gulp.libs/.
  --enable-rpath
)

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
key=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
work=$root/build/ffmpeg/${FFMPEG_VERSION}-${key}
prefix=$work/install
if [[ -f $prefix/.complete ]]; then
  echo "$prefix"
  exit 0
fi

downloads=$root/build/downloads
mkdir -p "$downloads"
tarball=$downloads/$FFMPEG_TARBALL
if ! echo "$FFMPEG_SHA256  $tarball" | sha256sum -c --status 2>/dev/null; then
  for url in "${FFMPEG_URLS[@]}"; do
    echo "build_ffmpeg: fetching $url" >&2
    if curl -fsSL --retry 2 -o "$tarball.part" "$url"; then
      mv "$tarball.part" "$tarball"
      break
    fi
  done
  echo "$FFMPEG_SHA256  $tarball" | sha256sum -c --status || {
    echo "build_ffmpeg: $tarball is missing or does not match SHA-256 $FFMPEG_SHA256" >&2
    exit 1
  }
fi

command -v nasm >/dev/null || {
  echo "build_ffmpeg: nasm is missing (apt-get install nasm): FFmpeg's x86 SIMD needs it" >&2
  exit 1
}

rm -rf "$work"
mkdir -p "$work"
tar -xf "$tarball" -C "$work"
src=$work/ffmpeg-$FFMPEG_VERSION
cd "$src"
echo "build_ffmpeg: configure ${CONFIGURE_FLAGS[*]}" >&2
./configure --prefix="$prefix" "${CONFIGURE_FLAGS[@]}" >"$work/configure.log" 2>&1 || {
  tail -30 "$work/configure.log" >&2
  exit 1
}
# The licence FFmpeg reports for this configuration; the wheel's notice depends on it.
grep -q 'License: LGPL version 2.1 or later' "$work/configure.log" || {
  echo "build_ffmpeg: configure did not report an LGPL 2.1+ build" >&2
  exit 1
}
nice make -j"${TF_GULP_BUILD_JOBS:-2}" >"$work/make.log" 2>&1 || {
  tail -30 "$work/make.log" >&2
  exit 1
}
make install >>"$work/make.log" 2>&1
if ! ldd "$prefix/lib/libavcodec.so" | grep -q "libavutil.so.57 => $prefix/lib/"; then
  echo "build_ffmpeg: $prefix/lib/libavcodec.so does not resolve its libavutil from $prefix/lib:" >&2
  ldd "$prefix/lib/libavcodec.so" >&2
  exit 1
fi
cp COPYING.LGPLv2.1 LICENSE.md "$prefix/"
echo "${CONFIGURE_FLAGS[*]}" >"$prefix/configure-flags.txt"
touch "$prefix/.complete"
echo "$prefix"
