// DecodeHevc: one per-image MP4 (the bytes of a Benzina `bzna_input` sample,
// or any single-picture HEVC MP4) -> uint8 RGB [H, W, 3], decoded on the CPU
// by libavcodec (cc/codec/hevc_decoder.*) after the container is parsed and
// validated (cc/mp4/mp4_reader.*). The RGB pixels are written straight into
// the output tensor.
//
// Only a CPU kernel is registered; an NVDEC kernel can register against the
// same op name.
#include <cmath>
#include <cstdint>
#include <string>

#include "cc/codec/hevc_decoder.h"
#include "cc/mp4/mp4_reader.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/core_status.h"

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

// The rectangle of the decoded picture that `crop` asks for: the clean
// aperture (clap box, else the tkhd size when it is within the frame) or the
// full coded frame.
tfg::Status Region(const tfg::mp4::Track& t, bool clean, int frame_w, int frame_h,
                   const std::string& what, int* x, int* y, int* w, int* h) {
  *x = 0;
  *y = 0;
  *w = frame_w;
  *h = frame_h;
  if (!clean) return tfg::Status::Ok();
  if (t.clap.present) {
    const double cw = std::round(t.clap.width), ch = std::round(t.clap.height);
    const double x0 = std::round((frame_w - t.clap.width) / 2 + t.clap.horiz_offset);
    const double y0 = std::round((frame_h - t.clap.height) / 2 + t.clap.vert_offset);
    if (!(cw >= 1 && ch >= 1 && x0 >= 0 && y0 >= 0 && x0 + cw <= frame_w &&
          y0 + ch <= frame_h)) {
      return tfg::DataLossError(what, ": clean aperture ", t.clap.width, "x", t.clap.height,
                                " (offset ", t.clap.horiz_offset, ", ", t.clap.vert_offset,
                                ") is outside the ", frame_w, "x", frame_h, " picture");
    }
    *x = static_cast<int>(x0);
    *y = static_cast<int>(y0);
    *w = static_cast<int>(cw);
    *h = static_cast<int>(ch);
    return tfg::Status::Ok();
  }
  const int tw = static_cast<int>(std::round(t.width));
  const int th = static_cast<int>(std::round(t.height));
  if (tw >= 1 && th >= 1 && tw <= frame_w && th <= frame_h) {
    *w = tw;
    *h = th;
  }
  return tfg::Status::Ok();
}

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
    const tstring& label = what_input.scalar<tstring>()();
    const std::string what =
        label.empty() ? absl::StrCat("HEVC MP4 sample (", bytes.size(), " bytes)")
                      : std::string(label);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());

    tfg::mp4::Movie movie;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::ParseMovie(data, bytes.size(), what, &movie)));
    const tfg::mp4::Track* track = movie.FindTrack(track_);
    if (track == nullptr) {  // another muxer's name (FFmpeg: "VideoHandler"): first HEVC track
      for (const auto& t : movie.tracks) {
        if (t.has_hevc_config) {
          track = &t;
          break;
        }
      }
    }
    OP_REQUIRES(ctx, track != nullptr,
                absl::DataLossError(absl::StrCat(what, ": no track named '", track_,
                                                 "' and no HEVC track")));
    OP_REQUIRES(ctx, track->has_hevc_config,
                absl::DataLossError(absl::StrCat(what, ": track '", track->name,
                                                 "' is not HEVC (sample entry '",
                                                 tfg::PrintableText(track->sample_entry),
                                                 "', no hvcC)")));
    OP_REQUIRES(ctx, track->num_samples() >= 1,
                absl::DataLossError(absl::StrCat(what, ": track '", track->name,
                                                 "' has no sample")));
    std::string annex_b;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::HevcSampleToAnnexB(
                            track->hevc, data + track->sample_offsets[0],
                            track->sample_sizes[0], what, &annex_b)));
    tfg::codec::HevcDecoder* decoder = nullptr;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::HevcDecoder::ForThisThread(threads_, &decoder)));
    OP_REQUIRES_OK(ctx, ToTfStatus(decoder->Decode(
                            reinterpret_cast<const uint8_t*>(annex_b.data()),
                            annex_b.size(), what)));
    int x, y, w, h;
    OP_REQUIRES_OK(ctx, ToTfStatus(Region(*track, clean_, decoder->width(),
                                          decoder->height(), what, &x, &y, &w, &h)));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({h, w, 3}), &output));
    OP_REQUIRES_OK(ctx, ToTfStatus(decoder->ToRgb(x, y, w, h, chroma_,
                                                  output->flat<uint8_t>().data())));
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

}  // namespace
}  // namespace tf_gulp
