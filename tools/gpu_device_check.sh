#!/bin/sh
# The GPU path's device check: one command on a machine with an NVIDIA GPU, its driver (R580+),
# nvcc, CMake and Ninja (or make); no TensorFlow, no network (docs/gpu.md, cc/gpu/README.md).
#
#   tools/gpu_device_check.sh [--dry-run] [OUTDIR]       (OUTDIR defaults to $OUT)
#
# Phases, each under its own timeout, each writing its result into OUTDIR the moment it ends
# (a hang or a failure loses nothing already written; the device tool returns 8 files at most):
#   env         env.json         nvidia-smi's name, driver, compute capability, MIG mode; the
#                                container's NVIDIA_DRIVER_CAPABILITIES; libcuda.so.1 and
#                                libnvcuvid.so.1 found or not; the phases' timeouts
#   build       logs.txt         cmake + ninja (make where there is no ninja) of cc/gpu
#   runtime     runtime.json     the driver as the op library loads it, the NVDEC engine count
#   warp        warp.json        the warp kernels (no NVDEC): RGB, clips, NV12 fused, uint8/float,
#                                NHWC/NCHW vs the CPU path; images/s
#   nvdec       nvdec.json       NVDEC decode + the fused warp on cc/gpu/testing/data vs the CPU
#                                path's outputs, the colour kernel vs the CPU's colour stage on
#                                the warped levels ("nvdec": "unavailable: ..." where there is none)
#   throughput  throughput.json  images/s, decode and decode + warp, 512x512, the ImageNet-like
#                                set and the data's mix, 1, 2, 4, 7, 14 sessions, 8192 images a
#                                run (second half apart), the pool's calls inside the clock;
#                                nvidia-smi dmon beside it and the profile (into logs.txt)
#   profile     extra.json       the pool's per-call counts and times at 1, 7, 14 sessions on the
#                                mix, 512x512 and 1024x1024 at equal bytes, three rates
#   situations  extra.json       a map behind a 100 ms host function, a second context, a thread
#                                with another context current (tf_situations.cc)
#   jpeg        extra.json       torchvision's decode_jpeg on the GPU's JPEG engines, gulp-like
#                                frames and ImageNet-like JPEGs, batches 64 and 256
#   nvjpeg      extra.json       the GPU JPEG path (nvJPEG + the fused warp, cc/gpu/nvjpeg_*) vs the
#                                CPU fused path on every picture kind (data/jpeg_ref), the colour
#                                kernel vs the CPU's colour stage on the warped levels, then
#                                frames/s on data/jpeg's gulp-like clips and ImageNet-like JPEGs
#   memcheck    memcheck.json    compute-sanitizer --tool memcheck on a small batch
# extra.json holds profile, situations, jpeg and nvjpeg under their names, rewritten as each ends. The output ends with a
# summary. Exit status: 0 when every phase passed, else 10 + the first failed phase's number (env 0,
# build 1, runtime 2, warp 3, nvdec 4, throughput 5, memcheck 6, profile 7, situations 8, jpeg 9,
# nvjpeg 10).
#
# --dry-run: the same phases on a machine without a GPU, against the host stand-in of the driver
# (cc/gpu/testing/check_driver_host.cc: the kernels' source runs on the CPU, no NVDEC, no nvcc
# needed). tests/test_gpu_device_check.py runs it in CI.
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$(pwd)

DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
OUTDIR=${1:-${OUT:-}}
if [ -z "$OUTDIR" ]; then
  echo "usage: tools/gpu_device_check.sh [--dry-run] OUTDIR (or set OUT)" >&2
  exit 2
fi
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)

