// DecodeHevcWarped's CPU kernel (registered in bzna_ops.cc): a batch of
// single-picture HEVC MP4s (Benzina per-image samples) decoded fused with the
// similarity warp. Each picture is decoded (cc/codec/hevc_sample.h: the same
// track and clean-aperture rules as DecodeHevc), only the rectangle its warp
// samples is converted from the decoder's Y'CbCr planes to RGB, and that is
// warped straight into the output (cc/codec/hevc_warp.h). The attrs, inputs,
// random transform (the clean aperture's size as the input size) and batch
// loop are shared with DecodeJpegWarped (image/fused_warp_args.h).
#include <cstdint>
#include <string>

#include "cc/codec/hevc_decoder.h"
#include "cc/codec/hevc_sample.h"
#include "cc/codec/hevc_warp.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/image/fused_warp_args.h"

namespace tf_gulp {
namespace {

constexpr char kOp[] = "decode_hevc_warped";

class DecodeHevcWarpedOp : public ::tensorflow::OpKernel {
 public:
  explicit DecodeHevcWarpedOp(::tensorflow::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES_OK(ctx, attrs_.Parse(kOp));
  }

  void Compute(::tensorflow::OpKernelContext* ctx) override {
    const auto labels = ctx->input(1).flat<tstring>();  // `what`, checked [B] before it is read
    // A picture costs about ten million cycles to decode: shard by picture.
    ComputeFusedWarpBatch(ctx, kOp, attrs_, {"what"}, 10000000,
                          [&](int64_t i, const tstring& bytes, const FusedWarpPicture& picture) {
                            return DecodeOne(bytes, labels(i), picture);
                          });
  }

 private:
  tfg::Status DecodeOne(const tstring& bytes, const tstring& label,
                        const FusedWarpPicture& picture) const {
    const std::string what = tfg::codec::HevcSampleName(std::string(label), bytes.size());
    tfg::codec::HevcDecoder* decoder = nullptr;
    tfg::codec::PictureRegion region;
    TFG_RETURN_IF_ERROR(tfg::codec::DecodeHevcSample(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), attrs_.extra.track,
        attrs_.extra.clean(), attrs_.extra.threads, what, &decoder, &region));
    double m[9];
    picture.Matrix(region.height, region.width, m);
    tfg::codec::HevcWarpTarget target;
    attrs_.FillTarget(&target);
    const tfg::warp::ColorDraw color = picture.Color();
    target.color = &color;
    return picture.Write([&](auto* out) {
      return tfg::codec::WarpDecoded(*decoder, region, attrs_.extra.chroma, m, target, out);
    });
  }

  DecodeHevcWarpedAttrs attrs_;
};

REGISTER_KERNEL_BUILDER(Name(kDecodeHevcWarpedOp).Device(::tensorflow::DEVICE_CPU),
                        DecodeHevcWarpedOp);

}  // namespace
}  // namespace tf_gulp
