// The GPU kernels' own source (similarity_warp_kernels.cu) compiled as C++ for
// the host tests, behind the CPU stand-in for a CUDA launch
// (cuda_launch_stand_in.h: __global__, threadIdx, blockIdx, LaunchOnHost).
// Include it first: the kernels must see the stand-in, and nothing else may
// have defined __global__. Bazel's C++ rules take no .cu file, so cc/BUILD
// copies it under a C++ name (similarity_warp_kernels_host.inc).
#ifndef TF_GULP_CC_GPU_TESTING_KERNELS_ON_HOST_H_
#define TF_GULP_CC_GPU_TESTING_KERNELS_ON_HOST_H_

// clang-format off: the kernels need the stand-in first.
#include "cc/gpu/testing/cuda_launch_stand_in.h"
#if __has_include("cc/gpu/similarity_warp_kernels_host.inc")
#include "cc/gpu/similarity_warp_kernels_host.inc"
#else
#include "cc/gpu/similarity_warp_kernels.cu"
#endif
// clang-format on

#endif  // TF_GULP_CC_GPU_TESTING_KERNELS_ON_HOST_H_
