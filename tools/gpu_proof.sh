#!/bin/sh
# The GPU path's proof, one command on a machine with an NVIDIA GPU, its driver (R580+), nvcc and
# CMake; no TensorFlow, no network (everything comes from the repository: the kernels' source,
# ffnvcodec's headers in third_party/ffnvcodec, the HEVC samples and CPU reference outputs in
# cc/gpu/proof/data). Prints the proof's JSON (cc/gpu/proof/gpu_proof.cc); the build's messages go
# to stderr. (`make gpu-harness` proves the warp kernels alone, RGB and NV12.)
#
#   tools/gpu_proof.sh [gpu_proof arguments: --batch 256 --images 4096 --sessions 1,2,4,7,14]
#
# Exit status: the proof's (0 proven, 1 mismatch/error, 2 bad data, 3 no GPU or no NVDEC here).
set -eu
cd "$(dirname "$0")/.."
BUILD=${GPU_PROOF_BUILD:-build/gpu}
cmake -S cc/gpu -B "$BUILD" >&2
cmake --build "$BUILD" -j >&2
exec "$BUILD/gpu_proof" --data cc/gpu/proof/data "$@"
