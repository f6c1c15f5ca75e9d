#include "cc/gpu/nvdec_rgb.h"

#include <algorithm>
#include <string>

#include "cc/gpu/context_scope.h"
#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/launch_geometry.h"

namespace tfg {
namespace gpu {
Status NvdecRgbDecoder::Get(NvdecRgbDecoder** out) {
  static NvdecRgbDecoder* decoder = nullptr;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    status = KernelModules::EmbeddedPresent("to decode with NVDEC");
    if (!status.ok()) return;
    static GpuRuntime runtime;
    status = LoadGpuRuntime(kKernelsMinDriverVersion, &runtime);
    if (!status.ok()) return;  // names the path taken and what is missing
    decoder = new NvdecRgbDecoder(runtime.cuda, runtime.nvdec, KernelModules::Embedded(runtime.cuda),
                                  NvdecPoolOptions());
  });
  *out = decoder;
  return status;
}

int NvdecRgbDecoder::pools() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(pools_.size());
}

NvdecPoolStats NvdecRgbDecoder::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  NvdecPoolStats sum;
  for (const auto& [context, pool] : pools_) sum += pool->Stats();
  return sum;
}

void NvdecRgbDecoder::RaiseMaxSize(int width, int height) {
  std::lock_guard<std::mutex> lock(mu_);
  max_width_ = std::max(max_width_, width);
  max_height_ = std::max(max_height_, height);
  for (auto& [context, pool] : pools_) pool->RaiseMaxSize(max_width_, max_height_);
}

Status NvdecRgbDecoder::PoolFor(CUcontext context, NvdecPool** pool) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pools_.find(context);
  if (it == pools_.end()) {
    std::unique_ptr<NvdecPool> created;
    TFG_RETURN_IF_ERROR(NvdecPool::Create(&cuda_, &nvdec_, context, options_, &created));
    created->RaiseMaxSize(max_width_, max_height_);
    it = pools_.emplace(context, std::move(created)).first;
  }
  *pool = it->second.get();
  return Status::Ok();
}

Status NvdecRgbDecoder::Launch(CUcontext context, const char* name, const LaunchDims& d,
                               void** args, CUstream stream, const char* what) {
  ContextScope scope(cuda_, context);
  if (scope.result() != CUDA_SUCCESS) {
    return CudaCallError(cuda_, scope.result(), "cuCtxPushCurrent", what);
  }
  CUfunction kernel = nullptr;
  TFG_RETURN_IF_ERROR(modules_->Get(context, name, &kernel));
  const CUresult result = cuda_.cuLaunchKernel(kernel, d.grid_x, d.grid_y, d.grid_z, d.block_x,
                                               d.block_y, d.block_z, 0, stream, args, nullptr);
  if (result != CUDA_SUCCESS) {
    return CudaCallError(cuda_, result,
                         (std::string("cuLaunchKernel(") + name + ")").c_str(), what);
  }
  return Status::Ok();
}

Status NvdecRgbDecoder::Convert(CUcontext context, const NvdecPicture& picture,
                                const RgbRegion& r, bool bilinear_chroma, CUdeviceptr dst,
                                CUstream stream, const char* what) {
  if (r.x < 0 || r.y < 0 || r.width < 1 || r.height < 1 || r.x + r.width > picture.width ||
      r.y + r.height > picture.height) {
    return InvalidArgumentError(what, ": region ", r.width, "x", r.height, " at (", r.x, ", ",
                                r.y, ") is outside the decoded ", picture.width, "x",
                                picture.height, " picture");
  }
  codec::YcbcrPicture ycbcr = YcbcrOf(picture);
  int x0 = r.x, y0 = r.y, width = r.width, height = r.height;
  int bilinear = bilinear_chroma ? 1 : 0;
  void* args[] = {&ycbcr, &x0, &y0, &width, &height, &bilinear, &dst};
  return Launch(context, "tfg_ycbcr_to_rgb_u8", WarpLaunchDims(height, width, 1), args, stream,
                what);
}

Status NvdecRgbDecoder::DecodeThen(const uint8_t* data, size_t size, CUstream stream,
                                   const char* what, const PictureUse& use) {
  CUcontext context = nullptr;
  const CUresult r = cuda_.cuStreamGetCtx(stream, &context);
  if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuStreamGetCtx", what);
  NvdecPool* pool = nullptr;
  TFG_RETURN_IF_ERROR(PoolFor(context, &pool));
  NvdecPicture picture;
  TFG_RETURN_IF_ERROR(pool->Decode(data, size, stream, what, &picture));
  // From here on the picture is ours: released on every path, after whatever
  // was queued on the stream (the kernel, if launched).
  const Status status = use(context, picture);
  const Status released = pool->Release(picture, stream);
  return status.ok() ? released : status;
}

Status NvdecRgbDecoder::Decode(const uint8_t* data, size_t size, bool bilinear_chroma,
                               CUstream stream, const char* what, const RgbAllocator& allocate) {
  return DecodeThen(data, size, stream, what, [&](CUcontext context, const NvdecPicture& p) {
    RgbRegion region;
    CUdeviceptr dst = 0;
    TFG_RETURN_IF_ERROR(allocate(p.width, p.height, &region, &dst));
    return Convert(context, p, region, bilinear_chroma, dst, stream, what);
  });
}

}  // namespace gpu
}  // namespace tfg
