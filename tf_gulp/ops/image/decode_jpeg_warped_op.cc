// DecodeJpegWarped's kernel (registered in image_ops.cc, attrs in image_ops.h): a batch of JPEG
// (or PNG: cc/codec/picture.h) strings decoded fused with the similarity warp
// (cc/codec/jpeg_warp.h), for picture bytes from anywhere (FFRecord records, TFRecord examples, files): each
// picture is decoded only as far as its transform samples it and warped
// straight into the output. The attrs, inputs, random transform and batch
// loop are shared with DecodeHevcWarped (fused_warp_args.h).
#include <cstdint>
#include <string>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
#include "cc/codec/picture.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/image/decode_jpeg_warped_op.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {

tfg::Status DecodeJpegWarpedPicture(const DecodeJpegWarpedAttrs& attrs,
                                    const tfg::jpeg::DecodeOptions& options,
                                    const ::tensorflow::tstring& jpeg,
                                    const ::tensorflow::tstring& what,
                                    const FusedWarpPicture& picture) {
  const auto* data = reinterpret_cast<const uint8_t*>(jpeg.data());
  tfg::jpeg::ImageInfo info;
  tfg::Status s = tfg::picture::ReadHeader(data, jpeg.size(), &info);
  if (s.ok()) {
    double m[9];
    picture.Matrix(info.height, info.width, m);
    tfg::jpeg::WarpTarget target;
    attrs.FillTarget(&target);
    target.dct_scaling = attrs.extra.dct_scaling;
    const tfg::warp::ColorDraw color = picture.Color();
    target.color = &color;
    s = picture.Write([&](auto* out) {
      return tfg::picture::DecodeWarped(data, jpeg.size(), options, info, m, target, out);
    });
  }
  if (s.ok() || what.empty()) return s;
  // The caller's name for the picture: its file and record.
  return tfg::Status(s.code(), std::string(what) + ": " + s.message());
}

namespace {

class DecodeJpegWarpedOp : public ::tensorflow::OpKernel {
 public:
  explicit DecodeJpegWarpedOp(::tensorflow::OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    options_ = attrs_.extra.Options();
    OP_REQUIRES_OK(ctx, attrs_.Parse(kDecodeJpegWarped, tfg::jpeg::Channels(options_.color_space)));
  }

  void Compute(::tensorflow::OpKernelContext* ctx) override {
    const auto what = ctx->input(1).flat<::tensorflow::tstring>();  // checked [B] before it is read
    // A picture costs about a million cycles to decode: shard by picture.
    ComputeFusedWarpBatch(ctx, kDecodeJpegWarped, attrs_, {"what"}, 1000000,
                          [&](int64_t i, const ::tensorflow::tstring& jpeg,
                              const FusedWarpPicture& picture) {
                            return DecodeJpegWarpedPicture(attrs_, options_, jpeg, what(i),
                                                           picture);
                          });
  }

 private:
  DecodeJpegWarpedAttrs attrs_;
  tfg::jpeg::DecodeOptions options_;
};

REGISTER_KERNEL_BUILDER(Name(kDecodeJpegWarpedOp).Device(::tensorflow::DEVICE_CPU),
                        DecodeJpegWarpedOp);

}  // namespace
}  // namespace tf_gulp