# Seconds per phase; they add up to at most 540 (9 minutes), the device tool's 10 less a margin.
# (The first GPU run built in 11 s and ran each of warp and nvdec in a few.)
T_ENV=15 T_BUILD=120 T_RUNTIME=20 T_WARP=40 T_NVDEC=40 T_THROUGHPUT=105 T_PROFILE=40 T_SITUATIONS=20 T_JPEG=45 T_NVJPEG=40 T_MEMCHECK=55
# The dry run builds on CI machines, often slower than the GPU machine (16 cores) and not held to
# the device tool's limit: its build gets longer.
BUILD_LIMIT=$T_BUILD
[ $DRY = 1 ] && BUILD_LIMIT=600
TOTAL=$((T_ENV + T_BUILD + T_RUNTIME + T_WARP + T_NVDEC + T_THROUGHPUT + T_PROFILE + T_SITUATIONS + T_JPEG + T_NVJPEG + T_MEMCHECK))

if [ $DRY = 1 ]; then
  BUILD=${GPU_CHECK_BUILD:-build/gpu_dry}
  BIN=device_check_dry
  CONFIG="-DTFG_DRY_RUN=ON"
else
  BUILD=${GPU_CHECK_BUILD:-build/gpu}
  BIN=device_check
  CONFIG=""
fi
mkdir -p "$BUILD" || exit 2
BUILD=$(cd "$BUILD" && pwd)
DATA="$REPO/cc/gpu/testing/data"
PHASES="env build runtime warp nvdec throughput memcheck profile situations jpeg nvjpeg"
EXTRA="profile situations jpeg nvjpeg"
rm -f "$BUILD"/*.json.done
FIRST_FAILED=""
SUMMARY=""

# A JSON string of $1.
json() {
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"
}
note() {  # phase status detail
  SUMMARY="$SUMMARY$(printf '%-11s %-6s %s' "$1" "$2" "$3")
"
  [ "$2" = "FAIL" ] && [ -z "$FIRST_FAILED" ] && FIRST_FAILED=$1
  printf '[%s] %s %s\n' "$1" "$2" "$3"
}
# The value of "key": in a one-line JSON file (numbers, true/false, null or a short string).
field() {
  sed -n "s/.*\"$2\": \(\"[^\"]*\"\|[^,}]*\).*/\1/p" "$1" 2>/dev/null | head -n 1
}
# Runs phase $1 with timeout $2: `device_check $1 args...` into $OUTDIR/$1.json.
run_phase() {
  name=$1 limit=$2
  shift 2
  file="$OUTDIR/$name.json"
  timeout -k 5 "$limit" "$@" >"$file.tmp" 2>"$BUILD/$name.stderr"
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ] || ! head -c 1 "$file.tmp" 2>/dev/null | grep -q '{'; then
    why="exit $rc"
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timed out after ${limit}s"
    printf '{"phase": "%s", "error": %s, "stderr_tail": %s}\n' "$name" "$(json "$why")" \
      "$(json "$(tail -c 600 "$BUILD/$name.stderr")")" >"$file"
    rm -f "$file.tmp"
    note "$name" FAIL "$why"
    return 1
  fi
  mv "$file.tmp" "$file"
  return $rc
}

# Moves phase $1's JSON ($OUTDIR/$1.json) into extra.json, beside the other extra phases' so far.
extra_phase() {
  [ -f "$OUTDIR/$1.json" ] && mv "$OUTDIR/$1.json" "$BUILD/$1.json.done"
  {
    printf '{'
    sep=""
    for p in $EXTRA; do
      if [ -f "$BUILD/$p.json.done" ]; then
        printf '%s"%s": %s' "$sep" "$p" "$(head -n 1 "$BUILD/$p.json.done")"
        sep=", "
      fi
    done
    printf '}\n'
  } >"$OUTDIR/extra.json.tmp" && mv "$OUTDIR/extra.json.tmp" "$OUTDIR/extra.json"
}
# Appends section $1 (the tail of file $2) to logs.txt.
log_section() {
  { echo "==== $1"; tail -c 200000 "$2" 2>/dev/null; } >>"$OUTDIR/logs.txt"
}
rm -f "$OUTDIR/logs.txt" "$OUTDIR/extra.json"

