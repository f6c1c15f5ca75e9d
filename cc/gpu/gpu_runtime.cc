#include "cc/gpu/gpu_runtime.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace {
// ffnvcodec's loader reports what it could not load through these macros;
// the text goes into our status instead of stderr.
void AppendLoaderLog(void* log, const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  std::string* text = static_cast<std::string*>(log);
  if (!text->empty()) text->append("; ");
  text->append(line);
  while (!text->empty() && text->back() == '\n') text->pop_back();
}
}  // namespace

#define FFNV_LOG_FUNC(logctx, msg, ...) AppendLoaderLog((logctx), (msg), __VA_ARGS__)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <ffnvcodec/dynlink_loader.h>

namespace tfg {
namespace gpu {

const char* GpuPathName(GpuPath path) {
  switch (path) {
    case GpuPath::kCpuOnly: return "cpu";
    case GpuPath::kCpuDecodeGpuWarp: return "cpu_decode_gpu_warp";
    case GpuPath::kNvdecAndGpuWarp: return "nvdec_gpu_warp";
  }
  return "unknown";
}

namespace {

std::string VersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

Status Load(int min_driver_version, GpuRuntime* rt) {
  rt->path = GpuPath::kCpuOnly;
  // The function tables ffnvcodec fills are kept for the process: the
  // libraries stay loaded.
  CudaFunctions* cuda = nullptr;
  std::string log;
  if (cuda_load_functions(&cuda, &log) != 0) {
    return UnavailableError("GPU path unavailable, using the CPU path: the NVIDIA driver's "
                            "libcuda.so.1 cannot be used (", log, "); install the NVIDIA driver "
                            "(R580 or newer) to decode and warp on the GPU");
  }
  auto* get_version = reinterpret_cast<tcuDriverGetVersion_t*>(dlsym(cuda->lib,
                                                                     "cuDriverGetVersion"));
  auto* synchronize = reinterpret_cast<tcuCtxSynchronize_t*>(dlsym(cuda->lib, "cuCtxSynchronize"));
  // ffnvcodec 11.1 loads no cuStreamGetCtx (CUDA 9.2 and later have it).
  auto* stream_ctx = reinterpret_cast<tcuStreamGetCtx_t*>(dlsym(cuda->lib, "cuStreamGetCtx"));
  if (get_version == nullptr || synchronize == nullptr || stream_ctx == nullptr) {
    return UnavailableError("GPU path unavailable, using the CPU path: libcuda.so.1 has no "
                            "cuDriverGetVersion/cuCtxSynchronize/cuStreamGetCtx: not an NVIDIA "
                            "driver library?");
  }
  if (get_version(&rt->driver_version) != CUDA_SUCCESS) {
    return UnavailableError("GPU path unavailable, using the CPU path: cuDriverGetVersion failed");
  }
  if (rt->driver_version < min_driver_version) {
    return UnavailableError("GPU path unavailable, using the CPU path: the NVIDIA driver supports "
                            "CUDA ", VersionText(rt->driver_version), ", the GPU kernels need CUDA ",
                            VersionText(min_driver_version), " (driver R580 or newer); update "
                            "the driver");
  }
  const CUresult init = cuda->cuInit(0);
  if (init != CUDA_SUCCESS) {
    return UnavailableError("GPU path unavailable, using the CPU path: cuInit(0) failed with "
                            "CUDA error ", static_cast<int>(init), " (no usable GPU?)");
  }
  CudaApi& c = rt->cuda;
  c.cuDriverGetVersion = get_version;
  c.cuCtxSynchronize = synchronize;
  c.cuStreamGetCtx = stream_ctx;
#define TFG_COPY(type, name) c.name = cuda->name;
  TFG_FFNVCODEC_CUDA_CALLS(TFG_COPY)
#undef TFG_COPY
  rt->path = GpuPath::kCpuDecodeGpuWarp;

  CuvidFunctions* cuvid = nullptr;
  log.clear();
  if (cuvid_load_functions(&cuvid, &log) != 0 || cuvid->cuvidGetDecoderCaps == nullptr) {
    if (log.empty()) log = "no cuvidGetDecoderCaps";
    return UnavailableError("NVDEC unavailable, decoding on the CPU and warping on the GPU: "
                            "NVIDIA's video decoding library libnvcuvid.so.1 cannot be used (",
                            log, "); in a container, start it with "
                            "NVIDIA_DRIVER_CAPABILITIES=compute,utility,video");
  }
  NvdecApi& n = rt->nvdec;
#define TFG_COPY(type, name) n.name = cuvid->name;
  TFG_FFNVCODEC_NVDEC_CALLS(TFG_COPY)
#undef TFG_COPY
  rt->path = GpuPath::kNvdecAndGpuWarp;
  return Status::Ok();
}

}  // namespace

Status LoadGpuRuntime(int min_driver_version, GpuRuntime* runtime) {
  static GpuRuntime* loaded = new GpuRuntime;
  static Status status;
  static int loaded_for = 0;
  static std::once_flag once;
  std::call_once(once, [&] {
    loaded_for = min_driver_version;
    status = Load(min_driver_version, loaded);
  });
  if (min_driver_version != loaded_for) {
    return InternalError("LoadGpuRuntime called for driver ", min_driver_version,
                         " after ", loaded_for);
  }
  *runtime = *loaded;
  return status;
}

}  // namespace gpu
}  // namespace tfg
