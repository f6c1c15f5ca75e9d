#include "cc/gpu/nvdec_rgb.h"

#include <string>

#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/launch_geometry.h"

namespace tfg {
namespace gpu {
namespace {

// The CPU decoder's reading of the signalled matrix (cc/codec/hevc_decoder.cc):
// BT.709, BT.2020 (non-constant and constant luminance), else BT.601.
codec::YcbcrStandard StandardOf(int matrix_coefficients) {
  if (matrix_coefficients == 1) return codec::YcbcrStandard::kBt709;
  if (matrix_coefficients == 9 || matrix_coefficients == 10) return codec::YcbcrStandard::kBt2020;
  return codec::YcbcrStandard::kBt601;
}

// Pushes `context` for the scope; pops it on every path out.
class ContextScope {
 public:
  ContextScope(const CudaApi& api, CUcontext context) : api_(api) {
    result_ = api_.cuCtxPushCurrent(context);
  }
  ~ContextScope() {
    CUcontext popped;
    if (result_ == CUDA_SUCCESS) api_.cuCtxPopCurrent(&popped);
  }
  CUresult result() const { return result_; }

 private:
  const CudaApi& api_;
  CUresult result_;
};

}  // namespace

codec::YcbcrPicture YcbcrOf(const NvdecPicture& p) {
  codec::YcbcrPicture y;
  y.width = p.width;
  y.height = p.height;
  y.y = reinterpret_cast<const uint8_t*>(p.luma);
  y.y_stride = p.pitch;
  y.cb = reinterpret_cast<const uint8_t*>(p.chroma);  // NV12: Cb Cr interleaved
  y.cr = y.cb + 1;
  y.cb_stride = y.cr_stride = p.pitch;
  y.chroma_step = 2;
  y.shift_x = y.shift_y = 1;
  y.chroma_width = (p.width + 1) / 2;
  y.chroma_height = (p.height + 1) / 2;
  y.matrix = codec::MakeYcbcrMatrix(StandardOf(p.matrix_coefficients), p.full_range);
  return y;
}

Status NvdecRgbDecoder::Get(NvdecRgbDecoder** out) {
  static NvdecRgbDecoder* decoder = nullptr;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    const size_t size = static_cast<size_t>(tfg_similarity_warp_fatbin_end -
                                            tfg_similarity_warp_fatbin);
    if (size == 0) {
      status = UnavailableError(
          "this tf_gulp was built without nvcc, so it holds no GPU kernels; rebuild it on a "
          "machine with the CUDA toolkit's nvcc on PATH (or CUDA_HOME set) to decode with NVDEC");
      return;
    }
    static GpuRuntime runtime;
    status = LoadGpuRuntime(kKernelsMinDriverVersion, &runtime);
    if (!status.ok()) return;  // names the path taken and what is missing
    decoder = new NvdecRgbDecoder(runtime.cuda, runtime.nvdec, tfg_similarity_warp_fatbin, size,
                                  NvdecPoolOptions());
  });
  *out = decoder;
  return status;
}

int NvdecRgbDecoder::pools() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(pools_.size());
}

Status NvdecRgbDecoder::PoolFor(CUcontext context, NvdecPool** pool) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pools_.find(context);
  if (it == pools_.end()) {
    std::unique_ptr<NvdecPool> created;
    TFG_RETURN_IF_ERROR(NvdecPool::Create(&cuda_, &nvdec_, context, options_, &created));
    it = pools_.emplace(context, std::move(created)).first;
  }
  *pool = it->second.get();
  return Status::Ok();
}

Status NvdecRgbDecoder::KernelFor(CUcontext context, const char* name, CUfunction* kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kernels_.find({context, name});
  if (it != kernels_.end()) {
    *kernel = it->second;
    return Status::Ok();
  }
  auto module = modules_.find(context);
  if (module == modules_.end()) {
    CUmodule loaded = nullptr;
    const CUresult r = cuda_.cuModuleLoadData(&loaded, fatbin_);
    if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuModuleLoadData");
    module = modules_.emplace(context, loaded).first;
  }
  const CUresult r = cuda_.cuModuleGetFunction(kernel, module->second, name);
  if (r != CUDA_SUCCESS) {
    return CudaCallError(cuda_, r, (std::string("cuModuleGetFunction(") + name + ")").c_str());
  }
  kernels_[{context, name}] = *kernel;
  return Status::Ok();
}

Status NvdecRgbDecoder::Launch(CUcontext context, const char* name, const LaunchDims& d,
                               void** args, CUstream stream, const char* what) {
  ContextScope scope(cuda_, context);
  if (scope.result() != CUDA_SUCCESS) {
    return CudaCallError(cuda_, scope.result(), "cuCtxPushCurrent", what);
  }
  CUfunction kernel = nullptr;
  TFG_RETURN_IF_ERROR(KernelFor(context, name, &kernel));
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
