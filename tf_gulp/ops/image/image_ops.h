// The interface of the image ops, shared by their registrations
// (image_ops.cc) and their kernels (similarity_warp_op.cc and its GPU twin,
// similarity_transform_op.cc, decode_jpeg_warped_op.cc): their names and
// attr tables, each written once (framework/attr_table.h). The JPEG decode
// attrs are GulpDataset's too (gulp/gulp_ops.h).
#ifndef TF_GULP_OPS_IMAGE_IMAGE_OPS_H_
#define TF_GULP_OPS_IMAGE_IMAGE_OPS_H_

#include <string>

#include "cc/codec/jpeg_decoder.h"
#include "tf_gulp/ops/image/fused_warp_args.h"

namespace tf_gulp {

inline constexpr char kSimilarityWarpOp[] = "TfGulp>SimilarityWarp";
inline constexpr char kSimilarityTransformMatricesOp[] = "TfGulp>SimilarityTransformMatrices";
inline constexpr char kDecodeJpegWarpedOp[] = "TfGulp>DecodeJpegWarped";

struct SimilarityWarpAttrs {
  std::string layout;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("layout", "{'NHWC', 'NCHW'} = 'NHWC'", a.layout);
  }
};

// How a JPEG is decoded: colour space, IDCT, and (where a warp follows) the
// DCT scaling the fused decode may pick.
struct JpegDecodeAttrs {
  std::string colorspace;
  std::string dct_method;
  bool dct_scaling = true;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("colorspace", "{'rgb', 'gray'} = 'rgb'", a.colorspace,
          "the decoded channels (3 or 1), whatever the JPEGs hold");
    visit("dct_method", "{'fast', 'accurate'} = 'fast'", a.dct_method,
          "libjpeg-turbo's fast integer IDCT, or its accurate one");
    visit("dct_scaling", "bool = true", a.dct_scaling,
          "with shape: let the decoder scale by 1/2, 1/4, 1/8 where the output keeps its resolution");
  }

  // The core's decode options these attrs say (the scale is the caller's).
  tfg::jpeg::DecodeOptions Options() const {
    tfg::jpeg::DecodeOptions d;
    d.color_space = colorspace == "gray" ? tfg::jpeg::ColorSpace::kGray : tfg::jpeg::ColorSpace::kRgb;
    d.fast_dct = dct_method == "fast";
    return d;
  }
};

using DecodeJpegWarpedAttrs = FusedOpAttrs<JpegDecodeAttrs>;

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_IMAGE_IMAGE_OPS_H_
