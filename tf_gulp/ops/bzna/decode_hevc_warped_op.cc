// DecodeHevcWarped: a batch of single-picture HEVC MP4s (Benzina per-image
// samples) decoded on the CPU fused with the similarity warp: each picture is
// decoded (cc/codec/hevc_sample.h: the same track and clean-aperture rules as
// DecodeHevc), only the rectangle its warp samples is converted from the
// decoder's Y'CbCr planes to RGB, and that is warped straight into the output
// (cc/codec/hevc_warp.h). Each picture's transform is drawn from
// (seed, epoch, element) in C++ (cc/warp/similarity_transform.h), as in
// DecodeJpegWarped, with the clean aperture's size as the input size.
// Pictures are sharded over TF's intra-op threads.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "cc/codec/hevc_sample.h"
#include "cc/codec/hevc_warp.h"
#include "cc/util/stateless_random.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/util/work_sharder.h"
#include "tf_gulp/ops/framework/core_status.h"

namespace tf_gulp {
namespace {

using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;

constexpr char kOpName[] = "TfGulp>DecodeHevcWarped";

class DecodeHevcWarpedOp : public OpKernel {
 public:
  explicit DecodeHevcWarpedOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::vector<float> warp, bias, norm;
    std::string crop, chroma;
    tensorflow::DataType dtype;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("warp", &warp));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_height", &height_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_width", &width_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_type", &dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("bias", &bias));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("norm", &norm));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("track", &track_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("crop", &crop));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("chroma_upsampling", &chroma));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("threads", &threads_));
    OP_REQUIRES(ctx, threads_ >= 0,
                absl::InvalidArgumentError("decode_hevc_warped: threads must be >= 0"));
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::warp::ParseTransformSpec(warp, &spec_)));
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::ParseChromaUpsampling(chroma, &chroma_)));
    clean_ = crop == "clean";
    float_output_ = dtype == tensorflow::DT_FLOAT;
    OP_REQUIRES_OK(ctx, PerChannel(bias, 0.f, "bias", &bias_));
    OP_REQUIRES_OK(ctx, PerChannel(norm, 1.f, "norm", &norm_));
    oob_.assign(3, 0.f);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& contents = ctx->input(0);
    const Tensor& whats = ctx->input(1);
    const Tensor& elements = ctx->input(4);
    OP_REQUIRES(ctx, contents.dims() == 1,
                absl::InvalidArgumentError("decode_hevc_warped: contents must be [B] strings"));
    OP_REQUIRES(ctx, whats.dims() == 1 && whats.dim_size(0) == contents.dim_size(0),
                absl::InvalidArgumentError("decode_hevc_warped: what must be [B] like contents"));
    OP_REQUIRES(ctx, elements.dims() == 1 && elements.dim_size(0) == contents.dim_size(0),
                absl::InvalidArgumentError(
                    "decode_hevc_warped: elements must be [B] like contents"));
    const uint64_t seed = static_cast<uint64_t>(ctx->input(2).scalar<int64_t>()());
    const uint64_t epoch = static_cast<uint64_t>(ctx->input(3).scalar<int64_t>()());
    const int64_t batch = contents.dim_size(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch, height_, width_, 3}), &out));
    auto in = contents.flat<tstring>();
    auto labels = whats.flat<tstring>();
    auto ids = elements.flat<int64_t>();
    const size_t values = static_cast<size_t>(height_) * width_ * 3;
    std::vector<tfg::Status> statuses(batch);
    auto work = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        statuses[i] = DecodeOne(in(i), labels(i), seed, epoch, ids(i), out, i * values);
      }
    };
    auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
    // A picture costs about ten million cycles to decode: shard by picture.
    ::tensorflow::Shard(threads->num_threads, threads->workers, batch, 10000000, work);
    for (int64_t i = 0; i < batch; ++i) {
      if (!statuses[i].ok()) {
        // The message names the sample (its `what`); the prefix its place in the batch.
        ctx->SetStatus(absl::Status(
            ToTfStatus(statuses[i]).code(),
            absl::StrCat("decode_hevc_warped: picture ", i, " (element ", ids(i),
                         "): ", statuses[i].message())));
        return;
      }
    }
  }

 private:
  absl::Status PerChannel(const std::vector<float>& v, float fallback, const char* name,
                          std::vector<float>* out) const {
    if (v.empty()) {
      out->assign(3, fallback);
    } else if (v.size() == 1) {
      out->assign(3, v[0]);
    } else if (v.size() == 3) {
      *out = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "decode_hevc_warped: ", name, " must be one value or one per channel (3), got ",
          v.size()));
    }
    return absl::OkStatus();
  }

  tfg::Status DecodeOne(const tstring& bytes, const tstring& label, uint64_t seed,
                        uint64_t epoch, int64_t element, Tensor* out, size_t offset) const {
    const std::string what =
        label.empty() ? absl::StrCat("HEVC MP4 sample (", bytes.size(), " bytes)")
                      : std::string(label);
    tfg::codec::HevcDecoder* decoder = nullptr;
    tfg::codec::PictureRegion region;
    TFG_RETURN_IF_ERROR(tfg::codec::DecodeHevcSample(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), track_, clean_, threads_,
        what, &decoder, &region));
    double m[9];
    tfg::warp::TransformMatrix(spec_, tfg::HashKey({seed, epoch, static_cast<uint64_t>(element)}),
                               region.height, region.width, height_, width_, m);
    tfg::codec::HevcWarpTarget target;
    target.out_height = static_cast<int>(height_);
    target.out_width = static_cast<int>(width_);
    target.bias = bias_.data();
    target.norm = norm_.data();
    target.oob_color = oob_.data();
    if (float_output_) {
      return tfg::codec::WarpDecoded(*decoder, region, chroma_, m, target,
                                     out->flat<float>().data() + offset);
    }
    return tfg::codec::WarpDecoded(*decoder, region, chroma_, m, target,
                                   out->flat<uint8_t>().data() + offset);
  }

  tfg::warp::TransformSpec spec_;
  int64_t height_ = 0, width_ = 0;
  std::string track_;
  bool clean_ = true;
  tfg::codec::ChromaUpsampling chroma_ = tfg::codec::ChromaUpsampling::kBilinear;
  int threads_ = 1;
  bool float_output_ = false;
  std::vector<float> bias_, norm_, oob_;
};

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(::tensorflow::DEVICE_CPU), DecodeHevcWarpedOp);

}  // namespace
}  // namespace tf_gulp
