// The harness's check of the fused Y'CbCr warp (decoder surfaces -> warped,
// normalized RGB): generated NV12 pictures in three colour standards, compared
// with the CPU path (cc/codec/ycbcr.h to RGB, then cc/warp), on the host
// (the kernel's per-pixel function) and on the GPU.
#ifndef TF_GULP_CC_GPU_YCBCR_CHECK_H_
#define TF_GULP_CC_GPU_YCBCR_CHECK_H_

#include <cuda.h>

#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/harness_common.h"
#include "cc/gpu/similarity_warp_gpu.h"

namespace tfg {
namespace gpu {
namespace harness {

// Generated NV12 pictures of o.in_size x o.in_size (even), one Y plane and one
// interleaved CbCr plane each, back to back.
struct Nv12Batch {
  std::vector<uint8_t> luma;    // batch * n * n
  std::vector<uint8_t> chroma;  // batch * (n / 2) * (n / 2) * 2
  std::vector<codec::YcbcrMatrix> matrices;  // per picture: BT.601 full, 709/2020 limited
};
Nv12Batch MakeNv12Batch(const Options& o);

// Pictures of `batch` pointing into the given planes (host or device memory).
std::vector<codec::YcbcrPicture> Nv12Pictures(const Options& o, const Nv12Batch& batch,
                                              const uint8_t* luma, const uint8_t* chroma);

// Host emulation vs the CPU path, nearest chroma into NHWC and bilinear
// chroma into NCHW.
void CheckYcbcrOnHost(const Options& o, const Nv12Batch& batch,
                      const std::vector<float>& matrices, Check* nearest_nhwc,
                      Check* bilinear_nchw);

// The same on the GPU, plus the fused kernel's images/s (bilinear, NCHW,
// ImageNet normalization).
Status CheckYcbcrOnGpu(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
                       const Nv12Batch& batch, const std::vector<float>& matrices,
                       CUstream stream, Check* nearest_nhwc, Check* bilinear_nchw,
                       double* images_per_s);

}  // namespace harness
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_YCBCR_CHECK_H_
