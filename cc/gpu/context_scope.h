// Pushes a CUDA context for a scope and pops it on every path out, through
// the driver table gpu_runtime loads (nvdec_api.h): the launchers of the op
// library (stream_warp.cc, nvdec_rgb.cc) share it.
#ifndef TF_GULP_CC_GPU_CONTEXT_SCOPE_H_
#define TF_GULP_CC_GPU_CONTEXT_SCOPE_H_

#include "cc/gpu/nvdec_api.h"

namespace tfg {
namespace gpu {

class ContextScope {
 public:
  ContextScope(const CudaApi& api, CUcontext context) : api_(api) {
    result_ = api_.cuCtxPushCurrent(context);
  }
  ~ContextScope() {
    CUcontext popped;
    if (result_ == CUDA_SUCCESS) api_.cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

  bool pushed() const { return result_ == CUDA_SUCCESS; }
  CUresult result() const { return result_; }

 private:
  const CudaApi& api_;
  CUresult result_;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_CONTEXT_SCOPE_H_