# ---- env
SMI=$(command -v nvidia-smi || true)
if [ -n "$SMI" ]; then
  GPU_FACTS=$(timeout 10 "$SMI" --query-gpu=name,driver_version,compute_cap,mig.mode.current \
    --format=csv,noheader 2>&1 | head -n 4)
else
  GPU_FACTS="nvidia-smi not found"
fi
lib_found() {
  for d in $(ldconfig -p 2>/dev/null | sed -n "s/.*$1.* => //p") /usr/lib/x86_64-linux-gnu \
           /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    case "$d" in */"$1") [ -e "$d" ] && { echo true; return; } ;; esac
    [ -e "$d/$1" ] && { echo true; return; }
  done
  echo false
}
CMAKE_VERSION=$(cmake --version 2>/dev/null | head -n 1)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
NVCC_VERSION=$("$NVCC" --version 2>/dev/null | tail -n 1)
printf '{"phase": "env", "dry_run": %s, "nvidia_smi": %s, "nvidia_driver_capabilities": %s, "libcuda_found": %s, "libnvcuvid_found": %s, "cmake": %s, "ninja": %s, "make": %s, "nvcc": %s, "python3": %s, "cores": %s, "phase_timeouts_s": {"env": %s, "build": %s, "runtime": %s, "warp": %s, "nvdec": %s, "throughput": %s, "profile": %s, "situations": %s, "jpeg": %s, "nvjpeg": %s, "memcheck": %s}, "total_timeout_s": %s}\n' \
  "$([ $DRY = 1 ] && echo true || echo false)" "$(json "$GPU_FACTS")" \
  "$(json "${NVIDIA_DRIVER_CAPABILITIES:-unset}")" "$(lib_found libcuda.so.1)" \
  "$(lib_found libnvcuvid.so.1)" "$(json "$CMAKE_VERSION")" \
  "$(command -v ninja >/dev/null && echo true || echo false)" \
  "$(command -v make >/dev/null && echo true || echo false)" "$(json "${NVCC_VERSION:-not found}")" \
  "$(json "$(python3 --version 2>&1 || echo 'not found')")" \
  "$(nproc 2>/dev/null || echo 0)" $T_ENV $T_BUILD $T_RUNTIME $T_WARP $T_NVDEC $T_THROUGHPUT \
  $T_PROFILE $T_SITUATIONS $T_JPEG $T_NVJPEG $T_MEMCHECK $TOTAL >"$OUTDIR/env.json"
note env ok "$(printf '%s' "$GPU_FACTS" | head -n 1); libnvcuvid $(field "$OUTDIR/env.json" libnvcuvid_found)"

# ---- build
if command -v ninja >/dev/null; then
  GENERATOR=Ninja
elif command -v make >/dev/null; then
  GENERATOR="Unix Makefiles"
else
  GENERATOR=""
fi
START=$(date +%s)
if [ -z "$GENERATOR" ]; then
  echo "neither ninja nor make found" >"$BUILD/build.log"
  log_section build "$BUILD/build.log"
  note build FAIL "neither ninja nor make found"
else
  # The generator is fixed per build folder: a folder made by the other one is started afresh.
  if [ -f "$BUILD/CMakeCache.txt" ] &&
     ! grep -q "CMAKE_GENERATOR:INTERNAL=$GENERATOR" "$BUILD/CMakeCache.txt"; then
    rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles"
  fi
  # shellcheck disable=SC2086
  if timeout -k 5 $BUILD_LIMIT sh -c "cmake -G '$GENERATOR' $CONFIG -S cc/gpu -B '$BUILD' &&
       cmake --build '$BUILD' --target $BIN -j \$(nproc)" >"$BUILD/build.log" 2>&1; then
    log_section build "$BUILD/build.log"
    note build ok "$GENERATOR, $(($(date +%s) - START)) s"
  else
    log_section build "$BUILD/build.log"
    note build FAIL "see logs.txt: $(grep -m 1 -iE 'error|not found' "$BUILD/build.log" | cut -c 1-160)"
  fi
