// Host side of the GPU similarity warp: loads the kernels from a fatbin
// (compiled by nvcc from similarity_warp_kernels.cu and embedded by the build)
// through the driver API, and launches them on a caller's stream.
#ifndef TF_GULP_CC_GPU_SIMILARITY_WARP_GPU_H_
#define TF_GULP_CC_GPU_SIMILARITY_WARP_GPU_H_

#include <cuda.h>

#include <cstdint>

#include "cc/gpu/cuda_driver.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/util/status.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {

class GpuSimilarityWarp {
 public:
  // Loads the kernels of `fatbin` into the current CUDA context.
  static Status Create(const CudaDriver* driver, const void* fatbin,
                       GpuSimilarityWarp* out);

  GpuSimilarityWarp() = default;
  ~GpuSimilarityWarp();
  GpuSimilarityWarp(GpuSimilarityWarp&& other) noexcept;
  GpuSimilarityWarp& operator=(GpuSimilarityWarp&& other) noexcept;
  GpuSimilarityWarp(const GpuSimilarityWarp&) = delete;
  GpuSimilarityWarp& operator=(const GpuSimilarityWarp&) = delete;

  // Warps `batch` pictures (geometry `g`, at most 4 channels) on `stream`.
  // Every pointer is device memory: `src` pictures `src_picture_stride` bytes
  // apart, `matrices` [batch, 9], bias/norm/oob_color [channels], `dst` the
  // float output [batch, out_height, out_width, channels] (or NCHW).
  Status Launch(const warp::WarpGeometry& g, int64_t batch, CUdeviceptr src,
                int64_t src_picture_stride, CUdeviceptr matrices,
                CUdeviceptr bias, CUdeviceptr norm, CUdeviceptr oob_color,
                CUdeviceptr dst, CUstream stream) const;

  // The fused variant for decoder surfaces: `pictures` is a device array of
  // `batch` codec::YcbcrPicture whose plane pointers are device memory; the
  // output is 3 channels of out_height x out_width in `layout`.
  Status LaunchYcbcr(int64_t batch, CUdeviceptr pictures, bool bilinear_chroma,
                     CUdeviceptr matrices, CUdeviceptr bias, CUdeviceptr norm,
                     CUdeviceptr oob_color, int64_t out_height, int64_t out_width,
                     warp::Layout layout, CUdeviceptr dst, CUstream stream) const;

  // decode_hevc_warped's kernel (tfg_decode_warp_ycbcr): one picture whose
  // planes are device memory, warped per `w` (region, matrix, bias, norm,
  // oob colour, output size, layout and type, all by value) into `dst`.
  Status LaunchDecodeWarp(const codec::YcbcrPicture& picture, const RegionWarp& w,
                          CUdeviceptr dst, CUstream stream) const;

 private:
  // One thread per output pixel, blocks of kBlockX x kBlockY, z over the batch.
  Status LaunchOverOutput(CUfunction kernel, int64_t out_height, int64_t out_width,
                          int64_t batch, void** args, CUstream stream) const;

  const CudaDriver* driver_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction warp_u8_ = nullptr;
  CUfunction warp_ycbcr_ = nullptr;
  CUfunction decode_warp_ = nullptr;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_SIMILARITY_WARP_GPU_H_
