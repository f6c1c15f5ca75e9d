// Finds what of the GPU path this machine can run, at run time, and fills the
// decoder pool's function tables (nvdec_api.h) from the driver libraries.
//
// Nothing links libcuda.so.1 or libnvcuvid.so.1: ffnvcodec's header-only
// loader (dynlink_loader.h) dlopens them. What is missing decides the path:
//   - no libcuda.so.1 (no NVIDIA driver)            -> the CPU path
//   - a driver older than the GPU kernels need      -> the CPU path
//   - no libnvcuvid.so.1 (e.g. a container started
//     without the `video` driver capability)       -> CPU decoding + GPU warp
//   - all present                                   -> NVDEC decoding + GPU warp
// and the status says which, and how to get the rest.
#ifndef TF_GULP_CC_GPU_GPU_RUNTIME_H_
#define TF_GULP_CC_GPU_GPU_RUNTIME_H_

#include <string>

#include "cc/gpu/nvdec_api.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

// The oldest driver the embedded kernels load on, as cuDriverGetVersion
// reports it (1000 * major + 10 * minor). nvcc 13 writes PTX ISA 9.0 and a
// cubin ABI that CUDA 12 drivers reject: CUDA 13.0, i.e. driver R580 or newer.
constexpr int kKernelsMinDriverVersion = 13000;

enum class GpuPath {
  kCpuOnly,           // decode and warp on the CPU
  kCpuDecodeGpuWarp,  // libavcodec decodes, the GPU warps
  kNvdecAndGpuWarp,   // NVDEC decodes, the GPU warps
};
const char* GpuPathName(GpuPath path);

struct GpuRuntime {
  GpuPath path = GpuPath::kCpuOnly;
  int driver_version = 0;  // 0 where there is no driver
  CudaApi cuda;            // filled unless path == kCpuOnly
  NvdecApi nvdec;          // filled if path == kNvdecAndGpuWarp
};

// Loads the driver libraries (once per process; later calls return the same
// outcome) and picks the path. OK means the whole GPU path is available; an
// Unavailable status names the fallback in `runtime->path`, what is missing
// and how to get it. `min_driver_version` is what the kernels need
// (kKernelsMinDriverVersion; tests pass others).
Status LoadGpuRuntime(int min_driver_version, GpuRuntime* runtime);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_GPU_RUNTIME_H_
