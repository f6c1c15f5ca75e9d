// What the GPU kernels' TensorFlow glue shares (similarity_warp, decode_hevc,
// decode_hevc_warped): TensorFlow's CUDA stream without any CUDA header (its
// stream_executor handle; the CUstream type is ffnvcodec's), and the pinned
// host memory their CPU fallbacks stage pictures in.
#ifndef TF_GULP_OPS_FRAMEWORK_GPU_KERNEL_H_
#define TF_GULP_OPS_FRAMEWORK_GPU_KERNEL_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/gpu/nvdec_api.h"  // CUstream
#include "tensorflow/core/framework/allocator.h"
#include "tensorflow/core/framework/device_base.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "xla/stream_executor/stream.h"

namespace tf_gulp {

// Host memory the GPU copies from and to directly (the fallbacks' staging).
inline ::tensorflow::AllocatorAttributes PinnedHost() {
  ::tensorflow::AllocatorAttributes attr;
  attr.set_on_host(true);
  attr.set_gpu_compatible(true);
  return attr;
}

// TensorFlow's compute stream of the kernel's GPU device as a CUstream (what
// TensorFlow's own gpu_device.cc hands to CUDA); an Internal error naming
// `op` where the device has no device context or stream.
inline absl::Status ComputeStream(::tensorflow::OpKernelContext* ctx, const char* op,
                                  CUstream* stream) {
  if (ctx->op_device_context() == nullptr) {
    return absl::InternalError(absl::StrCat(op, ": no GPU device context"));
  }
  auto* s = ctx->op_device_context()->stream();
  if (s == nullptr) return absl::InternalError(absl::StrCat(op, ": the GPU device has no stream"));
  *stream = static_cast<CUstream>(s->platform_specific_handle().stream);
  return absl::OkStatus();
}

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_GPU_KERNEL_H_
