// The GPU kernels as a fatbin image (sm_75 ... sm_90 code plus PTX for later
// GPUs), embedded by embedded_fatbin.cc.
#ifndef TF_GULP_CC_GPU_EMBEDDED_FATBIN_H_
#define TF_GULP_CC_GPU_EMBEDDED_FATBIN_H_

extern "C" const unsigned char tfg_similarity_warp_fatbin[];
extern "C" const unsigned char tfg_similarity_warp_fatbin_end[];

#include <cstddef>

namespace tfg {
namespace gpu {

// 0 when the build had no nvcc and embedded no kernels.
inline size_t EmbeddedFatbinSize() {
  return static_cast<size_t>(tfg_similarity_warp_fatbin_end - tfg_similarity_warp_fatbin);
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_EMBEDDED_FATBIN_H_
