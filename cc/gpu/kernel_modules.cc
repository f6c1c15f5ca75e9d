#include "cc/gpu/kernel_modules.h"

#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/nvdec_pool.h"  // CudaCallError

namespace tfg {
namespace gpu {

KernelModules* KernelModules::Embedded(const CudaApi& cuda) {
  static KernelModules* modules = [&]() -> KernelModules* {
    if (EmbeddedFatbinSize() == 0) return nullptr;
    return new KernelModules(cuda, tfg_similarity_warp_fatbin, EmbeddedFatbinSize());
  }();
  return modules;
}

Status KernelModules::EmbeddedPresent(const char* to) {
  if (EmbeddedFatbinSize() > 0) return Status::Ok();
  return UnavailableError(
      "this tf_gulp was built without nvcc, so it holds no GPU kernels; rebuild it on a machine "
      "with the CUDA toolkit's nvcc on PATH (or CUDA_HOME set) ", to);
}

int KernelModules::modules() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(modules_.size());
}

Status KernelModules::Get(CUcontext context, const char* name, CUfunction* kernel) {
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

}  // namespace gpu
}  // namespace tfg
