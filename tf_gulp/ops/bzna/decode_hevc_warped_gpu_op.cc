// DecodeHevcWarped's GPU kernel: a batch of single-picture HEVC MP4s decoded
// by NVDEC through the decoder pool of this GPU (the one decode_hevc's GPU
// kernel uses) and warped by one fused kernel per picture that reads the
// mapped NV12 surface directly (Y'CbCr -> RGB per tap, bilinear warp,
// (v - bias) * norm) into its slot of the output TensorFlow allocates on its
// own stream (cc/gpu/decode_hevc_warped_body.*, nvdec_warp.*: decode -> fused
// kernel -> event -> unmap, TensorFlow-free and tested against fake driver
// tables). Same attrs, shapes, dtypes and per-(seed, epoch, element) matrices
// and colour steps (color=) as the CPU kernel (decode_hevc_warped_op.cc): both
// are drawn in C++ from the same key with the same sizes; with colour the
// fused kernel writes levels and a colour kernel per picture colours and
// normalizes them (cc/gpu/color_plan.h). Nothing here needs a CUDA header or
// library.
//
// Asynchronous: the executor thread checks the inputs, allocates the output
// and parses the MP4s; the rest is the TensorFlow-free body
// (cc/gpu/decode_hevc_warped_body.h: decoders sized for the batch's largest
// coded picture, decodes on the body's own threads, never TensorFlow's), and
// `done` runs once every picture's kernel (or the fallback's copy) is queued.
//
// Fallback: where NVDEC cannot be used at all (a build without nvcc, no
// driver or one older than R580, no libnvcuvid.so.1) the whole batch runs the
// CPU kernel's code (decode + fused warp) into pinned host memory and is
// copied to the output in one copy; a picture NVDEC cannot take (outside its
// size limits, not 8-bit 4:2:0) is decoded and warped on the CPU and copied
// into its slot, the others still use NVDEC. Each kind is logged once.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "cc/codec/hevc_sample.h"
#include "cc/codec/hevc_warp.h"
#include "cc/gpu/decode_hevc_warped_body.h"
#include "cc/util/stateless_random.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/device_base.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/op_requires.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/logging.h"
#include "tensorflow/core/util/work_sharder.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/gpu_fallback.h"
#include "tf_gulp/ops/framework/gpu_kernel.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

void WarnFallbackOnce(bool per_picture, const tfg::Status& why) {
  static auto* warnings = new OnHostWarnings("decode_hevc_warped", kDecodesAndWarpsOnCpu, "NVDEC");
  warnings->Warn(per_picture, why.message());
}

// One op call in flight: what the worker tasks share.
struct Batch {
  OpKernelContext* ctx = nullptr;
  Tensor* output = nullptr;
  uint64_t seed = 0, epoch = 0;
  int64_t size = 0;
  std::vector<std::string> what;     // names the samples in errors
  std::vector<tfg::Status> statuses;
  std::vector<tfg::codec::ParsedHevcSample> parsed;  // the MP4s, kept until done
  HostPictures on_host;              // pictures NVDEC could not take
};

