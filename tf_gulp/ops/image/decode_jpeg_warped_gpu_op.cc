// DecodeJpegWarped's GPU kernel: the batch's JPEGs decoded by nvJPEG (the
// JPEG engines, else its CUDA backend) and warped by the fused Y'CbCr kernel
// into the output TensorFlow allocates, on TensorFlow's stream: the
// TensorFlow-free body does it all (cc/gpu/decode_jpeg_warped_body.h, one
// picture per clip; cc/gpu/jpeg_warp_gpu.h: the process's nvJPEG and each
// picture's warp, drawn from (seed, epoch, element) as the CPU kernel draws
// it). Same attrs, shapes and HostMemory inputs as the CPU kernel
// (decode_jpeg_warped_op.cc). Nothing here needs a CUDA header or library.
//
// On the CPU (the CPU kernel's code, into pinned host memory, then copied),
// each kind logged once:
//   - the whole batch where nvJPEG, the driver or the kernels are missing
//     (NvjpegReady's reason), and where the body has no stage for what the
//     attrs ask (colorspace="gray");
//   - a picture no GPU backend takes (CMYK, 12-bit, arithmetic-coded) or that
//     nvJPEG cannot read (PNG, BMP, GIF; a damaged JPEG, whose error is then
//     the CPU kernel's, naming its record).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/gpu/decode_jpeg_warped_body.h"
#include "cc/gpu/jpeg_warp_gpu.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/op_requires.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tensorflow/core/platform/logging.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/gpu_fallback.h"
#include "tf_gulp/ops/framework/gpu_kernel.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/image/decode_jpeg_warped_op.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {
namespace {

OnHostWarnings& Warnings() {
  static auto* warnings = new OnHostWarnings(kDecodeJpegWarped, kDecodesAndWarpsOnCpu, "nvJPEG");
  return *warnings;
}

// One op call in flight: what the body's callbacks share.
struct Batch {
  OpKernelContext* ctx = nullptr;
  Tensor* output = nullptr;
  int64_t size = 0;
  HostPictures on_host;        // its lock also guards `planes`
  std::vector<Tensor> planes;  // the decoded planes, until the kernels are queued
};

class DecodeJpegWarpedGpuOp : public AsyncOpKernel {
 public:
  explicit DecodeJpegWarpedGpuOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    options_ = attrs_.extra.Options();
    OP_REQUIRES_OK(ctx, attrs_.Parse(kDecodeJpegWarped, tfg::jpeg::Channels(options_.color_space)));
    out_.out_height = static_cast<int>(attrs_.output_height);
    out_.out_width = static_cast<int>(attrs_.output_width);
    out_.u8_output = !attrs_.float_output;
    out_.bias = attrs_.channel_bias.data();
    out_.norm = attrs_.channel_norm.data();
    out_.oob_color = attrs_.oob_color.data();
    // The body's kernels write 3 channels.
    if (attrs_.channels != 3) not_on_gpu_ = "the GPU kernel writes RGB only (colorspace=\"gray\")";
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& contents = ctx->input(0);
    const int64_t size = contents.dims() == 1 ? contents.dim_size(0) : -1;
    for (int input : {0, 1, 4}) {
      OP_REQUIRES_ASYNC(ctx, ctx->input(input).dims() == 1 && ctx->input(input).dim_size(0) == size,
                        absl::InvalidArgumentError(
                            "decode_jpeg_warped: contents, what and elements must be [B] each"),
                        done);
    }
    for (int input : {2, 3}) {
      OP_REQUIRES_ASYNC(ctx, ::tensorflow::TensorShapeUtils::IsScalar(ctx->input(input).shape()),
                        absl::InvalidArgumentError("decode_jpeg_warped: seed and epoch must be "
                                                   "scalars"),
                        done);
    }
    CUstream stream = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ComputeStream(ctx, kDecodeJpegWarped, &stream), done);
    auto b = std::make_shared<Batch>();
    b->ctx = ctx;
    b->size = size;
    OP_REQUIRES_OK_ASYNC(
        ctx,
        ctx->allocate_output(0, TensorShape({size, attrs_.output_height, attrs_.output_width,
                                             attrs_.channels}),
                             &b->output),
        done);
    if (size == 0) {
      done();
      return;
    }
    const tfg::gpu::JpegWarpGpu* gpu = nullptr;
    const tfg::Status available =
        not_on_gpu_.empty() ? tfg::gpu::JpegWarpGpuFor(stream, &gpu) : tfg::Status::Ok();
    if (!not_on_gpu_.empty() || !available.ok()) {
      Warnings().Warn(false, not_on_gpu_.empty() ? available.message() : not_on_gpu_);
      ctx->device()->tensorflow_cpu_worker_threads()->workers->Schedule(
          [this, b, done = std::move(done)]() mutable { WholeBatchOnHost(b, std::move(done)); });
      return;
    }
    auto body = std::make_shared<tfg::gpu::JpegClipBatch>();
    body->stream = stream;
    const auto in = contents.flat<tstring>();
    const auto what = ctx->input(1).flat<tstring>();
    for (int64_t i = 0; i < size; ++i) {
      body->frames.push_back({reinterpret_cast<const uint8_t*>(in(i).data()), in(i).size(),
                              what(i).empty() ? absl::StrCat("picture ", i) : std::string(what(i))});
    }
    Batch* raw = b.get();
    body->allocate = [raw](size_t bytes, CUdeviceptr* ptr) {
      Tensor planes;
      const absl::Status s = raw->on_host.AllocateTemp(
          raw->ctx, ::tensorflow::DT_UINT8, TensorShape({static_cast<int64_t>(bytes)}), &planes);
      if (!s.ok()) return tfg::InternalError("decode_jpeg_warped: planes of ", bytes, " bytes: ", s.message());
      *ptr = reinterpret_cast<CUdeviceptr>(planes.tensor_data().data());
      raw->on_host.Locked([&] { raw->planes.push_back(std::move(planes)); });
      return tfg::Status::Ok();
    };
    if (!attrs_.color.empty()) {  // one draw per picture, from the CPU kernel's key
      for (int64_t i = 0; i < size; ++i) {
        body->colors.push_back(attrs_.Color(Seed(ctx), Epoch(ctx), Element(ctx, i)));
      }
    }
    body->plan = [this, raw](int64_t i, int width, int height, tfg::gpu::RegionWarp* w) {
      tfg::gpu::PlanElementWarp(attrs_.spec, Seed(raw->ctx), Epoch(raw->ctx), Element(raw->ctx, i),
                                width, height, out_, w);
      return tfg::Status::Ok();
    };
    body->dst = [this, raw](int64_t i) {
      const size_t element_size = attrs_.float_output ? sizeof(float) : sizeof(uint8_t);
      return reinterpret_cast<CUdeviceptr>(raw->output->tensor_data().data()) +
             i * Values() * element_size;
    };
    body->on_host = [this, raw](int64_t i, const tfg::Status& why) {
      return PictureOnHost(raw, i, why);
    };
    tfg::gpu::DecodeJpegWarpedBatch(
        gpu, tfg::gpu::TaskThreads::ForDecodes(), body,
        [this, b, body, done = std::move(done)](std::vector<tfg::Status> statuses) mutable {
          for (int64_t i = 0; i < b->size; ++i) {
            // What nvJPEG cannot read may be a PNG, BMP or GIF the CPU kernel takes; if it is a
            // damaged JPEG, the CPU kernel's error names it as the CPU path would.
            if (statuses[i].code() == tfg::StatusCode::kDataLoss) {
              statuses[i] = PictureOnHost(b.get(), i, statuses[i]);
            }
          }
          FinishBatch(b->ctx, kDecodeJpegWarped, statuses,
                      std::shared_ptr<HostPictures>(b, &b->on_host), b->output, std::move(done));
        });
  }

 private:
  static uint64_t Seed(OpKernelContext* ctx) {
    return static_cast<uint64_t>(ctx->input(2).scalar<int64_t>()());
  }
  static uint64_t Epoch(OpKernelContext* ctx) {
    return static_cast<uint64_t>(ctx->input(3).scalar<int64_t>()());
  }
  static int64_t Element(OpKernelContext* ctx, int64_t i) {
    return ctx->input(4).flat<int64_t>()(i);
  }
  size_t Values() const {
    return static_cast<size_t>(attrs_.output_height) * attrs_.output_width * attrs_.channels;
  }

  // Picture i by the CPU kernel's code into pinned memory; FinishBatch copies it
  // into its slot.
  tfg::Status PictureOnHost(Batch* b, int64_t i, const tfg::Status& why) {
    Warnings().Warn(true, why.message());
    Tensor host;
    TFG_RETURN_IF_ERROR(b->on_host.AllocatePicture(b->ctx, *b->output, &host));
    FusedWarpPicture picture;
    picture.attrs = &attrs_;
    picture.seed = Seed(b->ctx);
    picture.epoch = Epoch(b->ctx);
    picture.element = Element(b->ctx, i);
    picture.output = &host;
    TFG_RETURN_IF_ERROR(DecodeJpegWarpedPicture(attrs_, options_, b->ctx->input(0).flat<tstring>()(i),
                                                b->ctx->input(1).flat<tstring>()(i), picture));
    b->on_host.Add(i, std::move(host));
    return tfg::Status::Ok();
  }

  // The CPU kernel over the whole batch into pinned memory, then one copy.
  void WholeBatchOnHost(std::shared_ptr<Batch> b, DoneCallback done) {
    OpKernelContext* ctx = b->ctx;
    std::shared_ptr<Tensor> host;
    OP_REQUIRES_OK_ASYNC(ctx, AllocateHostBatch(ctx, *b->output, &host), done);
    const auto what = ctx->input(1).flat<tstring>();
    ComputeFusedWarpBatch(
        ctx, kDecodeJpegWarped, attrs_, {"what"}, 1000000,
        [&](int64_t i, const tstring& jpeg, const FusedWarpPicture& picture) {
          return DecodeJpegWarpedPicture(attrs_, options_, jpeg, what(i), picture);
        },
        host.get());
    if (!ctx->status().ok()) {
      done();
      return;
    }
    CopyBatchToDevice(ctx, host, b->output, std::move(done));
  }

  DecodeJpegWarpedAttrs attrs_;
  tfg::jpeg::DecodeOptions options_;
  tfg::gpu::JpegWarpOutput out_;
  std::string not_on_gpu_;  // why no batch can use the body, or ""
};

