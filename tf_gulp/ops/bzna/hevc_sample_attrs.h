// The attrs that say which picture of a single-picture HEVC MP4 is decoded,
// and how, read once for every kernel that has them: track and crop
// (DecodeHevc, HevcSampleSize, DecodeHevcWarped), chroma_upsampling and
// threads (the two that decode). The rules they feed are cc/codec/hevc_sample.h's.
#ifndef TF_GULP_OPS_BZNA_HEVC_SAMPLE_ATTRS_H_
#define TF_GULP_OPS_BZNA_HEVC_SAMPLE_ATTRS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tf_gulp/ops/framework/core_status.h"

namespace tf_gulp {

struct HevcSampleAttrs {
  std::string track;  // the hdlr name of the picture's track
  bool clean = true;  // crop 'clean' (the clean aperture) or 'full'
  tfg::codec::ChromaUpsampling chroma = tfg::codec::ChromaUpsampling::kBilinear;
  int threads = 1;  // libavcodec's, per picture (0: its choice)

  // track and crop.
  absl::Status ReadCrop(::tensorflow::OpKernelConstruction* ctx) {
    std::string crop;
    TF_RETURN_IF_ERROR(ctx->GetAttr("track", &track));
    TF_RETURN_IF_ERROR(ctx->GetAttr("crop", &crop));
    clean = crop == "clean";
    return absl::OkStatus();
  }

  // All four; `op` begins the messages ("decode_hevc").
  absl::Status Read(::tensorflow::OpKernelConstruction* ctx, const char* op) {
    std::string chroma_name;
    TF_RETURN_IF_ERROR(ReadCrop(ctx));
    TF_RETURN_IF_ERROR(ctx->GetAttr("chroma_upsampling", &chroma_name));
    TF_RETURN_IF_ERROR(ctx->GetAttr("threads", &threads));
    if (threads < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": threads must be >= 0"));
    return ToTfStatus(tfg::codec::ParseChromaUpsampling(chroma_name, &chroma));
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_BZNA_HEVC_SAMPLE_ATTRS_H_
