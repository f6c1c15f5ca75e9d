// The device check's dry run (tools/gpu_device_check.sh --dry-run): a host
// stand-in for the CUDA driver. Device memory is host memory, every call runs
// at once (streams are in order trivially), and cuLaunchKernel runs the
// kernels' own source (similarity_warp_kernels.cu compiled as C++,
// kernels_on_host.h) over the launch's whole grid. No NVDEC: the dry run
// reports it unavailable, as a GPU machine without the `video` capability does.
// clang-format off: the kernels need the launch stand-in first.
#include "cc/gpu/testing/kernels_on_host.h"
// clang-format on

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "cc/gpu/testing/check_driver.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

constexpr CUresult kInvalid = static_cast<CUresult>(1);
const CUcontext kContext = reinterpret_cast<CUcontext>(0xC0);
const char* const kKernels[] = {"tfg_similarity_warp_u8", "tfg_similarity_warp_ycbcr",
                                "tfg_ycbcr_to_rgb_u8", "tfg_decode_warp_ycbcr",
                                "tfg_color_levels"};
constexpr unsigned char kStandInFatbin[] = "host stand-in: the kernels are compiled in";

template <typename T>
T Arg(void** args, int i) {
  return *static_cast<T*>(args[i]);
}

CUresult CUDAAPI GetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
CUresult CUDAAPI ErrorName(CUresult r, const char** name) {
  *name = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_INVALID_VALUE";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI Push(CUcontext) { return CUDA_SUCCESS; }
CUresult CUDAAPI Pop(CUcontext* c) { if (c) *c = kContext; return CUDA_SUCCESS; }
CUresult CUDAAPI Sync() { return CUDA_SUCCESS; }
CUresult CUDAAPI EventCreate(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI EventDestroy(CUevent e) { delete reinterpret_cast<int*>(e); return CUDA_SUCCESS; }
CUresult CUDAAPI EventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI EventQuery(CUevent) { return CUDA_SUCCESS; }
CUresult CUDAAPI EventSync(CUevent) { return CUDA_SUCCESS; }
CUresult CUDAAPI StreamSync(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI StreamGetCtx(CUstream, CUcontext* c) { *c = kContext; return CUDA_SUCCESS; }
CUresult CUDAAPI ModuleLoad(CUmodule* m, const void* image) {
  if (image != kStandInFatbin) return kInvalid;
  *m = reinterpret_cast<CUmodule>(0xD0);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI GetFunction(CUfunction* f, CUmodule, const char* name) {
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    if (std::strcmp(kKernels[i], name) == 0) {
      *f = reinterpret_cast<CUfunction>(i + 1);
      return CUDA_SUCCESS;
    }
  }
  return static_cast<CUresult>(500);  // CUDA_ERROR_NOT_FOUND
}
CUresult CUDAAPI Launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned, CUstream, void** a, void**) {
  const LaunchDims d{gx, gy, gz, bx, by, bz};
  switch (reinterpret_cast<size_t>(f)) {
    case 1:
      LaunchOnHost(d, [&] {
        tfg_similarity_warp_u8(
            reinterpret_cast<const uint8_t*>(Arg<CUdeviceptr>(a, 0)), Arg<long long>(a, 1),
            Arg<int>(a, 2), Arg<int>(a, 3), Arg<int>(a, 4),
            reinterpret_cast<const float*>(Arg<CUdeviceptr>(a, 5)),
            reinterpret_cast<const float*>(Arg<CUdeviceptr>(a, 6)),
            reinterpret_cast<const float*>(Arg<CUdeviceptr>(a, 7)),
            reinterpret_cast<const float*>(Arg<CUdeviceptr>(a, 8)), Arg<int>(a, 9),
            Arg<int>(a, 10), Arg<int>(a, 11), reinterpret_cast<float*>(Arg<CUdeviceptr>(a, 12)));
      });
      return CUDA_SUCCESS;
    case 3:
      LaunchOnHost(d, [&] {
        tfg_ycbcr_to_rgb_u8(Arg<codec::YcbcrPicture>(a, 0), Arg<int>(a, 1), Arg<int>(a, 2),
                            Arg<int>(a, 3), Arg<int>(a, 4), Arg<int>(a, 5),
                            reinterpret_cast<uint8_t*>(Arg<CUdeviceptr>(a, 6)));
      });
      return CUDA_SUCCESS;
    case 4:
      LaunchOnHost(d, [&] {
        tfg_decode_warp_ycbcr(Arg<codec::YcbcrPicture>(a, 0), Arg<RegionWarp>(a, 1),
                              reinterpret_cast<void*>(Arg<CUdeviceptr>(a, 2)));
      });
      return CUDA_SUCCESS;
    case 5:  // shared memory and __syncthreads: a block's threads at once
      LaunchOnHostSynced(d, [&] {
        tfg_color_levels(Arg<ColorPlan>(a, 0), reinterpret_cast<void*>(Arg<CUdeviceptr>(a, 1)));
      });
      return CUDA_SUCCESS;
    default:
      return kInvalid;  // tfg_similarity_warp_ycbcr: no shipped launcher uses it
  }
}

CUresult CUDAAPI DeviceGet(CUdevice* d, int) { *d = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI DeviceName(char* name, int len, CUdevice) {
  std::strncpy(name, "host stand-in (dry run)", len);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI DeviceAttribute(int* v, CUdevice_attribute, CUdevice) { *v = 0; return CUDA_SUCCESS; }
CUresult CUDAAPI Retain(CUcontext* c, CUdevice) { *c = kContext; return CUDA_SUCCESS; }
thread_local CUcontext t_current = nullptr;
CUresult CUDAAPI SetCurrent(CUcontext c) { t_current = c; return CUDA_SUCCESS; }
CUresult CUDAAPI GetCurrent(CUcontext* c) { *c = t_current; return CUDA_SUCCESS; }
// Every call runs at once: a host function too.
CUresult CUDAAPI HostFunc(CUstream, CheckHostFn fn, void* data) { fn(data); return CUDA_SUCCESS; }
CUresult CUDAAPI CtxCreate(CUcontext* c, unsigned, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0xC1);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI CtxDestroy(CUcontext) { return CUDA_SUCCESS; }
// The stand-in's "device memory": what MemAlloc handed out, for MemGetInfo.
std::mutex g_memory_mutex;
std::map<CUdeviceptr, size_t> g_allocated;
constexpr size_t kStandInTotal = size_t{16} << 30;

CUresult CUDAAPI MemAlloc(CUdeviceptr* p, size_t n) {
  void* m = std::malloc(n ? n : 1);
  if (m == nullptr) return static_cast<CUresult>(2);
  *p = reinterpret_cast<CUdeviceptr>(m);
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  g_allocated[*p] = n;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI MemFree(CUdeviceptr p) {
  {
    std::lock_guard<std::mutex> lock(g_memory_mutex);
    g_allocated.erase(p);
  }
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI MemGetInfo(size_t* free, size_t* total) {
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  size_t used = 0;
  for (const auto& [p, n] : g_allocated) used += n;
  *total = kStandInTotal;
  *free = used < kStandInTotal ? kStandInTotal - used : 0;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI Memset(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  std::memset(reinterpret_cast<void*>(p), v, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI HtoD(CUdeviceptr dst, const void* src, size_t n, CUstream) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI DtoH(void* dst, CUdeviceptr src, size_t n, CUstream) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI StreamCreate(CUstream* s, unsigned) {
  static int streams = 0;
  *s = reinterpret_cast<CUstream>(static_cast<intptr_t>(0x5000 + ++streams));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI StreamDestroy(CUstream) { return CUDA_SUCCESS; }

}  // namespace

void LoadCheckDriver(CheckDriver* d) {
  d->kind = "host stand-in (dry run)";
  d->on_gpu = false;
  d->path = "dry_run";
  d->driver_version = 13000;
  d->fatbin = kStandInFatbin;
  d->fatbin_size = sizeof(kStandInFatbin);
  d->kernels = Status::Ok();
  d->nvdec = UnavailableError("dry run: the host stand-in driver has no NVDEC");
  CudaApi& c = d->cuda;
  c.cuDriverGetVersion = GetVersion;
  c.cuGetErrorName = ErrorName;
  c.cuCtxPushCurrent = Push;
  c.cuCtxPopCurrent = Pop;
  c.cuCtxSynchronize = Sync;
  c.cuEventCreate = EventCreate;
  c.cuEventDestroy = EventDestroy;
  c.cuEventRecord = EventRecord;
  c.cuEventQuery = EventQuery;
  c.cuEventSynchronize = EventSync;
  c.cuStreamSynchronize = StreamSync;
  c.cuStreamGetCtx = StreamGetCtx;
  c.cuModuleLoadData = ModuleLoad;
  c.cuModuleGetFunction = GetFunction;
  c.cuLaunchKernel = Launch;
  c.cuMemcpyHtoDAsync = HtoD;
  d->cuDeviceGet = DeviceGet;
  d->cuDeviceGetName = DeviceName;
  d->cuDeviceGetAttribute = DeviceAttribute;
  d->cuDevicePrimaryCtxRetain = Retain;
  d->cuCtxSetCurrent = SetCurrent;
  d->cuMemAlloc = MemAlloc;
  d->cuMemFree = MemFree;
  d->cuMemsetD8Async = Memset;
  d->cuMemcpyHtoDAsync = HtoD;
  d->cuMemcpyDtoHAsync = DtoH;
  d->cuStreamCreate = StreamCreate;
  d->cuStreamDestroy = StreamDestroy;
  d->cuLaunchHostFunc = HostFunc;
  d->cuCtxCreate = CtxCreate;
  d->cuCtxDestroy = CtxDestroy;
  d->cuCtxGetCurrent = GetCurrent;
  d->cuMemGetInfo = MemGetInfo;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
