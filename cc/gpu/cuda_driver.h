// The CUDA driver API, loaded at run time from libcuda.so.1.
//
// Why not link libcudart or libcuda: the op library must keep loading on
// machines without a GPU or CUDA, and must not bring a second CUDA runtime
// (nvcc 13's) into a process where TensorFlow already runs CUDA 12. Kernels
// are compiled by nvcc into a fatbin that the host embeds and loads with
// cuModuleLoadData; the driver API is forward compatible, so one binary serves
// every driver from r580 on. The types come from the toolkit's cuda.h (this
// file is only built where nvcc, hence cuda.h, is present).
#ifndef TF_GULP_CC_GPU_CUDA_DRIVER_H_
#define TF_GULP_CC_GPU_CUDA_DRIVER_H_

#include <cuda.h>

#include <string>

#include "cc/util/status.h"

namespace tfg {
namespace gpu {

// Function pointers into libcuda.so.1. The versioned symbol names (e.g.
// cuMemAlloc_v2) are the ones cuda.h maps the plain names to.
struct CudaDriver {
#define TFG_CUDA_FUNCTIONS(X)      \
  X(cuInit)                        \
  X(cuDriverGetVersion)            \
  X(cuGetErrorString)              \
  X(cuDeviceGetCount)              \
  X(cuDeviceGet)                   \
  X(cuDeviceGetName)               \
  X(cuDeviceGetAttribute)          \
  X(cuDevicePrimaryCtxRetain)      \
  X(cuDevicePrimaryCtxRelease)     \
  X(cuCtxSetCurrent)               \
  X(cuModuleLoadData)              \
  X(cuModuleUnload)                \
  X(cuModuleGetFunction)           \
  X(cuLaunchKernel)                \
  X(cuMemAlloc)                    \
  X(cuMemFree)                     \
  X(cuMemcpyHtoD)                  \
  X(cuMemcpyDtoH)                  \
  X(cuMemcpyHtoDAsync)             \
  X(cuCtxSynchronize)              \
  X(cuStreamCreate)                \
  X(cuStreamDestroy)               \
  X(cuStreamSynchronize)           \
  X(cuEventCreate)                 \
  X(cuEventDestroy)                \
  X(cuEventRecord)                 \
  X(cuEventSynchronize)            \
  X(cuEventElapsedTime)
#define TFG_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  TFG_CUDA_FUNCTIONS(TFG_CUDA_DECLARE)
#undef TFG_CUDA_DECLARE

  void* library = nullptr;  // dlopen handle
};

// Loads libcuda.so.1 and every function above, then cuInit(0). The returned
// pointer lives for the process (the library is never unloaded). A machine
// without the driver gets an Unavailable status that says what is missing.
Status LoadCudaDriver(const CudaDriver** driver);

// "<call> failed: CUDA_ERROR_...: <description>" for a failed driver call.
Status CudaError(const CudaDriver& driver, CUresult result, const char* call);

// Whether `library` (e.g. "libnvcuvid.so.1", NVDEC's driver library) can be
// loaded on this machine.
bool SharedLibraryPresent(const char* library);

}  // namespace gpu
}  // namespace tfg

#define TFG_CU_RETURN_IF_ERROR(driver, call)                          \
  do {                                                                \
    const CUresult tfg_cu_result = (driver).call;                     \
    if (tfg_cu_result != CUDA_SUCCESS) {                              \
      return ::tfg::gpu::CudaError((driver), tfg_cu_result, #call);   \
    }                                                                 \
  } while (0)

#endif  // TF_GULP_CC_GPU_CUDA_DRIVER_H_
