#include "cc/gpu/similarity_warp_gpu.h"

#include <utility>

#include "cc/gpu/launch_geometry.h"

namespace tfg {
namespace gpu {
namespace {

constexpr int64_t kMaxChannels = 4;  // the kernel keeps a pixel in registers
constexpr int64_t kMaxBatch = 65535;  // the grid's z dimension

Status CheckBatch(int64_t batch) {
  if (batch > kMaxBatch) {
    return InvalidArgumentError("similarity_warp on the GPU takes at most ", kMaxBatch,
                                " pictures per launch, got ", batch);
  }
  return Status::Ok();
}

}  // namespace

Status GpuSimilarityWarp::Create(const CudaDriver* driver, const void* fatbin,
                                 GpuSimilarityWarp* out) {
  GpuSimilarityWarp w;
  w.driver_ = driver;
  TFG_CU_RETURN_IF_ERROR(*driver, cuModuleLoadData(&w.module_, fatbin));
  TFG_CU_RETURN_IF_ERROR(
      *driver, cuModuleGetFunction(&w.warp_u8_, w.module_, "tfg_similarity_warp_u8"));
  TFG_CU_RETURN_IF_ERROR(
      *driver, cuModuleGetFunction(&w.warp_ycbcr_, w.module_, "tfg_similarity_warp_ycbcr"));
  TFG_CU_RETURN_IF_ERROR(
      *driver, cuModuleGetFunction(&w.decode_warp_, w.module_, "tfg_decode_warp_ycbcr"));
  *out = std::move(w);
  return Status::Ok();
}

GpuSimilarityWarp::~GpuSimilarityWarp() {
  if (module_ != nullptr) driver_->cuModuleUnload(module_);
}

GpuSimilarityWarp::GpuSimilarityWarp(GpuSimilarityWarp&& other) noexcept {
  *this = std::move(other);
}

GpuSimilarityWarp& GpuSimilarityWarp::operator=(GpuSimilarityWarp&& other) noexcept {
  std::swap(driver_, other.driver_);
  std::swap(module_, other.module_);
  std::swap(warp_u8_, other.warp_u8_);
  std::swap(warp_ycbcr_, other.warp_ycbcr_);
  std::swap(decode_warp_, other.decode_warp_);
  return *this;
}

Status GpuSimilarityWarp::Launch(const warp::WarpGeometry& g, int64_t batch,
                                 CUdeviceptr src, int64_t src_picture_stride,
                                 CUdeviceptr matrices, CUdeviceptr bias,
                                 CUdeviceptr norm, CUdeviceptr oob_color,
                                 CUdeviceptr dst, CUstream stream) const {
  if (g.channels > kMaxChannels) {
    return InvalidArgumentError("similarity_warp on the GPU takes at most ",
                                kMaxChannels, " channels, got ", g.channels);
  }
  if (batch <= 0) return Status::Ok();
  TFG_RETURN_IF_ERROR(CheckBatch(batch));
  long long stride = src_picture_stride;
  int in_height = static_cast<int>(g.in_height), in_width = static_cast<int>(g.in_width);
  int channels = static_cast<int>(g.channels);
  int out_height = static_cast<int>(g.out_height), out_width = static_cast<int>(g.out_width);
  int nchw = g.layout == warp::Layout::kNCHW ? 1 : 0;
  void* args[] = {&src,  &stride,     &in_height, &in_width,  &channels,
                  &matrices, &bias,   &norm,      &oob_color, &out_height,
                  &out_width, &nchw,  &dst};
  return LaunchOverOutput(warp_u8_, g.out_height, g.out_width, batch, args, stream);
}

Status GpuSimilarityWarp::LaunchYcbcr(int64_t batch, CUdeviceptr pictures, bool bilinear_chroma,
                                      CUdeviceptr matrices, CUdeviceptr bias, CUdeviceptr norm,
                                      CUdeviceptr oob_color, int64_t out_height,
                                      int64_t out_width, warp::Layout layout, CUdeviceptr dst,
                                      CUstream stream) const {
  if (batch <= 0) return Status::Ok();
  TFG_RETURN_IF_ERROR(CheckBatch(batch));
  int bilinear = bilinear_chroma ? 1 : 0;
  int height = static_cast<int>(out_height), width = static_cast<int>(out_width);
  int nchw = layout == warp::Layout::kNCHW ? 1 : 0;
  void* args[] = {&pictures, &bilinear, &matrices, &bias,  &norm,
                  &oob_color, &height,  &width,    &nchw,  &dst};
  return LaunchOverOutput(warp_ycbcr_, out_height, out_width, batch, args, stream);
}

Status GpuSimilarityWarp::LaunchDecodeWarp(const codec::YcbcrPicture& picture,
                                           const RegionWarp& w, CUdeviceptr dst,
                                           CUstream stream) const {
  codec::YcbcrPicture p = picture;
  RegionWarp warp = w;
  void* args[] = {&p, &warp, &dst};
  return LaunchOverOutput(decode_warp_, w.out_height, w.out_width, 1, args, stream);
}

Status GpuSimilarityWarp::LaunchOverOutput(CUfunction kernel, int64_t out_height,
                                           int64_t out_width, int64_t batch, void** args,
                                           CUstream stream) const {
  const LaunchDims d = WarpLaunchDims(out_height, out_width, batch);
  TFG_CU_RETURN_IF_ERROR(
      *driver_, cuLaunchKernel(kernel, d.grid_x, d.grid_y, d.grid_z, d.block_x, d.block_y,
                               d.block_z, 0, stream, args, nullptr));
  return Status::Ok();
}

}  // namespace gpu
}  // namespace tfg
