// The warp kernels' launch geometry, shared by the launcher
// (stream_warp.cc, nvdec_rgb.cc) and the host run of the kernels' own source
// (kernels_on_host_test.cc), so the host test runs the real grid and blocks.
// No CUDA header: it compiles anywhere.
#ifndef TF_GULP_CC_GPU_LAUNCH_GEOMETRY_H_
#define TF_GULP_CC_GPU_LAUNCH_GEOMETRY_H_

#include <cstdint>

namespace tfg {
namespace gpu {

// 32 x 8 threads: a warp covers 32 adjacent output pixels of a row, so its
// stores are contiguous (NCHW) or nearly so (NHWC).
constexpr unsigned kBlockX = 32, kBlockY = 8;

struct LaunchDims {
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
};

// One thread per output pixel; z over the batch (one picture per z block).
inline LaunchDims WarpLaunchDims(int64_t out_height, int64_t out_width, int64_t batch) {
  return {static_cast<unsigned>((out_width + kBlockX - 1) / kBlockX),
          static_cast<unsigned>((out_height + kBlockY - 1) / kBlockY),
          static_cast<unsigned>(batch), kBlockX, kBlockY, 1};
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_LAUNCH_GEOMETRY_H_
