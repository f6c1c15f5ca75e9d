// SimilarityWarp's GPU kernel: the warp kernels of cc/gpu on TensorFlow's own
// CUDA stream, launched through the driver API that cc/gpu/gpu_runtime loads
// at run time. Nothing here needs a CUDA header or library at build or link
// time (the stream is TensorFlow's stream_executor handle, the CUDA types are
// ffnvcodec's), so this file is in every build and the op library still loads
// on machines without a GPU; TensorFlow only runs this kernel on a GPU device.
//
// Inputs: `images` in GPU memory; matrices, output_shape, bias, norm and
// oob_color in host memory (HostMemory: checked on the host, then copied to
// the device on the compute stream by cuMemcpyHtoDAsync, the warp queued
// behind the copy; cc/gpu/stream_warp.h's LaunchFromHost). The output comes
// from allocate_output (GPU memory). `done` runs as soon as both are queued:
// no host round trip per call.
//
// Fallback: where the GPU kernels cannot run (a build without nvcc, a driver
// older than R580), the kernel copies the pictures to the host, runs the CPU
// warp (the CPU kernel's code) and copies the result back, and says so once
// in the log. Same results, no GPU speed.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "cc/gpu/stream_warp.h"
#include "tensorflow/core/framework/device.h"
#include "tensorflow/core/framework/device_base.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/op_requires.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/logging.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/gpu_kernel.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/image/image_ops.h"
#include "tf_gulp/ops/image/similarity_warp_args.h"

namespace tf_gulp {
namespace {

using ::tensorflow::DEVICE_GPU;


void WarnFallbackOnce(const tfg::Status& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    LOG(WARNING) << "tf_gulp: similarity_warp on a GPU device falls back to the CPU warp "
                    "(pictures copied to the host and the result back): "
                 << why.message();
  });
}

CUdeviceptr DevicePtr(const Tensor& t) {
  return reinterpret_cast<CUdeviceptr>(t.tensor_data().data());
}

class SimilarityWarpGpuOp : public AsyncOpKernel {
 public:
  explicit SimilarityWarpGpuOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadSimilarityWarpLayout(ctx, &layout_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto args = std::make_shared<SimilarityWarpArgs>();
    OP_REQUIRES_OK_ASYNC(ctx, ParseSimilarityWarpArgs(ctx, layout_, args.get()), done);
    Tensor* output = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_output(0, args->out_shape, &output), done);
    if (output->NumElements() == 0) {
      done();
      return;
    }
    OP_REQUIRES_ASYNC(ctx, ctx->op_device_context() != nullptr,
                      absl::InternalError("similarity_warp: no GPU device context"), done);
    const tfg::gpu::StreamWarper* warper = nullptr;
    const tfg::Status available = tfg::gpu::StreamWarper::Get(&warper);
    if (!available.ok() || args->g.channels > tfg::gpu::kMaxGpuWarpChannels) {
      if (available.ok()) {
        WarnFallbackOnce(tfg::InvalidArgumentError(
            "the GPU kernel takes at most ", tfg::gpu::kMaxGpuWarpChannels, " channels, got ",
            args->g.channels));
      } else {
        WarnFallbackOnce(available);
      }
      WarpOnHost(ctx, args, output, std::move(done));
      return;
    }
    WarpOnGpu(ctx, args, warper, output, std::move(done));
  }

 private:
  // The warp on TensorFlow's stream through the TensorFlow-free body
  // (StreamWarper::LaunchFromHost): the parameters' copy from host memory and
  // the launch are queued on the stream, with no host round trip; the device
  // block for the parameters is TensorFlow's (its allocator orders reuse on
  // the same stream).
  static void WarpOnGpu(OpKernelContext* ctx, std::shared_ptr<SimilarityWarpArgs> args,
                        const tfg::gpu::StreamWarper* warper, Tensor* output,
                        DoneCallback done) {
    const int64_t pictures = args->batch * args->frames;
    Tensor params;
    OP_REQUIRES_OK_ASYNC(
        ctx,
        ctx->allocate_temp(::tensorflow::DT_FLOAT,
                           TensorShape({tfg::gpu::StreamWarper::ParamFloats(pictures,
                                                                            args->g.channels)}),
                           &params),
        done);
    CUstream cu_stream = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ComputeStream(ctx, "similarity_warp", &cu_stream), done);
    ctx->SetStatus(ToTfStatus(warper->LaunchFromHost(
        args->g, args->batch, args->frames, ctx->input(1).flat<float>().data(),
        ctx->input(3).flat<float>().data(), ctx->input(4).flat<float>().data(),
        ctx->input(5).flat<float>().data(), DevicePtr(ctx->input(0)), DevicePtr(params),
        DevicePtr(*output), cu_stream)));
    done();
  }

  // The fallback: device -> host, the CPU warp on TensorFlow's CPU worker
  // threads, host -> device.
  static void WarpOnHost(OpKernelContext* ctx, std::shared_ptr<SimilarityWarpArgs> args,
                         Tensor* output, DoneCallback done) {
    struct Buffers {
      Tensor images, output;
    };
    auto host = std::make_shared<Buffers>();
    const Tensor& images = ctx->input(0);
    OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_temp(::tensorflow::DT_UINT8, images.shape(),
                                                 &host->images, PinnedHost()),
                         done);
    OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_temp(::tensorflow::DT_FLOAT, output->shape(),
                                                 &host->output, PinnedHost()),
                         done);
    auto* device = static_cast<::tensorflow::Device*>(ctx->device());
    ctx->op_device_context()->CopyDeviceTensorToCPU(
        &images, "similarity_warp/images", device, &host->images,
        [ctx, args, output, host, device, done = std::move(done)](const absl::Status& s) {
          if (!s.ok()) {
            ctx->SetStatus(s);
            done();
            return;
          }
          // Not on the copy's callback thread: the warp takes a while.
          ctx->device()->tensorflow_cpu_worker_threads()->workers->Schedule(
              [ctx, args, output, host, device, done]() {
                WarpOnCpu(ctx, *args, host->images, &host->output);
                ctx->op_device_context()->CopyCPUTensorToDevice(
                    &host->output, device, output, [ctx, host, done](const absl::Status& s) {
                      ctx->SetStatus(s);
                      done();
                    });
              });
        });
  }

  tfg::warp::Layout layout_ = tfg::warp::Layout::kNHWC;
};

}  // namespace

// Everything but the pictures is read on the host (checks, the clip's matrix
// per frame); the pictures and the output stay on the GPU.
REGISTER_KERNEL_BUILDER(Name(kSimilarityWarpOp)
                            .Device(DEVICE_GPU)
                            .HostMemory("matrices")
                            .HostMemory("output_shape")
                            .HostMemory("bias")
                            .HostMemory("norm")
                            .HostMemory("oob_color"),
                        SimilarityWarpGpuOp);

}  // namespace tf_gulp
