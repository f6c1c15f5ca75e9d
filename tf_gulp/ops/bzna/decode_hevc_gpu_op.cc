// DecodeHevc's GPU kernel: the sample's MP4 is parsed on the host (HostMemory
// `contents`), its picture decoded by NVDEC through the decoder pool of this
// GPU and converted to RGB by a kernel on TensorFlow's own stream into the
// output TensorFlow allocates (cc/gpu/nvdec_rgb.*: pool per device, decode ->
// convert -> event -> unmap, all TensorFlow-free and tested against fake
// driver tables). Like similarity_warp's GPU kernel, nothing here needs a CUDA
// header or library at build or link time; the driver libraries are opened at
// run time, so the op library loads everywhere.
//
// Asynchronous: the executor thread only parses the sample; the decode is
// the TensorFlow-free body's (cc/gpu/decode_hevc_body.h: decoders sized from
// the SPS and the batch's `max_size`, the NVDEC calls on the body's own threads, never TensorFlow's), the
// fallback's CPU decode runs on TensorFlow's CPU worker threads or the body's,
// and `done` runs once the conversion (or the fallback's copy) is queued.
//
// Fallback: where NVDEC cannot be used (a build without nvcc, no NVIDIA
// driver or one older than R580, no libnvcuvid.so.1 as in containers started
// without the `video` driver capability, a GPU whose NVDEC cannot decode
// 8-bit 4:2:0 HEVC, or a picture outside its NVDEC's size limits) the picture
// is decoded on the CPU (the CPU kernel's code) and copied to the device; the
// first fallback of each kind is logged once, naming the reason.
#include <cstdint>
#include <memory>
#include <string>

#include "cc/codec/hevc_sample.h"
#include "cc/gpu/decode_hevc_body.h"
#include "cc/gpu/nvdec_rgb.h"
#include "tensorflow/core/framework/common_shape_fns.h"
#include "tensorflow/core/framework/device_base.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/op_requires.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/logging.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/gpu_fallback.h"
#include "tf_gulp/ops/framework/gpu_kernel.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

// One sample in flight: parsed on the executor thread, decoded on a worker.
struct Sample {
  std::string what;  // names the sample in errors
  tfg::codec::ParsedHevcSample parsed;
};

// Logs the first fallback for NVDEC being unavailable and the first for a
// picture NVDEC cannot take, each once per process.
void WarnFallbackOnce(bool per_picture, const tfg::Status& why) {
  static auto* warnings = new OnHostWarnings(
      "decode_hevc", "decodes on the CPU and copies the picture to the GPU", "NVDEC");
  warnings->Warn(per_picture, why.message());
}