class DecodeHevcWarpedGpuOp : public AsyncOpKernel {
 public:
  explicit DecodeHevcWarpedGpuOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES_OK(ctx, attrs_.Parse("decode_hevc_warped"));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& contents = ctx->input(0);
    const Tensor& whats = ctx->input(1);
    const Tensor& elements = ctx->input(4);
    OP_REQUIRES_ASYNC(
        ctx, contents.dims() == 1,
        absl::InvalidArgumentError("decode_hevc_warped: contents must be [B] strings"), done);
    OP_REQUIRES_ASYNC(
        ctx, whats.dims() == 1 && whats.dim_size(0) == contents.dim_size(0),
        absl::InvalidArgumentError("decode_hevc_warped: what must be [B] like contents"), done);
    OP_REQUIRES_ASYNC(
        ctx, elements.dims() == 1 && elements.dim_size(0) == contents.dim_size(0),
        absl::InvalidArgumentError("decode_hevc_warped: elements must be [B] like contents"),
        done);
    CUstream cu_stream = nullptr;
    OP_REQUIRES_OK_ASYNC(ctx, ComputeStream(ctx, "decode_hevc_warped", &cu_stream), done);
    auto batch = std::make_shared<Batch>();
    batch->ctx = ctx;
    batch->seed = static_cast<uint64_t>(ctx->input(2).scalar<int64_t>()());
    batch->epoch = static_cast<uint64_t>(ctx->input(3).scalar<int64_t>()());
    batch->size = contents.dim_size(0);
    OP_REQUIRES_OK_ASYNC(
        ctx,
        ctx->allocate_output(0, TensorShape({batch->size, attrs_.output_height, attrs_.output_width, 3}),
                             &batch->output),
        done);
    if (batch->size == 0) {
      done();
      return;
    }
    auto in = contents.flat<tstring>();
    auto labels = whats.flat<tstring>();
    for (int64_t i = 0; i < batch->size; ++i) {
      batch->what.push_back(tfg::codec::HevcSampleName(std::string(labels(i)), in(i).size()));
    }
    batch->statuses.resize(batch->size);
    tfg::gpu::NvdecRgbDecoder* decoder = nullptr;
    const tfg::Status available = tfg::gpu::NvdecRgbDecoder::Get(&decoder);
    auto* workers = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    if (!available.ok()) {
      WarnFallbackOnce(false, available);
      workers->Schedule([this, batch, done = std::move(done)]() mutable {
        WholeBatchOnHost(batch, std::move(done));
      });
      return;
    }
    // The MP4s parsed here (host work, no waiting); everything from the
    // decoders' sizing to the last kernel is the body's (cc/gpu/
    // decode_hevc_warped_body.h), on its own threads.
    batch->parsed.resize(batch->size);
    auto body = std::make_shared<tfg::gpu::WarpedBatch>();
    body->stream = cu_stream;
    for (int64_t i = 0; i < batch->size; ++i) {
      const tstring& bytes = Sample(*batch, i);
      batch->statuses[i] = tfg::codec::ParseHevcSample(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), attrs_.extra.track,
          batch->what[i], &batch->parsed[i]);
      const std::string& annex_b = batch->parsed[i].annex_b;
      body->pictures.push_back({reinterpret_cast<const uint8_t*>(annex_b.data()), annex_b.size(),
                                batch->what[i]});
    }
    Batch* b = batch.get();
    body->plan = [this, b](int64_t i, int width, int height, tfg::gpu::RegionWarp* w,
                           CUdeviceptr* dst) { return Plan(*b, i, width, height, w, dst); };
    if (!attrs_.color_spec.empty()) {
      // Drawn here from each picture's key, as the CPU kernel draws them; the
      // body runs them after the warp (cc/gpu/color_plan.h).
      for (int64_t i = 0; i < batch->size; ++i) {
        body->colors.push_back(attrs_.Color(batch->seed, batch->epoch, Element(*batch, i)));
      }
    }
    body->on_host = [this, b](int64_t i, const tfg::Status& why) {
      WarnFallbackOnce(true, why);
      return OnHost(b, i, b->parsed[i]);
    };
    tfg::gpu::DecodeWarpedBatch(
        decoder, tfg::gpu::TaskThreads::ForDecodes(), body,
        [batch, body, done = std::move(done)](std::vector<tfg::Status> statuses) mutable {
          for (int64_t i = 0; i < batch->size; ++i) {
            if (batch->statuses[i].ok()) batch->statuses[i] = statuses[i];  // parse errors first
          }
          FinishBatch(batch->ctx, "decode_hevc_warped", batch->statuses,
                      std::shared_ptr<HostPictures>(batch, &batch->on_host), batch->output,
                      std::move(done));
        });
  }

 private:
  const tstring& Sample(const Batch& b, int64_t i) const {
    return b.ctx->input(0).flat<tstring>()(i);
  }
  int64_t Element(const Batch& b, int64_t i) const {
    return b.ctx->input(4).flat<int64_t>()(i);
  }
  size_t Values() const { return static_cast<size_t>(attrs_.output_height) * attrs_.output_width * 3; }

  // Picture i's plan once NVDEC decoded it (display size width x height): the
  // sample's region, the matrix drawn from (seed, epoch, element), the
  // picture's slot of the output.
  tfg::Status Plan(const Batch& b, int64_t i, int width, int height, tfg::gpu::RegionWarp* w,
                   CUdeviceptr* dst) const {
    tfg::codec::PictureRegion region;
    TFG_RETURN_IF_ERROR(tfg::codec::HevcSampleRegion(b.parsed[i], attrs_.extra.clean(), width,
                                                     height, b.what[i], &region));
    double m[9];
    tfg::warp::TransformMatrix(attrs_.spec, Key(b, i), region.height, region.width,
                               attrs_.output_height, attrs_.output_width, m);
    w->x0 = region.x;
    w->y0 = region.y;
    w->width = region.width;
    w->height = region.height;
    for (int k = 0; k < 9; ++k) w->matrix[k] = static_cast<float>(m[k]);
    for (int c = 0; c < 3; ++c) {
      w->bias[c] = attrs_.float_output ? attrs_.channel_bias[c] : 0.f;
      w->norm[c] = attrs_.float_output ? attrs_.channel_norm[c] : 1.f;
      w->oob_color[c] = attrs_.oob_color[c];
    }
    w->out_height = static_cast<int>(attrs_.output_height);
    w->out_width = static_cast<int>(attrs_.output_width);
    w->nchw = 0;
    w->bilinear_chroma = attrs_.extra.chroma == tfg::codec::ChromaUpsampling::kBilinear;
    w->u8_output = !attrs_.float_output;
    const size_t element_size = attrs_.float_output ? sizeof(float) : sizeof(uint8_t);
    *dst = reinterpret_cast<CUdeviceptr>(b.output->tensor_data().data()) +
           i * Values() * element_size;
    return tfg::Status::Ok();
  }

  // The CPU fallback of one picture NVDEC could not take: the CPU kernel's
  // decode + fused warp into a pinned host tensor, copied into the picture's
  // output slot by FinishBatch.
  tfg::Status OnHost(Batch* b, int64_t i, const tfg::codec::ParsedHevcSample& parsed) {
    Tensor host;
    TFG_RETURN_IF_ERROR(b->on_host.AllocatePicture(b->ctx, *b->output, &host));
    tfg::codec::HevcDecoder* cpu = nullptr;
    tfg::codec::PictureRegion region;
    TFG_RETURN_IF_ERROR(tfg::codec::DecodeParsedHevcSample(parsed, attrs_.extra.clean(), attrs_.extra.threads,
                                                           b->what[i], &cpu, &region));
    TFG_RETURN_IF_ERROR(WarpOnHost(*b, i, *cpu, region, &host, 0));
    b->on_host.Add(i, std::move(host));
    return tfg::Status::Ok();
  }

  uint64_t Key(const Batch& b, int64_t i) const {
    return tfg::HashKey({b.seed, b.epoch, static_cast<uint64_t>(Element(b, i))});
  }

  // The CPU kernel's warp of a decoded picture into `out` at `offset` values.
  tfg::Status WarpOnHost(const Batch& b, int64_t i, const tfg::codec::HevcDecoder& decoder,
                         const tfg::codec::PictureRegion& region, Tensor* out,
                         size_t offset) const {
    double m[9];
    tfg::warp::TransformMatrix(attrs_.spec, Key(b, i), region.height, region.width,
                               attrs_.output_height, attrs_.output_width, m);
    tfg::codec::HevcWarpTarget target;
    target.out_height = static_cast<int>(attrs_.output_height);
    target.out_width = static_cast<int>(attrs_.output_width);
    target.bias = attrs_.channel_bias.data();
    target.norm = attrs_.channel_norm.data();
    target.oob_color = attrs_.oob_color.data();
    const tfg::warp::ColorDraw color = attrs_.Color(b.seed, b.epoch, Element(b, i));
    target.color = &color;
    if (attrs_.float_output) {
      return tfg::codec::WarpDecoded(decoder, region, attrs_.extra.chroma, m, target,
                                     out->flat<float>().data() + offset);
    }
    return tfg::codec::WarpDecoded(decoder, region, attrs_.extra.chroma, m, target,
                                   out->flat<uint8_t>().data() + offset);
  }

  // No NVDEC: the CPU kernel's path for the whole batch (pictures sharded over
  // TensorFlow's CPU threads) into pinned host memory, then one copy.
  void WholeBatchOnHost(std::shared_ptr<Batch> b, DoneCallback done) {
    OpKernelContext* ctx = b->ctx;
    std::shared_ptr<Tensor> host;
    OP_REQUIRES_OK_ASYNC(ctx, AllocateHostBatch(ctx, *b->output, &host), done);
    auto work = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const tstring& bytes = Sample(*b, i);
        tfg::codec::HevcDecoder* cpu = nullptr;
        tfg::codec::PictureRegion region;
        b->statuses[i] = tfg::codec::DecodeHevcSample(
            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), attrs_.extra.track,
            attrs_.extra.clean(), attrs_.extra.threads, b->what[i], &cpu, &region);
        if (b->statuses[i].ok()) b->statuses[i] = WarpOnHost(*b, i, *cpu, region, host.get(), i * Values());
      }
    };
    auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
    ::tensorflow::Shard(threads->num_threads, threads->workers, b->size, 10000000, work);
    if (!SetFirstPictureError(ctx, "decode_hevc_warped", b->statuses)) {
      done();
      return;
    }
    CopyBatchToDevice(ctx, host, b->output, std::move(done));
  }

  DecodeHevcWarpedAttrs attrs_;
};

}  // namespace

TF_GULP_REGISTER_DECODE_WARPED_GPU_KERNEL(kDecodeHevcWarpedOp, DecodeHevcWarpedGpuOp);

}  // namespace tf_gulp
