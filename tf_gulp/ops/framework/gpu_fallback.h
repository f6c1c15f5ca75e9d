// The CPU fallback that the decode-and-warp GPU kernels share
// (decode_hevc_warped, decode_jpeg_warped; decode_hevc takes its warnings and
// its one copy). Where the GPU path is missing, the whole batch is made on the
// CPU in pinned memory and copied over once. Where one picture cannot go to
// the GPU, that picture is made on the CPU and copied into its slot once every
// GPU picture is queued. A failed picture is reported the way the CPU kernel
// reports it. Each kind of fallback is logged once per op.
#ifndef TF_GULP_OPS_FRAMEWORK_GPU_FALLBACK_H_
#define TF_GULP_OPS_FRAMEWORK_GPU_FALLBACK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/util/first_error.h"
#include "cc/util/status.h"
#include "tensorflow/core/framework/device.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/platform/logging.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/gpu_kernel.h"

namespace tf_gulp {

// Logs once per kind and per op that `op` runs on the CPU (`on_cpu` says
// what it does there): once for a whole batch, once for single pictures that
// `engine` (nvJPEG, NVDEC) cannot take.
class OnHostWarnings {
 public:
  OnHostWarnings(const char* op, const char* on_cpu, const char* engine)
      : op_(op), on_cpu_(on_cpu), engine_(engine) {}

  void Warn(bool per_picture, const std::string& why) {
    std::call_once(per_picture ? picture_ : batch_, [&] {
      LOG(WARNING) << "tf_gulp: " << op_ << " on a GPU device " << on_cpu_
                   << (per_picture ? absl::StrCat(" (for pictures ", engine_,
                                                  " cannot take; others use ", engine_, ")")
                                   : std::string())
                   << ": " << why;
    });
  }

 private:
  const char* op_;
  const char* on_cpu_;
  const char* engine_;
  std::once_flag batch_, picture_;
};

// What the decode-and-warp kernels do on the CPU, in their warnings.
inline constexpr char kDecodesAndWarpsOnCpu[] =
    "decodes and warps on the CPU and copies the result to the GPU";

// The pictures of one op call that were made on the CPU. Each one's pinned
// result is kept, in order, until it is copied into its slot of the output.
// The lock also guards the kernel's other allocate_temp calls, because the
// body's callbacks run on several threads at once.
class HostPictures {
 public:
  // allocate_temp under the lock.
  absl::Status AllocateTemp(::tensorflow::OpKernelContext* ctx, ::tensorflow::DataType dtype,
                            const ::tensorflow::TensorShape& shape, ::tensorflow::Tensor* out,
                            ::tensorflow::AllocatorAttributes attr = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    return ctx->allocate_temp(dtype, shape, out, attr);
  }

  // Runs `f` under the lock: for the kernel's own state that its
  // allocate_temp callers share.
  template <typename F>
  void Locked(F f) {
    std::lock_guard<std::mutex> lock(mu_);
    f();
  }

  // Pinned memory for one picture of `output` (shape [1, rest of output]).
  tfg::Status AllocatePicture(::tensorflow::OpKernelContext* ctx,
                              const ::tensorflow::Tensor& output, ::tensorflow::Tensor* host) {
    ::tensorflow::TensorShape shape = output.shape();
    shape.set_dim(0, 1);
    const absl::Status s = AllocateTemp(ctx, output.dtype(), shape, host, PinnedHost());
    return s.ok() ? tfg::Status::Ok() : tfg::InternalError(s.message());
  }

  // Picture i is made: `host` goes into slot i of the output.
  void Add(int64_t i, ::tensorflow::Tensor host) {
    std::lock_guard<std::mutex> lock(mu_);
    on_host_.push_back(i);
    host_.push_back(std::move(host));
  }

  // Copies every picture into its slot of `output`, then runs `done`. The
  // first failed copy's error goes to `ctx`. `self` keeps the pictures alive
  // until the last copy ends; it may share ownership with the whole batch.
  static void CopyIntoSlots(std::shared_ptr<HostPictures> self,
                            ::tensorflow::OpKernelContext* ctx, ::tensorflow::Tensor* output,
                            ::tensorflow::AsyncOpKernel::DoneCallback done) {
    if (self->on_host_.empty()) {
      done();
      return;
    }
    auto* device = static_cast<::tensorflow::Device*>(ctx->device());
    auto left = std::make_shared<std::atomic<int>>(static_cast<int>(self->on_host_.size()));
    auto shared_done =
        std::make_shared<::tensorflow::AsyncOpKernel::DoneCallback>(std::move(done));
    for (int64_t i : self->on_host_) self->slots_.push_back(output->Slice(i, i + 1));
    for (size_t k = 0; k < self->on_host_.size(); ++k) {
      ctx->op_device_context()->CopyCPUTensorToDevice(
          &self->host_[k], device, &self->slots_[k],
          [ctx, self, left, shared_done](const absl::Status& s) {
            // The callbacks may run at once on several threads. The first
            // error is kept under a lock and set once, by the last callback,
            // because SetStatus from each one would race.
            self->copy_error_.Note(s);
            if (--*left == 0) {
              if (self->copy_error_.failed()) ctx->SetStatus(self->copy_error_.status());
              (*shared_done)();
            }
          });
    }
  }

