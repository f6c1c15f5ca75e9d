// The device check on the real driver: gpu_runtime loads libcuda.so.1 and
// libnvcuvid.so.1 exactly as the op library does; the program's own calls
// come from the same libcuda.so.1 by name.
#include <dlfcn.h>

#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/testing/check_driver.h"

namespace tfg {
namespace gpu {
namespace testing {

namespace {
template <typename T>
bool Find(void* lib, const char* name, T** out) {
  *out = reinterpret_cast<T*>(dlsym(lib, name));
  return *out != nullptr;
}
}  // namespace

void LoadCheckDriver(CheckDriver* d) {
  d->kind = "nvidia driver";
  d->fatbin = tfg_similarity_warp_fatbin;
  d->fatbin_size = EmbeddedFatbinSize();
  GpuRuntime runtime;
  const Status status = LoadGpuRuntime(kKernelsMinDriverVersion, &runtime);
  d->path = GpuPathName(runtime.path);
  d->driver_version = runtime.driver_version;
  d->cuda = runtime.cuda;
  d->nvdec_api = runtime.nvdec;
  if (runtime.path == GpuPath::kCpuOnly) {
    d->kernels = status;
    d->nvdec = status;
    return;
  }
  d->nvdec = runtime.path == GpuPath::kNvdecAndGpuWarp ? Status::Ok() : status;
  if (d->fatbin_size == 0) {
    d->kernels = UnavailableError("built without nvcc: no kernels embedded");
    d->nvdec = d->kernels;
    return;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
  const bool found =
      lib != nullptr && Find(lib, "cuDeviceGet", &d->cuDeviceGet) &&
      Find(lib, "cuDeviceGetName", &d->cuDeviceGetName) &&
      Find(lib, "cuDeviceGetAttribute", &d->cuDeviceGetAttribute) &&
      Find(lib, "cuDevicePrimaryCtxRetain", &d->cuDevicePrimaryCtxRetain) &&
      Find(lib, "cuCtxSetCurrent", &d->cuCtxSetCurrent) &&
      Find(lib, "cuMemAlloc_v2", &d->cuMemAlloc) && Find(lib, "cuMemFree_v2", &d->cuMemFree) &&
      Find(lib, "cuMemsetD8Async", &d->cuMemsetD8Async) &&
      Find(lib, "cuMemcpyHtoDAsync_v2", &d->cuMemcpyHtoDAsync) &&
      Find(lib, "cuMemcpyDtoHAsync_v2", &d->cuMemcpyDtoHAsync) &&
      Find(lib, "cuStreamCreate", &d->cuStreamCreate) &&
      Find(lib, "cuStreamDestroy_v2", &d->cuStreamDestroy) &&
      Find(lib, "cuLaunchHostFunc", &d->cuLaunchHostFunc) &&
      Find(lib, "cuCtxCreate_v2", &d->cuCtxCreate) &&
      Find(lib, "cuCtxDestroy_v2", &d->cuCtxDestroy) &&
      Find(lib, "cuCtxGetCurrent", &d->cuCtxGetCurrent) &&
      Find(lib, "cuMemGetInfo_v2", &d->cuMemGetInfo);
  if (!found) {
    d->kernels = UnavailableError("libcuda.so.1 lacks a call the device check needs: ",
                                  dlerror() ? dlerror() : "unknown");
    d->nvdec = d->kernels;
    return;
  }
  d->on_gpu = true;
  d->kernels = Status::Ok();
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