// NvjpegStatus: "" when decode_jpeg_warped's GPU kernel can decode with nvJPEG
// in this process, else every missing piece and its fix. A CPU kernel: it
// only opens libraries.
constexpr char kStatusOp[] = "TfGulp>NvjpegStatus";

class NvjpegStatusOp : public ::tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const tfg::Status status = tfg::gpu::NvjpegReady();
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &output));
    output->scalar<tstring>()() = status.ok() ? std::string() : status.message();
  }
};

}  // namespace

REGISTER_OP(kStatusOp)
    .Output("reason: string")
    .SetIsStateful()  // the answer depends on the machine, not on inputs: never constant-folded
    .SetShapeFn(::tensorflow::shape_inference::ScalarShape)
    .Doc(R"doc(
Empty when DecodeJpegWarped's GPU kernel decodes with nvJPEG in this process; else
what is missing (nvJPEG, the driver, the kernels) and how to get it.
)doc");

REGISTER_KERNEL_BUILDER(Name(kStatusOp).Device(::tensorflow::DEVICE_CPU), NvjpegStatusOp);

TF_GULP_REGISTER_DECODE_WARPED_GPU_KERNEL(kDecodeJpegWarpedOp, DecodeJpegWarpedGpuOp);

}  // namespace tf_gulp