class DecodeHevcGpuOp : public AsyncOpKernel {
 public:
  explicit DecodeHevcGpuOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES_OK(ctx, attrs_.Parse("decode_hevc"));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES_ASYNC(ctx, input.dims() == 0,
                      absl::InvalidArgumentError(absl::StrCat(
                          "decode_hevc: contents must be a scalar string (one MP4), got shape ",
                          input.shape().DebugString())),
                      done);
    const Tensor& what_input = ctx->input(1);
    OP_REQUIRES_ASYNC(ctx, what_input.dims() == 0,
                      absl::InvalidArgumentError("decode_hevc: what must be a scalar string"),
                      done);
    int max_height = 0, max_width = 0;
    OP_REQUIRES_OK_ASYNC(ctx, CheckMaxSize(ctx->input(2), &max_height, &max_width), done);
    CUstream cu_stream = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ComputeStream(ctx, "decode_hevc", &cu_stream), done);
    const tstring& bytes = input.scalar<tstring>()();
    auto sample = std::make_shared<Sample>();
    sample->what =
        tfg::codec::HevcSampleName(std::string(what_input.scalar<tstring>()()), bytes.size());
    OP_REQUIRES_OK_ASYNC(ctx,
                         ToTfStatus(tfg::codec::ParseHevcSample(
                             reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                             attrs_.track, sample->what, &sample->parsed)),
                         done);
    tfg::gpu::NvdecRgbDecoder* decoder = nullptr;
    const tfg::Status available = tfg::gpu::NvdecRgbDecoder::Get(&decoder);
    if (!available.ok()) {
      WarnFallbackOnce(false, available);
      // The CPU decode takes a while: not on the executor thread.
      ctx->device()->tensorflow_cpu_worker_threads()->workers->Schedule(
          [this, ctx, sample, done = std::move(done)]() mutable {
            DecodeOnHost(ctx, sample, std::move(done));
          });
      return;
    }
    // The rest is the TensorFlow-free body (cc/gpu/decode_hevc_body.h): the
    // decoders sized from the SPS and max_size, the decode on the body's own
    // threads (NVDEC may wait for a free surface there, never on TensorFlow's).
    auto picture = std::make_shared<tfg::gpu::RgbPicture>();
    picture->data = reinterpret_cast<const uint8_t*>(sample->parsed.annex_b.data());
    picture->size = sample->parsed.annex_b.size();
    picture->what = sample->what;
    picture->bilinear_chroma = attrs_.chroma == tfg::codec::ChromaUpsampling::kBilinear;
    picture->stream = cu_stream;
    picture->max_width = max_width;
    picture->max_height = max_height;
    auto allocated = std::make_shared<absl::Status>();  // TensorFlow's own, if allocate_output failed
    picture->allocate = [this, ctx, sample, allocated](int width, int height,
                                                       tfg::gpu::RgbRegion* region,
                                                       CUdeviceptr* dst) {
      tfg::codec::PictureRegion keep;
      TFG_RETURN_IF_ERROR(tfg::codec::HevcSampleRegion(sample->parsed, attrs_.clean(), width,
                                                       height, sample->what, &keep));
      *region = {keep.x, keep.y, keep.width, keep.height};
      Tensor* output = nullptr;
      *allocated = ctx->allocate_output(0, TensorShape({region->height, region->width, 3}), &output);
      if (!allocated->ok()) return tfg::InternalError(allocated->message());
      *dst = reinterpret_cast<CUdeviceptr>(output->tensor_data().data());
      return tfg::Status::Ok();
    };
    // A picture NVDEC cannot take (outside its size limits; a GPU whose NVDEC
    // lacks 8-bit 4:2:0 HEVC): the CPU decodes it; `done` then comes from the copy.
    auto on_host = std::make_shared<bool>(false);
    picture->on_host = [on_host](const tfg::Status& why) {
      WarnFallbackOnce(true, why);
      *on_host = true;
      return tfg::Status::Ok();
    };
    tfg::gpu::DecodeHevcRgb(
        decoder, tfg::gpu::TaskThreads::ForDecodes(), picture,
        [this, ctx, sample, picture, allocated, on_host,
         done = std::move(done)](tfg::Status decoded) mutable {
          if (*on_host) {
            DecodeOnHost(ctx, sample, std::move(done));
            return;
          }
          ctx->SetStatus(allocated->ok() ? ToTfStatus(decoded) : *allocated);
          done();
        });
  }

 private:
  // The fallback: the CPU kernel's decode into pinned host memory, then one
  // copy to the output on the device.
  void DecodeOnHost(OpKernelContext* ctx, std::shared_ptr<Sample> sample,
                    DoneCallback done) {
    auto host = std::make_shared<Tensor>();
    tfg::codec::HevcDecoder* cpu = nullptr;
    tfg::codec::PictureRegion r;
    OP_REQUIRES_OK_ASYNC(ctx,
                         ToTfStatus(tfg::codec::DecodeParsedHevcSample(
                             sample->parsed, attrs_.clean(), attrs_.threads, sample->what, &cpu, &r)),
                         done);
    const TensorShape shape({r.height, r.width, 3});
    Tensor* output = nullptr;
    absl::Status allocated =
        ctx->allocate_temp(::tensorflow::DT_UINT8, shape, host.get(), PinnedHost());
    if (allocated.ok()) allocated = ctx->allocate_output(0, shape, &output);
    const tfg::Status decoded =
        allocated.ok() ? cpu->ToRgb(r.x, r.y, r.width, r.height, attrs_.chroma,
                                    host->flat<uint8_t>().data())
                       : tfg::Status::Ok();
    OP_REQUIRES_OK_ASYNC(ctx, allocated, done);
    OP_REQUIRES_OK_ASYNC(ctx, ToTfStatus(decoded), done);
    if (output->NumElements() == 0) {
      done();
      return;
    }
    CopyBatchToDevice(ctx, host, output, std::move(done));
  }

  HevcDecodeAttrs attrs_;
};

}  // namespace

// NvdecStatus: "" when decode_hevc's GPU kernel can decode with NVDEC in this
// process (kernels built in, driver R580+, libnvcuvid.so.1 loaded), else why
// not and how to get it. DataLoader(device=...) asks it to choose where to
// decode. A CPU kernel: it only asks the driver libraries.
constexpr char kStatusOpName[] = "TfGulp>NvdecStatus";

class NvdecStatusOp : public ::tensorflow::OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    tfg::gpu::NvdecRgbDecoder* decoder = nullptr;
    const tfg::Status status = tfg::gpu::NvdecRgbDecoder::Get(&decoder);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &output));
    output->scalar<tstring>()() = status.ok() ? std::string() : status.message();
  }
};

REGISTER_OP(kStatusOpName)
    .Output("reason: string")
    .SetIsStateful()  // the answer depends on the machine, not on inputs: never constant-folded
    .SetShapeFn(::tensorflow::shape_inference::ScalarShape)
    .Doc(R"doc(
Empty when DecodeHevc's GPU kernel decodes with NVDEC in this process; else the
reason it falls back to the CPU decoder, and how to get NVDEC.
)doc");

REGISTER_KERNEL_BUILDER(Name(kStatusOpName).Device(::tensorflow::DEVICE_CPU), NvdecStatusOp);

// The compressed sample and its name are read on the host (MP4 parsing, the
// crop); the picture is decoded and converted on the GPU, into GPU memory.
REGISTER_KERNEL_BUILDER(Name(kDecodeHevcOp)
                            .Device(tensorflow::DEVICE_GPU)
                            .HostMemory("contents")
                            .HostMemory("what")
                            .HostMemory("max_size"),
                        DecodeHevcGpuOp);

}  // namespace tf_gulp