 private:
  std::mutex mu_;                        // guards allocate_temp and the two below
  std::vector<int64_t> on_host_;         // the pictures made on the CPU ...
  std::vector<::tensorflow::Tensor> host_;   // ... their pinned results, same order
  std::vector<::tensorflow::Tensor> slots_;  // their slots of the output, alive for the copies
  tfg::FirstError<absl::Status> copy_error_;
};

// The first failed picture's status, worded as the CPU kernel words it
// ("op: picture i (element e): ..."; the elements are input 4), set on `ctx`.
// Returns false when a picture failed.
inline bool SetFirstPictureError(::tensorflow::OpKernelContext* ctx, const char* op,
                                 const std::vector<tfg::Status>& statuses) {
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (!statuses[i].ok()) {
      ctx->SetStatus(absl::Status(
          ToTfStatus(statuses[i]).code(),
          absl::StrCat(op, ": picture ", i, " (element ",
                       ctx->input(4).flat<int64_t>()(static_cast<int64_t>(i)),
                       "): ", statuses[i].message())));
      return false;
    }
  }
  return true;
}

// Every picture's kernel is queued: the first failed picture's error as
// SetFirstPictureError words it, else the pictures made on the CPU copied
// into their slots of `output`; then `done`.
inline void FinishBatch(::tensorflow::OpKernelContext* ctx, const char* op,
                        const std::vector<tfg::Status>& statuses,
                        std::shared_ptr<HostPictures> on_host, ::tensorflow::Tensor* output,
                        ::tensorflow::AsyncOpKernel::DoneCallback done) {
  if (!SetFirstPictureError(ctx, op, statuses)) {
    done();
    return;
  }
  HostPictures::CopyIntoSlots(std::move(on_host), ctx, output, std::move(done));
}

// Pinned memory for a whole batch shaped like `output`, which the CPU path
// fills and CopyBatchToDevice copies.
inline absl::Status AllocateHostBatch(::tensorflow::OpKernelContext* ctx,
                                      const ::tensorflow::Tensor& output,
                                      std::shared_ptr<::tensorflow::Tensor>* host) {
  *host = std::make_shared<::tensorflow::Tensor>();
  return ctx->allocate_temp(output.dtype(), output.shape(), host->get(), PinnedHost());
}

// The whole batch, made on the CPU in pinned `host`, copied into `output` in
// one copy; the copy's status goes to `ctx`, then `done` runs.
inline void CopyBatchToDevice(::tensorflow::OpKernelContext* ctx,
                              std::shared_ptr<::tensorflow::Tensor> host,
                              ::tensorflow::Tensor* output,
                              ::tensorflow::AsyncOpKernel::DoneCallback done) {
  auto* device = static_cast<::tensorflow::Device*>(ctx->device());
  ctx->op_device_context()->CopyCPUTensorToDevice(
      host.get(), device, output, [ctx, host, done = std::move(done)](const absl::Status& s) {
        ctx->SetStatus(s);
        done();
      });
}

}  // namespace tf_gulp

// Registers a decode-and-warp op's GPU kernel. The bytes, their names and the
// random keys' parts are read on the host (the container and JPEG headers are
// parsed there, the matrices drawn there); only the output lives in GPU memory.
#define TF_GULP_REGISTER_DECODE_WARPED_GPU_KERNEL(op_name, kernel)  \
  REGISTER_KERNEL_BUILDER(Name(op_name)                             \
                              .Device(::tensorflow::DEVICE_GPU)     \
                              .HostMemory("contents")               \
                              .HostMemory("what")                   \
                              .HostMemory("seed")                   \
                              .HostMemory("epoch")                  \
                              .HostMemory("elements"),              \
                          kernel)

#endif  // TF_GULP_OPS_FRAMEWORK_GPU_FALLBACK_H_
