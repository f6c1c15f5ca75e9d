// The one loader of the GPU kernels' fatbin: its module loaded once per CUDA
// context (cuModuleLoadData), its kernels looked up by name once per context.
//
// Why one: similarity_warp's launcher (stream_warp) and the NVDEC paths
// (nvdec_rgb, nvdec_warp) launch kernels of the same fatbin; one shared loader
// (KernelModules::Embedded) keeps one module per GPU in the process, and the
// device check (cc/gpu/testing/device_check.cc) loads through it as the ops do.
#ifndef TF_GULP_CC_GPU_KERNEL_MODULES_H_
#define TF_GULP_CC_GPU_KERNEL_MODULES_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cc/gpu/nvdec_api.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

class KernelModules {
 public:
  // `cuda` needs cuModuleLoadData, cuModuleGetFunction and cuGetErrorName;
  // `fatbin` must outlive this.
  KernelModules(const CudaApi& cuda, const void* fatbin, size_t fatbin_size)
      : cuda_(cuda), fatbin_(fatbin), fatbin_size_(fatbin_size) {}

  // The process-wide loader of the embedded fatbin (embedded_fatbin.h) over
  // `cuda` (gpu_runtime's table; the first caller's is kept). Null when the
  // build embedded no kernels.
  static KernelModules* Embedded(const CudaApi& cuda);

  // Ok when the build embedded the kernels; else Unavailable, saying how to
  // rebuild with them, `to` do what the caller does ("to warp on the GPU").
  static Status EmbeddedPresent(const char* to);

  // Kernel `name` in `context`, which the caller has pushed current. A failed
  // load is not cached: the next call tries again. Thread safe.
  Status Get(CUcontext context, const char* name, CUfunction* kernel);

  // Modules loaded so far (one per context).
  int modules() const;

 private:
  const CudaApi cuda_;
  const void* fatbin_;
  size_t fatbin_size_;
  mutable std::mutex mu_;
  std::map<CUcontext, CUmodule> modules_;  // live for the process
  std::map<std::pair<CUcontext, std::string>, CUfunction> kernels_;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_KERNEL_MODULES_H_
