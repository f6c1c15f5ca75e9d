// The similarity warp of a decoded HEVC picture, fused with its conversion to
// RGB: only the rectangle of the decoder's Y'CbCr picture that the warp
// samples (the bounding box of the output's footprint, one pixel of margin)
// is converted to RGB, into a per-thread buffer, and warped from there
// straight into the caller's output with the fixed-point warp
// (cc/warp/fixed_point_warp.h; projective matrices: WarpRows).
//
// The RGB pixels are those HevcDecoder::ToRgb makes for the whole picture
// (chroma taps are placed by absolute position, so a rectangle converts to
// the same values), so the result is decode_hevc + similarity_warp within
// the fixed-point warp's one level (hevc_warp_test.cc). A RandomResizedCrop
// of 8-100% of the picture converts that share instead of all of it, and no
// RGB picture is allocated per image. TensorFlow-free, thread-safe.
#ifndef TF_GULP_CC_CODEC_HEVC_WARP_H_
#define TF_GULP_CC_CODEC_HEVC_WARP_H_

#include <cstdint>

#include "cc/codec/hevc_decoder.h"
#include "cc/codec/hevc_sample.h"
#include "cc/codec/ycbcr.h"
#include "cc/util/status.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace codec {

// The output: out_height x out_width x 3 (NHWC) of float ((v - bias) * norm)
// or uint8 (v); bias, norm and oob_color hold 3 values each (bias and norm
// used for float output).
struct HevcWarpTarget {
  int out_height = 0;
  int out_width = 0;
  const float* bias = nullptr;
  const float* norm = nullptr;
  const float* oob_color = nullptr;
  // Colour augmentation of the warped picture, before bias and norm (as
  // jpeg::WarpTarget's); null or empty: none.
  const warp::ColorDraw* color = nullptr;
};

// The rectangle of `region` (in its own coordinates) that `matrix` samples;
// empty (width 0) when every output pixel maps outside it.
PictureRegion SampledBox(const PictureRegion& region, const double matrix[9],
                         int out_height, int out_width);

// Warps `region` of the decoder's last picture with `matrix` (row-major 3x3,
// output pixels -> pixels of the region, conventions of similarity_warp.h).
Status WarpDecoded(const HevcDecoder& decoder, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, float* dst);
Status WarpDecoded(const HevcDecoder& decoder, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, uint8_t* dst);

// The same for a picture already in memory, e.g. an NV12 surface (the caller
// checks `region` lies inside it): what decode_hevc_warped's GPU kernel is
// compared with (cc/gpu/nvdec_warp_test.cc). `Out` is float or uint8_t.
template <typename Out>
Status WarpDecoded(const YcbcrPicture& picture, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, Out* dst);

}  // namespace codec
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_HEVC_WARP_H_
