// A CPU stand-in for a CUDA kernel launch, so that a .cu file's kernels can be
// compiled as C++ and run on the host: __global__ becomes nothing and
// threadIdx / blockIdx / blockDim are thread-local variables that
// LaunchOnHost sets for every block and thread of the grid before calling the
// kernel. Blocks run in a shuffled order (a GPU gives no order); threads of a
// block run one after another, which is enough for kernels that neither share
// memory nor synchronize (the warp kernels).
#ifndef TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_
#define TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_

#ifdef __CUDACC__
#error "the stand-in is for host compilers; nvcc has the real thing"
#endif

#include <algorithm>
#include <random>
#include <vector>

#include "cc/gpu/launch_geometry.h"

#define __global__

struct StandInDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local StandInDim3 threadIdx, blockIdx, blockDim;

namespace tfg {
namespace gpu {
namespace testing {

// Runs `kernel()` (a call of the kernel with its arguments bound) once per
// thread of the launch `d`.
template <typename Kernel>
void LaunchOnHost(const LaunchDims& d, Kernel kernel, unsigned seed = 1) {
  std::vector<StandInDim3> blocks;
  for (unsigned z = 0; z < d.grid_z; ++z)
    for (unsigned y = 0; y < d.grid_y; ++y)
      for (unsigned x = 0; x < d.grid_x; ++x) blocks.push_back({x, y, z});
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(seed));
  blockDim = {d.block_x, d.block_y, d.block_z};
  for (const StandInDim3& b : blocks) {
    blockIdx = b;
    for (unsigned tz = 0; tz < d.block_z; ++tz)
      for (unsigned ty = 0; ty < d.block_y; ++ty)
        for (unsigned tx = 0; tx < d.block_x; ++tx) {
          threadIdx = {tx, ty, tz};
          kernel();
        }
  }
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_
