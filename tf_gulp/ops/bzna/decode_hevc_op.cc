// DecodeHevc: one per-image MP4 (the bytes of a Benzina `bzna_input` sample,
// or any single-picture HEVC MP4) -> uint8 RGB [H, W, 3], decoded on the CPU
// by libavcodec (cc/codec/hevc_decoder.*) after the container is parsed and
// validated (cc/codec/hevc_sample.*: the same track and crop rules as
// decode_hevc_warped). The RGB pixels are written straight into
// the output tensor.
//
// This is the CPU kernel (the op is registered in bzna_ops.cc);
// decode_hevc_gpu_op.cc registers the GPU one (NVDEC, falling back to the
// same CPU decode).
#include <cstdint>
#include <string>

#include "cc/codec/hevc_coded_size.h"
#include "cc/codec/hevc_decoder.h"
#include "cc/codec/hevc_sample.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

class DecodeHevcOp : public OpKernel {
 public:
  explicit DecodeHevcOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES_OK(ctx, attrs_.Parse("decode_hevc"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "decode_hevc: contents must be a scalar string (one MP4), got shape ",
                    input.shape().DebugString())));
    OP_REQUIRES_OK(ctx, CheckScalarInputs(ctx, {1}, "decode_hevc: what must be a scalar string"));
    int max_height = 0, max_width = 0;  // only NVDEC's decoders need sizing ahead
    OP_REQUIRES_OK(ctx, CheckMaxSize(ctx->input(2), &max_height, &max_width));
    const Tensor& what_input = ctx->input(1);
    const tstring& bytes = input.scalar<tstring>()();
    const std::string what = tfg::codec::HevcSampleName(
        std::string(what_input.scalar<tstring>()()), bytes.size());
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());

    tfg::codec::HevcDecoder* decoder = nullptr;
    tfg::codec::PictureRegion r;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::DecodeHevcSample(data, bytes.size(), attrs_.track,
                                                                attrs_.clean(), attrs_.threads, what,
                                                                &decoder, &r)));
    const int x = r.x, y = r.y, w = r.width, h = r.height;
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({h, w, 3}), &output));
    OP_REQUIRES_OK(ctx, ToTfStatus(decoder->ToRgb(x, y, w, h, attrs_.chroma,
                                                  output->flat<uint8_t>().data())));
  }

 private:
  HevcDecodeAttrs attrs_;
};

REGISTER_KERNEL_BUILDER(Name(kDecodeHevcOp).Device(tensorflow::DEVICE_CPU), DecodeHevcOp);

// HevcSampleSize: the [height, width] decode_hevc would output for a sample,
// from its MP4 alone (no decoding): the crop rectangle computed on the size
// the visual sample entry declares. DataLoader(device=...) uses it to make
// each picture's warp matrix in tf.data while the picture itself is decoded
// on the device; the step checks the decoded size against it.
class HevcSampleSizeOp : public OpKernel {
 public:
  explicit HevcSampleSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalarInputs(ctx, {0, 1}, "hevc_sample_size: contents and what "
                                                       "must be scalar strings"));
    const Tensor& input = ctx->input(0);
    const Tensor& what_input = ctx->input(1);
    const tstring& bytes = input.scalar<tstring>()();
    const std::string what = tfg::codec::HevcSampleName(
        std::string(what_input.scalar<tstring>()()), bytes.size());
    tfg::codec::ParsedHevcSample sample;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::ParseHevcSample(
                            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                            attrs_.track, what, &sample)));
    Tensor* output = nullptr;
    if (attrs_.coded()) {
      int w = 0, h = 0;
      OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::HevcCodedSize(
                              reinterpret_cast<const uint8_t*>(sample.annex_b.data()),
                              sample.annex_b.size(), what, &w, &h)));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({2}), &output));
      output->vec<int32_t>()(0) = h;
      output->vec<int32_t>()(1) = w;
      return;
    }
    const auto& track = sample.picture_track();
    OP_REQUIRES(ctx, track.coded_width >= 1 && track.coded_height >= 1,
                absl::DataLossError(absl::StrCat(what, ": track '", track.name,
                                                 "' declares no picture size in its sample "
                                                 "entry")));
    tfg::codec::PictureRegion r;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::codec::HevcSampleRegion(sample, attrs_.clean(),
                                                                track.coded_width,
                                                                track.coded_height, what, &r)));
    const int w = r.width, h = r.height;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({2}), &output));
    output->vec<int32_t>()(0) = h;
    output->vec<int32_t>()(1) = w;
  }

 private:
  HevcSizeAttrs attrs_;
};

REGISTER_KERNEL_BUILDER(Name(kHevcSampleSizeOp).Device(tensorflow::DEVICE_CPU),
                        HevcSampleSizeOp);

}  // namespace
}  // namespace tf_gulp
