// DecodeHevcWarped's attrs as its GPU kernel (decode_hevc_warped_gpu_op.cc)
// holds them. They are read by the same code as the CPU kernel's
// (decode_hevc_warped_op.cc): the sample attrs by hevc_sample_attrs.h, the
// warp attrs by image/fused_warp_args.h, so both kernels check them alike and
// give the same messages.
#ifndef TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_
#define TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "cc/codec/hevc_decoder.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_gulp/ops/bzna/hevc_sample_attrs.h"
#include "tf_gulp/ops/image/fused_warp_args.h"

namespace tf_gulp {

// The attrs: the transform spec, output size and type, bias and norm (three
// values each, defaults 0 and 1), the sample track, crop and chroma upsampling.
struct DecodeHevcWarpedAttrs {
  tfg::warp::TransformSpec spec;
  int64_t height = 0, width = 0;
  std::string track;
  bool clean = true;
  tfg::codec::ChromaUpsampling chroma = tfg::codec::ChromaUpsampling::kBilinear;
  int threads = 1;
  bool float_output = false;
  float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {0, 0, 0};

  absl::Status Read(::tensorflow::OpKernelConstruction* ctx) {
    HevcSampleAttrs sample;
    FusedWarpAttrs warp;
    TF_RETURN_IF_ERROR(sample.Read(ctx, "decode_hevc_warped"));
    TF_RETURN_IF_ERROR(warp.Read(ctx, "decode_hevc_warped", 3));
    if (!warp.color.empty()) {
      // The NV12 warp kernels (cc/gpu) have no colour stage yet.
      return absl::UnimplementedError(
          "decode_hevc_warped: color= (ColorJitter, RandomGrayscale) runs only in the CPU "
          "kernel; place the op on the CPU (tf.data does) or leave color out on a GPU");
    }
    track = sample.track;
    clean = sample.clean;
    chroma = sample.chroma;
    threads = sample.threads;
    spec = warp.spec;
    height = warp.height;
    width = warp.width;
    float_output = warp.float_output;
    std::copy_n(warp.bias.begin(), 3, bias);
    std::copy_n(warp.norm.begin(), 3, norm);
    std::copy_n(warp.oob_color.begin(), 3, oob);
    return absl::OkStatus();
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_
