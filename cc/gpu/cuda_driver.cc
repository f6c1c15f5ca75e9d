#include "cc/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace tfg {
namespace gpu {
namespace {

// cuda.h maps plain names to versioned ones with macros (cuMemAlloc ->
// cuMemAlloc_v2); expanding the macro before stringizing gives the symbol
// that libcuda exports for this header's ABI.
#define TFG_STRINGIZE(x) #x
#define TFG_SYMBOL(x) TFG_STRINGIZE(x)

Status Load(CudaDriver* d) {
  d->library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (d->library == nullptr) {
    const char* why = ::dlerror();
    return UnavailableError("the CUDA driver library libcuda.so.1 cannot be loaded (",
                            why ? why : "unknown reason",
                            "): no NVIDIA driver on this machine");
  }
#define TFG_CUDA_LOAD(name)                                                     \
  d->name = reinterpret_cast<decltype(d->name)>(                                \
      ::dlsym(d->library, TFG_SYMBOL(name)));                                   \
  if (d->name == nullptr) {                                                     \
    return UnavailableError("libcuda.so.1 has no ", TFG_SYMBOL(name),           \
                            ": the NVIDIA driver is older than this build needs"); \
  }
  TFG_CUDA_FUNCTIONS(TFG_CUDA_LOAD)
#undef TFG_CUDA_LOAD
  const CUresult init = d->cuInit(0);
  if (init != CUDA_SUCCESS) {
    Status error = CudaError(*d, init, "cuInit(0)");
    return UnavailableError(error.message());
  }
  return Status::Ok();
}

}  // namespace

Status LoadCudaDriver(const CudaDriver** driver) {
  // Loaded once per process; the outcome (success or why not) is kept.
  static CudaDriver* loaded = new CudaDriver;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] { status = Load(loaded); });
  if (!status.ok()) return status;
  *driver = loaded;
  return Status::Ok();
}

Status CudaError(const CudaDriver& driver, CUresult result, const char* call) {
  const char* description = nullptr;
  if (driver.cuGetErrorString == nullptr ||
      driver.cuGetErrorString(result, &description) != CUDA_SUCCESS ||
      description == nullptr) {
    description = "unknown CUDA error";
  }
  return InternalError(call, " failed with CUDA error ", static_cast<int>(result),
                       ": ", description);
}

bool SharedLibraryPresent(const char* library) {
  void* handle = ::dlopen(library, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  ::dlclose(handle);
  return true;
}

}  // namespace gpu
}  // namespace tfg
