// What the device check (device_check.cc) runs the shipped GPU code on: the
// driver tables the op library uses (CudaApi/NvdecApi from gpu_runtime, the
// embedded fatbin), plus the few calls a test program needs and the op
// library does not (device memory, copies, streams, device queries).
//
// Two implementations, one program: check_driver_gpu.cc (the real driver,
// loaded exactly as the op library loads it) and check_driver_host.cc (the
// dry run: a host stand-in whose cuLaunchKernel runs the kernels' own source
// on the CPU, and no NVDEC), so `tools/gpu_device_check.sh --dry-run` runs the
// same phases on a machine without a GPU.
#ifndef TF_GULP_CC_GPU_TESTING_CHECK_DRIVER_H_
#define TF_GULP_CC_GPU_TESTING_CHECK_DRIVER_H_

#include <cstddef>
#include <string>

#include "cc/gpu/nvdec_api.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {
namespace testing {

typedef CUresult CUDAAPI tcuCtxSetCurrent_t(CUcontext context);
typedef void (*CheckHostFn)(void* data);
typedef CUresult CUDAAPI tcuLaunchHostFunc_t(CUstream stream, CheckHostFn fn, void* data);
typedef CUresult CUDAAPI tcuCtxGetCurrent_t(CUcontext* context);
typedef CUresult CUDAAPI tcuMemGetInfo_t(size_t* free, size_t* total);

struct CheckDriver {
  std::string kind;        // "nvidia driver" or "host stand-in (dry run)"
  bool on_gpu = false;     // kernels run on a GPU (false for the stand-in)
  Status kernels;          // OK when the warp kernels can run
  Status nvdec;            // OK when NVDEC can decode
  std::string path;        // GpuPathName
  int driver_version = 0;
  CudaApi cuda;            // what the shipped code calls
  NvdecApi nvdec_api;
  const void* fatbin = nullptr;  // the op library's embedded kernels
  size_t fatbin_size = 0;

  // The test program's own calls. Uploads are cuMemcpyHtoDAsync on the
  // kernels' stream only: a pageable cuMemcpyHtoD on the NULL stream is not
  // ordered before a launch on a non-blocking stream, so it is not offered.
  tcuDeviceGet* cuDeviceGet = nullptr;
  tcuDeviceGetName* cuDeviceGetName = nullptr;
  tcuDeviceGetAttribute* cuDeviceGetAttribute = nullptr;
  tcuDevicePrimaryCtxRetain* cuDevicePrimaryCtxRetain = nullptr;
  tcuCtxSetCurrent_t* cuCtxSetCurrent = nullptr;
  tcuMemAlloc_v2* cuMemAlloc = nullptr;
  tcuMemFree_v2* cuMemFree = nullptr;
  tcuMemsetD8Async* cuMemsetD8Async = nullptr;
  tcuMemcpyHtoDAsync_v2* cuMemcpyHtoDAsync = nullptr;
  tcuMemcpyDtoHAsync_v2* cuMemcpyDtoHAsync = nullptr;
  tcuStreamCreate* cuStreamCreate = nullptr;
  tcuStreamDestroy_v2* cuStreamDestroy = nullptr;
  // The situations phase's (tf_situations.cc): a host function queued on a
  // stream, a second context on the device, the thread's current context.
  tcuLaunchHostFunc_t* cuLaunchHostFunc = nullptr;
  tcuCtxCreate_v2* cuCtxCreate = nullptr;
  tcuCtxDestroy_v2* cuCtxDestroy = nullptr;
  tcuCtxGetCurrent_t* cuCtxGetCurrent = nullptr;
  // Free and total device memory (the decoders' footprint is measured by it).
  tcuMemGetInfo_t* cuMemGetInfo = nullptr;
};

// Fills `driver`; never fails: what is missing is in driver->kernels / nvdec.
void LoadCheckDriver(CheckDriver* driver);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_CHECK_DRIVER_H_
