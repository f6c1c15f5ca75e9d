// DecodeJpegWarped: a batch of JPEG strings decoded fused with the similarity
// warp (cc/codec/jpeg_warp.h), for JPEG bytes from anywhere (FFRecord
// records, TFRecord examples, files): each picture is decoded only as far as
// its transform samples it and warped straight into the output. Each
// picture's transform is drawn from (seed, epoch, element) in C++
// (cc/warp/similarity_transform.h). Pictures are sharded over TF's intra-op
// threads.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
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

constexpr char kOpName[] = "TfGulp>DecodeJpegWarped";

class DecodeJpegWarpedOp : public OpKernel {
 public:
  explicit DecodeJpegWarpedOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::vector<float> warp, bias, norm;
    std::string colorspace, dct_method;
    tensorflow::DataType dtype;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("warp", &warp));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_height", &height_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_width", &width_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_type", &dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("bias", &bias));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("norm", &norm));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dct_scaling", &dct_scaling_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("colorspace", &colorspace));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dct_method", &dct_method));
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::warp::ParseTransformSpec(warp, &spec_)));
    float_output_ = dtype == tensorflow::DT_FLOAT;
    options_.color_space =
        colorspace == "gray" ? tfg::jpeg::ColorSpace::kGray : tfg::jpeg::ColorSpace::kRgb;
    options_.fast_dct = dct_method == "fast";
    channels_ = tfg::jpeg::Channels(options_.color_space);
    OP_REQUIRES_OK(ctx, PerChannel(bias, 0.f, "bias", &bias_));
    OP_REQUIRES_OK(ctx, PerChannel(norm, 1.f, "norm", &norm_));
    oob_.assign(channels_, 0.f);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& contents = ctx->input(0);
    const Tensor& elements = ctx->input(3);
    OP_REQUIRES(ctx, contents.dims() == 1,
                absl::InvalidArgumentError("decode_jpeg_warped: contents must be [B] strings"));
    OP_REQUIRES(ctx, elements.dims() == 1 && elements.dim_size(0) == contents.dim_size(0),
                absl::InvalidArgumentError(
                    "decode_jpeg_warped: elements must be [B] like contents"));
    const uint64_t seed = static_cast<uint64_t>(ctx->input(1).scalar<int64_t>()());
    const uint64_t epoch = static_cast<uint64_t>(ctx->input(2).scalar<int64_t>()());
    const int64_t batch = contents.dim_size(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch, height_, width_, channels_}),
                                             &out));
    auto in = contents.flat<tensorflow::tstring>();
    auto ids = elements.flat<int64_t>();
    const size_t values = static_cast<size_t>(height_) * width_ * channels_;
    std::vector<tfg::Status> statuses(batch);
    auto work = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) statuses[i] = DecodeOne(in(i), seed, epoch, ids(i),
                                                                   out, i * values);
    };
    auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
    // A picture costs about a million cycles to decode: shard by picture.
    ::tensorflow::Shard(threads->num_threads, threads->workers, batch, 1000000, work);
    for (int64_t i = 0; i < batch; ++i) {
      if (!statuses[i].ok()) {
        ctx->SetStatus(absl::Status(
            ToTfStatus(statuses[i]).code(),
            absl::StrCat("decode_jpeg_warped: picture ", i, " (element ", ids(i),
                         "): ", statuses[i].message())));
        return;
      }
    }
  }

 private:
  absl::Status PerChannel(const std::vector<float>& v, float fallback, const char* name,
                          std::vector<float>* out) const {
    if (v.empty()) {
      out->assign(channels_, fallback);
    } else if (v.size() == 1) {
      out->assign(channels_, v[0]);
    } else if (static_cast<int>(v.size()) == channels_) {
      *out = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("decode_jpeg_warped: ", name,
                                                      " must be one value or one per channel (",
                                                      channels_, "), got ", v.size()));
    }
    return absl::OkStatus();
  }

  tfg::Status DecodeOne(const tensorflow::tstring& jpeg, uint64_t seed, uint64_t epoch,
                        int64_t element, Tensor* out, size_t offset) const {
    const auto* data = reinterpret_cast<const uint8_t*>(jpeg.data());
    tfg::jpeg::ImageInfo info;
    TFG_RETURN_IF_ERROR(tfg::jpeg::ReadHeader(data, jpeg.size(), &info));
    double m[9];
    tfg::warp::TransformMatrix(spec_, tfg::HashKey({seed, epoch, static_cast<uint64_t>(element)}),
                               info.height, info.width, height_, width_, m);
    tfg::jpeg::WarpTarget target;
    target.out_height = static_cast<int>(height_);
    target.out_width = static_cast<int>(width_);
    target.dct_scaling = dct_scaling_;
    target.bias = bias_.data();
    target.norm = norm_.data();
    target.oob_color = oob_.data();
    if (float_output_) {
      return tfg::jpeg::DecodeWarped(data, jpeg.size(), options_, info, m, target,
                                     out->flat<float>().data() + offset);
    }
    return tfg::jpeg::DecodeWarped(data, jpeg.size(), options_, info, m, target,
                                   out->flat<uint8_t>().data() + offset);
  }

  tfg::warp::TransformSpec spec_;
  tfg::jpeg::DecodeOptions options_;
  int64_t height_ = 0, width_ = 0;
  int channels_ = 3;
  bool float_output_ = false;
  bool dct_scaling_ = true;
  std::vector<float> bias_, norm_, oob_;
};

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(::tensorflow::DEVICE_CPU), DecodeJpegWarpedOp);

}  // namespace
}  // namespace tf_gulp
