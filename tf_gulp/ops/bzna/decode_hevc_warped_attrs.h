// DecodeHevcWarped's attrs, read and checked once for its kernels (today the
// GPU kernel, decode_hevc_warped_gpu_op.cc; the CPU kernel checks the same
// attrs the same way in decode_hevc_warped_op.cc and can share this).
#ifndef TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_
#define TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_gulp/ops/framework/core_status.h"

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
    std::vector<float> warp, bias_list, norm_list;
    std::string crop, chroma_name;
    tensorflow::DataType dtype;
    for (const auto& [name, list] : {std::pair<const char*, std::vector<float>*>{"warp", &warp},
                                     {"bias", &bias_list}, {"norm", &norm_list}}) {
      TF_RETURN_IF_ERROR(ctx->GetAttr(name, list));
    }
    TF_RETURN_IF_ERROR(ctx->GetAttr("output_height", &height));
    TF_RETURN_IF_ERROR(ctx->GetAttr("output_width", &width));
    TF_RETURN_IF_ERROR(ctx->GetAttr("output_type", &dtype));
    TF_RETURN_IF_ERROR(ctx->GetAttr("track", &track));
    TF_RETURN_IF_ERROR(ctx->GetAttr("crop", &crop));
    TF_RETURN_IF_ERROR(ctx->GetAttr("chroma_upsampling", &chroma_name));
    TF_RETURN_IF_ERROR(ctx->GetAttr("threads", &threads));
    if (threads < 0) return absl::InvalidArgumentError("decode_hevc_warped: threads must be >= 0");
    TF_RETURN_IF_ERROR(ToTfStatus(tfg::warp::ParseTransformSpec(warp, &spec)));
    TF_RETURN_IF_ERROR(ToTfStatus(tfg::codec::ParseChromaUpsampling(chroma_name, &chroma)));
    clean = crop == "clean";
    float_output = dtype == tensorflow::DT_FLOAT;
    TF_RETURN_IF_ERROR(ThreeValues(bias_list, "bias", bias));
    return ThreeValues(norm_list, "norm", norm);
  }

  // Empty: the default kept; one value: all channels; three: one each.
  static absl::Status ThreeValues(const std::vector<float>& v, const char* name, float out[3]) {
    if (v.size() != 0 && v.size() != 1 && v.size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "decode_hevc_warped: ", name, " must be one value or one per channel (3), got ",
          v.size()));
    }
    for (size_t c = 0; c < 3 && !v.empty(); ++c) out[c] = v[v.size() == 1 ? 0 : c];
    return absl::OkStatus();
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_BZNA_DECODE_HEVC_WARPED_ATTRS_H_
