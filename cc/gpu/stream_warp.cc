#include "cc/gpu/stream_warp.h"

#include <algorithm>

#include "cc/gpu/context_scope.h"
#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/launch_geometry.h"

namespace tfg {
namespace gpu {
Status StreamWarper::Get(const StreamWarper** out) {
  static const StreamWarper* warper = nullptr;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    status = KernelModules::EmbeddedPresent("to warp on the GPU");
    if (!status.ok()) return;
    GpuRuntime runtime;
    status = LoadGpuRuntime(kKernelsMinDriverVersion, &runtime);
    if (runtime.path == GpuPath::kCpuOnly) return;  // the status says why
    status = Status::Ok();  // NVDEC's absence does not concern the warp
    warper = new StreamWarper(runtime.cuda, KernelModules::Embedded(runtime.cuda));
  });
  *out = warper;
  return status;
}

Status StreamWarper::Check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return Status::Ok();
  const char* name = nullptr;
  if (api_.cuGetErrorName != nullptr && api_.cuGetErrorName(result, &name) == CUDA_SUCCESS &&
      name != nullptr) {
    return InternalError("similarity_warp on the GPU: ", call, " failed: ", name);
  }
  return InternalError("similarity_warp on the GPU: ", call, " failed with CUDA error ",
                       static_cast<int>(result));
}

Status StreamWarper::KernelFor(CUcontext context, CUfunction* kernel) const {
  const Status s = modules_->Get(context, "tfg_similarity_warp_u8", kernel);
  if (!s.ok()) return InternalError("similarity_warp on the GPU: ", s.message());
  return Status::Ok();
}

Status StreamWarper::Launch(const warp::WarpGeometry& g, int64_t pictures, CUdeviceptr src,
                            CUdeviceptr matrices, CUdeviceptr bias, CUdeviceptr norm,
                            CUdeviceptr oob_color, CUdeviceptr dst, CUstream stream) const {
  if (g.channels > kMaxGpuWarpChannels) {
    return InvalidArgumentError("similarity_warp on the GPU takes at most ",
                                kMaxGpuWarpChannels, " channels, got ", g.channels);
  }
  if (pictures <= 0 || g.out_height <= 0 || g.out_width <= 0) return Status::Ok();
  CUcontext context = nullptr;
  TFG_RETURN_IF_ERROR(Check(api_.cuStreamGetCtx(stream, &context), "cuStreamGetCtx"));
  ContextScope scope(api_, context);
  if (!scope.pushed()) return InternalError("similarity_warp on the GPU: cuCtxPushCurrent failed");
  CUfunction kernel = nullptr;
  TFG_RETURN_IF_ERROR(KernelFor(context, &kernel));

  const int64_t in_picture = g.in_height * g.in_width * g.channels;
  const int64_t out_picture = g.out_height * g.out_width * g.channels;
  long long stride = in_picture;
  int in_height = static_cast<int>(g.in_height), in_width = static_cast<int>(g.in_width);
  int channels = static_cast<int>(g.channels);
  int out_height = static_cast<int>(g.out_height), out_width = static_cast<int>(g.out_width);
  int nchw = g.layout == warp::Layout::kNCHW ? 1 : 0;
  for (int64_t first = 0; first < pictures; first += kMaxPicturesPerLaunch) {
    const int64_t count = std::min(kMaxPicturesPerLaunch, pictures - first);
    CUdeviceptr chunk_src = src + first * in_picture;
    CUdeviceptr chunk_matrices = matrices + first * 9 * sizeof(float);
    CUdeviceptr chunk_dst = dst + first * out_picture * sizeof(float);
    void* args[] = {&chunk_src, &stride,    &in_height, &in_width,  &channels,
                    &chunk_matrices, &bias, &norm,      &oob_color, &out_height,
                    &out_width, &nchw,      &chunk_dst};
    const LaunchDims d = WarpLaunchDims(g.out_height, g.out_width, count);
    TFG_RETURN_IF_ERROR(Check(api_.cuLaunchKernel(kernel, d.grid_x, d.grid_y, d.grid_z,
                                                  d.block_x, d.block_y, d.block_z, 0, stream,
                                                  args, nullptr),
                              "cuLaunchKernel(tfg_similarity_warp_u8)"));
  }
  return Status::Ok();
}

Status StreamWarper::LaunchFromHost(const warp::WarpGeometry& g, int64_t clips, int64_t frames,
                                    const float* matrices, const float* bias, const float* norm,
                                    const float* oob_color, CUdeviceptr src, CUdeviceptr params,
                                    CUdeviceptr dst, CUstream stream) const {
  if (g.channels > kMaxGpuWarpChannels) {
    return InvalidArgumentError("similarity_warp on the GPU takes at most ",
                                kMaxGpuWarpChannels, " channels, got ", g.channels);
  }
  const int64_t pictures = clips * frames;
  if (pictures <= 0 || g.out_height <= 0 || g.out_width <= 0) return Status::Ok();
  // One block: a matrix per picture, then bias, norm and oob_color.
  std::vector<float> block(static_cast<size_t>(ParamFloats(pictures, g.channels)));
  for (int64_t i = 0; i < pictures; ++i) {
    std::copy(matrices + 9 * (i / frames), matrices + 9 * (i / frames) + 9, &block[9 * i]);
  }
  float* tail = &block[9 * pictures];
  std::copy(bias, bias + g.channels, tail);
  std::copy(norm, norm + g.channels, tail + g.channels);
  std::copy(oob_color, oob_color + g.channels, tail + 2 * g.channels);
  {
    CUcontext context = nullptr;
    TFG_RETURN_IF_ERROR(Check(api_.cuStreamGetCtx(stream, &context), "cuStreamGetCtx"));
    ContextScope scope(api_, context);
    if (!scope.pushed()) {
      return InternalError("similarity_warp on the GPU: cuCtxPushCurrent failed");
    }
    TFG_RETURN_IF_ERROR(Check(api_.cuMemcpyHtoDAsync(params, block.data(),
                                                     block.size() * sizeof(float), stream),
                              "cuMemcpyHtoDAsync"));
  }
  const CUdeviceptr p_bias = params + 9 * pictures * sizeof(float);
  const CUdeviceptr p_norm = p_bias + g.channels * sizeof(float);
  const CUdeviceptr p_oob = p_norm + g.channels * sizeof(float);
  return Launch(g, pictures, src, params, p_bias, p_norm, p_oob, dst, stream);
}

}  // namespace gpu
}  // namespace tfg