fi
EXE="$BUILD/$BIN"
if [ ! -x "$EXE" ]; then
  for p in runtime warp nvdec throughput memcheck profile situations nvjpeg; do
    printf '{"phase": "%s", "error": "not built"}\n' "$p" >"$OUTDIR/$p.json"
  done
  extra_phase profile
  extra_phase situations
  extra_phase nvjpeg
  echo "==== nvidia-smi dmon: not run (not built)" >>"$OUTDIR/logs.txt"
  note runtime FAIL "not built"
else
  # ---- runtime
  if run_phase runtime $T_RUNTIME "$EXE" runtime; then
    note runtime ok "gpu $(field "$OUTDIR/runtime.json" gpu), $(field "$OUTDIR/runtime.json" device), engines $(field "$OUTDIR/runtime.json" nvdec_engines), nvdec $(field "$OUTDIR/runtime.json" nvdec | cut -c 1-100)"
  elif [ -f "$OUTDIR/runtime.json" ] && [ "$(field "$OUTDIR/runtime.json" phase)" = '"runtime"' ] &&
       ! grep -q '"error"' "$OUTDIR/runtime.json"; then
    note runtime FAIL "no GPU kernels: $(field "$OUTDIR/runtime.json" kernels | cut -c 1-140)"
  fi
  SMALL=""
  [ $DRY = 1 ] && SMALL="--small"  # the host stand-in runs every kernel thread on one core
  # ---- warp
  if run_phase warp $T_WARP "$EXE" warp $SMALL; then
    note warp ok "within 2 levels $(field "$OUTDIR/warp.json" within_2_levels), rgb $(field "$OUTDIR/warp.json" rgb_warp_512_to_224_images_per_s)/s, fused $(field "$OUTDIR/warp.json" fused_nv12_warp_512_to_224_images_per_s)/s"
  elif grep -q '"phase": "warp", "gpu"' "$OUTDIR/warp.json"; then
    note warp FAIL "within 2 levels $(field "$OUTDIR/warp.json" within_2_levels) $(field "$OUTDIR/warp.json" error)"
  fi
  # ---- nvdec
  if run_phase nvdec $T_NVDEC "$EXE" nvdec --data "$DATA" $SMALL; then
    if grep -q '"nvdec": "unavailable' "$OUTDIR/nvdec.json"; then
      note nvdec ok "a result, not a failure: $(field "$OUTDIR/nvdec.json" nvdec | cut -c 1-140)"
    else
      note nvdec ok "$(field "$OUTDIR/nvdec.json" samples) samples, max diff $(field "$OUTDIR/nvdec.json" decode_hevc_warped_vs_cpu_max_abs_diff_levels) levels, colour $(field "$OUTDIR/nvdec.json" color_max_abs_diff_levels)"
    fi
  elif grep -q '"phase": "nvdec", "gpu"' "$OUTDIR/nvdec.json"; then
    note nvdec FAIL "within 2 levels $(field "$OUTDIR/nvdec.json" within_2_levels), colour within 1 $(field "$OUTDIR/nvdec.json" color_within_1_level), failed $(field "$OUTDIR/nvdec.json" decode_warp_failed) $(field "$OUTDIR/nvdec.json" error | cut -c 1-120)"
  fi
  # ---- throughput, with the decoders' utilisation sampled beside it
  DMON_PID=""
  if [ -n "$SMI" ]; then
    # Line-buffered where stdbuf exists: a block-buffered dmon killed at the end writes nothing.
    LINEBUF=$(command -v stdbuf >/dev/null && echo "stdbuf -oL" || true)
    $LINEBUF "$SMI" dmon -s u -d 1 >"$BUILD/dmon.txt" 2>&1 &
    DMON_PID=$!
  else
    echo "nvidia-smi not found: no dmon samples" >"$BUILD/dmon.txt"
  fi
  # The program stops starting timed runs this long before the phase's timeout.
  if run_phase throughput $T_THROUGHPUT "$EXE" throughput --data "$DATA" --dmon "$BUILD/dmon.txt" \
       --budget-s $((T_THROUGHPUT - 20)) $SMALL; then
    if [ $DRY = 1 ]; then
      note throughput ok "NVDEC unavailable; on the fake NVDEC, decoders created or destroyed in the timed loops: $(grep -o '"timed_decoder_[a-z]*": [0-9]*' "$OUTDIR/throughput.json" | awk '{s += $2} END {print s + 0}')"
    elif grep -q '"nvdec": "unavailable' "$OUTDIR/throughput.json"; then
      note throughput ok "not measured: NVDEC unavailable"
    else note throughput ok "peak 512x512 decode+warp $(field "$OUTDIR/throughput.json" measured_peak_decode_and_warp_images_per_s_512)/s at $(field "$OUTDIR/throughput.json" peak_at_sessions) sessions, engines $(field "$OUTDIR/throughput.json" nvdec_engines), dec util max $(field "$OUTDIR/throughput.json" dec_util_max_percent)%"
    fi
  elif grep -q '"phase": "throughput", "gpu"' "$OUTDIR/throughput.json"; then
    note throughput FAIL "$(field "$OUTDIR/throughput.json" error | cut -c 1-160)"
  fi
  # ---- profile (dmon still sampling)
  if run_phase profile $T_PROFILE "$EXE" profile --data "$DATA" --budget-s $((T_PROFILE - 15)) $SMALL; then
    note profile ok "$(grep -o '"sessions": [0-9]*' "$OUTDIR/profile.json" | wc -l | tr -d ' ') runs, $(field "$OUTDIR/profile.json" source | cut -c 1-60)"
  elif grep -q '"phase": "profile", "gpu"' "$OUTDIR/profile.json"; then
    note profile FAIL "$(field "$OUTDIR/profile.json" error | cut -c 1-160) problems: $(sed -n 's/.*"problems": \[\([^]]*\)\].*/\1/p' "$OUTDIR/profile.json" | cut -c 1-120)"
  fi
  extra_phase profile
  [ -n "$DMON_PID" ] && kill "$DMON_PID" 2>/dev/null
  log_section "nvidia-smi dmon -s u (throughput and profile phases)" "$BUILD/dmon.txt"
  # ---- situations
  if run_phase situations $T_SITUATIONS "$EXE" situations --data "$DATA"; then
    note situations ok "all as expected ($(field "$OUTDIR/situations.json" source | cut -c 1-40))"
  elif grep -q '"phase": "situations", "gpu"' "$OUTDIR/situations.json"; then
    note situations FAIL "$(grep -o '"situation": "[a-z_]*", "expected": "[^"]*", "ok": false, "detail": "[^"]*"' "$OUTDIR/situations.json" | head -n 1 | cut -c 1-200) $(field "$OUTDIR/situations.json" error)"
  fi
  extra_phase situations
  # ---- nvjpeg: the GPU JPEG path (the fake nvJPEG on the dry run)
  if run_phase nvjpeg $T_NVJPEG "$EXE" nvjpeg --data "$DATA" --budget-s $((T_NVJPEG - 16)) $SMALL; then
    if grep -q '"nvjpeg": "unavailable' "$OUTDIR/nvjpeg.json"; then
      note nvjpeg ok "a result, not a failure: $(field "$OUTDIR/nvjpeg.json" nvjpeg | cut -c 1-140)"
    else
      note nvjpeg ok "max diff $(field "$OUTDIR/nvjpeg.json" max_abs_diff_levels) levels, colour $(field "$OUTDIR/nvjpeg.json" color_max_abs_diff_levels), hardware backend $(field "$OUTDIR/nvjpeg.json" hardware_backend), $(field "$OUTDIR/nvjpeg.json" library | cut -c 1-60)"
    fi
  elif grep -q '"phase": "nvjpeg", "gpu"' "$OUTDIR/nvjpeg.json"; then
    note nvjpeg FAIL "within 2 levels $(field "$OUTDIR/nvjpeg.json" within_2_levels), colour within 1 $(field "$OUTDIR/nvjpeg.json" color_within_1_level) $(field "$OUTDIR/nvjpeg.json" error | cut -c 1-120)"
  fi
  extra_phase nvjpeg
  # ---- memcheck: the NVDEC path when there is one, else the warp kernels, on a small batch
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
  WHAT="warp --small"
  grep -q '"nvdec": "available"' "$OUTDIR/runtime.json" 2>/dev/null && WHAT="nvdec --small --data $DATA"
  if [ $DRY = 1 ] || [ -z "$SAN" ]; then
    # shellcheck disable=SC2086
    timeout -k 5 $T_MEMCHECK "$EXE" $WHAT >"$BUILD/memcheck.program" 2>&1
    rc=$?
    REASON="not run: compute-sanitizer not found"
    [ $DRY = 1 ] && REASON="not run: dry run (no GPU)"
    printf '{"phase": "memcheck", "sanitizer": %s, "ran": %s, "exit": %s, "program": %s}\n' \
      "$(json "$REASON")" "$(json "$WHAT")" $rc \
      "$(head -n 1 "$BUILD/memcheck.program" | grep '^{' || echo null)" >"$OUTDIR/memcheck.json"
    if [ $DRY = 1 ] && [ $rc -eq 0 ]; then note memcheck ok "$REASON; the program ran: exit 0"
    else note memcheck FAIL "$REASON (exit $rc)"; fi
  else
    # shellcheck disable=SC2086
    timeout -k 5 $T_MEMCHECK "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
      --log-file "$BUILD/memcheck.log" "$EXE" $WHAT >"$BUILD/memcheck.program" 2>&1
    rc=$?
    VERDICT=$(grep -m 1 "ERROR SUMMARY" "$BUILD/memcheck.log" 2>/dev/null | sed 's/^=* *//')
    printf '{"phase": "memcheck", "sanitizer": "compute-sanitizer --tool memcheck --leak-check full", "ran": %s, "exit": %s, "summary": %s, "first_errors": %s, "program": %s}\n' \
      "$(json "$WHAT")" $rc "$(json "${VERDICT:-none (timed out or crashed)}")" \
      "$(json "$(grep -m 8 -E '^=+ +(Invalid|Program hit|Leaked|Error)' "$BUILD/memcheck.log" 2>/dev/null)")" \
      "$(head -n 1 "$BUILD/memcheck.program" | grep '^{' || echo null)" >"$OUTDIR/memcheck.json"
    if [ $rc -eq 0 ]; then note memcheck ok "$VERDICT"
    else note memcheck FAIL "exit $rc: ${VERDICT:-timed out after ${T_MEMCHECK}s?}"; fi
  fi
