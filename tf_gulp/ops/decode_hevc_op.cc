// DecodeHevc: one per-image MP4 (the bytes of a Benzina `bzna_input` sample,
// or any single-picture HEVC MP4) -> uint8 RGB [H, W, 3], decoded on the CPU
// by libavcodec (cc/codec/hevc_decoder.*) after the container is parsed and
// validated (cc/mp4/mp4_reader.*). The RGB pixels are written straight into
// the output tensor.
//
// The parsing, crop and CPU decode are decode_hevc_sample.*, shared with the
// GPU kernel (decode_hevc_gpu_op.cc: NVDEC, falling back to this decode).
#include <cstdint>
#include <string>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/core_status.h"
#include "tf_gulp/ops/decode_hevc_sample.h"

namespace tf_gulp {
namespace {

using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

constexpr char kOpName[] = "TfGulp>DecodeHevc";
constexpr char kTrack[] = "track";
constexpr char kCrop[] = "crop";
constexpr char kChromaUpsampling[] = "chroma_upsampling";
constexpr char kThreads[] = "threads";

class DecodeHevcOp : public OpKernel {
 public:
  explicit DecodeHevcOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string crop, chroma;
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kTrack, &track_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kCrop, &crop));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kChromaUpsampling, &chroma));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kThreads, &threads_));
    clean_ = crop == "clean";
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::ParseChromaUpsampling(chroma, &chroma_)));
    OP_REQUIRES(ctx, threads_ >= 0,
                absl::InvalidArgumentError("decode_hevc: threads must be >= 0"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "decode_hevc: contents must be a scalar string (one MP4), got shape ",
                    input.shape().DebugString())));
    const Tensor& what_input = ctx->input(1);
    OP_REQUIRES(ctx, what_input.dims() == 0,
                absl::InvalidArgumentError("decode_hevc: what must be a scalar string"));
    const tstring& bytes = input.scalar<tstring>()();
    HevcSample sample;
    OP_REQUIRES_OK(ctx, ToTfStatus(ParseHevcSample(
                            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                            track_, std::string(what_input.scalar<tstring>()()), &sample)));
    absl::Status allocated;  // TensorFlow's own status (e.g. out of memory) if allocation fails
    const tfg::Status decoded =
        DecodeHevcOnCpu(sample, clean_, chroma_, threads_, [ctx, &allocated](int h, int w,
                                                                              uint8_t** rgb) {
          Tensor* output = nullptr;
          allocated = ctx->allocate_output(0, TensorShape({h, w, 3}), &output);
          if (!allocated.ok()) return tfg::InternalError(allocated.message());
          *rgb = output->flat<uint8_t>().data();
          return tfg::Status::Ok();
        });
    OP_REQUIRES_OK(ctx, allocated);
    OP_REQUIRES_OK(ctx, ToTfStatus(decoded));
  }

 private:
  std::string track_;
  bool clean_ = true;
  tfg::codec::ChromaUpsampling chroma_ = tfg::codec::ChromaUpsampling::kBilinear;
  int threads_ = 1;
};

REGISTER_OP(kOpName)
    .Input("contents: string")
    .Input("what: string")
    .Output("image: uint8")
    .Attr("track: string = 'bzna_input'")
    .Attr("crop: {'clean', 'full'} = 'clean'")
    .Attr("chroma_upsampling: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("threads: int = 1")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &unused));
      c->set_output(0, c->MakeShape({c->UnknownDim(), c->UnknownDim(), 3}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
Decodes the HEVC picture of a single-picture MP4 (a Benzina per-image sample)
to RGB [H, W, 3]: the clean aperture by default, or the full coded frame.
`what` names the sample in error messages (empty: its size).
)doc");

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(tensorflow::DEVICE_CPU), DecodeHevcOp);

// HevcSampleSize: the [height, width] decode_hevc would output for a sample,
// from its MP4 alone (no decoding): the crop rectangle computed on the size
// the visual sample entry declares. DataLoader(device=...) uses it to make
// each picture's warp matrix in tf.data while the picture itself is decoded
// on the device; the step checks the decoded size against it.
constexpr char kSizeOpName[] = "TfGulp>HevcSampleSize";

class HevcSampleSizeOp : public OpKernel {
 public:
  explicit HevcSampleSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string crop;
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kTrack, &track_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kCrop, &crop));
    clean_ = crop == "clean";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& what_input = ctx->input(1);
    OP_REQUIRES(ctx, input.dims() == 0 && what_input.dims() == 0,
                absl::InvalidArgumentError("hevc_sample_size: contents and what must be scalar "
                                           "strings"));
    const tstring& bytes = input.scalar<tstring>()();
    HevcSample sample;
    OP_REQUIRES_OK(ctx, ToTfStatus(ParseHevcSample(
                            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                            track_, std::string(what_input.scalar<tstring>()()), &sample)));
    const auto& track = sample.movie.tracks[sample.track];
    OP_REQUIRES(ctx, track.coded_width >= 1 && track.coded_height >= 1,
                absl::DataLossError(absl::StrCat(sample.what, ": track '", track.name,
                                                 "' declares no picture size in its sample "
                                                 "entry")));
    int x, y, w, h;
    OP_REQUIRES_OK(ctx, ToTfStatus(HevcCropRegion(sample, clean_, track.coded_width,
                                                  track.coded_height, &x, &y, &w, &h)));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({2}), &output));
    output->vec<int32_t>()(0) = h;
    output->vec<int32_t>()(1) = w;
  }

 private:
  std::string track_;
  bool clean_ = true;
};

REGISTER_OP(kSizeOpName)
    .Input("contents: string")
    .Input("what: string")
    .Output("size: int32")
    .Attr("track: string = 'bzna_input'")
    .Attr("crop: {'clean', 'full'} = 'clean'")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &unused));
      c->set_output(0, c->MakeShape({2}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
[height, width] of what DecodeHevc outputs for this sample, read from the MP4
(the sample entry's picture size and the crop) without decoding.
)doc");

REGISTER_KERNEL_BUILDER(Name(kSizeOpName).Device(tensorflow::DEVICE_CPU), HevcSampleSizeOp);

}  // namespace
}  // namespace tf_gulp