fi

# ---- jpeg (Python: torchvision where there is one; no build needed)
if command -v python3 >/dev/null; then
  if run_phase jpeg $T_JPEG python3 tools/gpu_jpeg_ceiling.py --data "$DATA/jpeg" \
       $([ $DRY = 1 ] && echo --small); then
    note jpeg ok "$(field "$OUTDIR/jpeg.json" gpu_decode | cut -c 1-100)"
  elif grep -q '"phase": "jpeg"' "$OUTDIR/jpeg.json"; then
    note jpeg FAIL "a decode failed or gave the wrong shape: see extra.json"
  fi
else
  printf '{"phase": "jpeg", "error": "python3 not found"}\n' >"$OUTDIR/jpeg.json"
  note jpeg FAIL "python3 not found"
fi
extra_phase jpeg

echo "==== summary ($([ $DRY = 1 ] && echo "dry run, host stand-in" || echo "device"); files in $OUTDIR)"
printf '%s' "$SUMMARY"
if [ -z "$FIRST_FAILED" ]; then
  echo "==== all phases passed"
  exit 0
fi
n=0
for p in $PHASES; do
  [ "$p" = "$FIRST_FAILED" ] && break
  n=$((n + 1))
done
echo "==== first failed phase: $FIRST_FAILED (exit $((10 + n)))"
exit $((10 + n))
