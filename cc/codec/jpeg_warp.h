// JPEG decoding fused with the similarity warp: only the pixels a warp
// samples are decoded, at the smallest size that keeps the output's
// resolution, and the warp writes straight into the caller's output.
//
// With libjpeg-turbo's libjpeg API (the TurboJPEG 2 API has no cropping):
//  - the columns are cut to the iMCU boundaries around the region the warp
//    samples (jpeg_crop_scanline): columns outside are neither inverse-DCT'd
//    nor colour-converted;
//  - rows above the region are skipped (jpeg_skip_scanlines: entropy decoding
//    only), rows below are never read (the decode stops there);
//  - the IDCT scales by 1/2, 1/4 or 1/8 when the warp samples the picture at
//    least that sparsely in both directions (a crop of 240 pixels resized to
//    112 decodes at 1/2), unless the caller turns scaling off.
// Without scaling the result equals decoding every pixel and then warping
// (similarity_warp.h) up to libjpeg's edge effects of cropping (within 2
// levels, jpeg_warp_test.cc); with scaling it is the warp of the DCT-scaled
// picture, which is smoother than bilinear sampling of the full one.
//
// Like jpeg_decoder.h: any libjpeg warning is an error, progressive scans
// are limited (500), the same header limits apply, thread-safe. Damage in
// rows below the sampled region is not seen: they are never read.
#ifndef TF_GULP_CC_CODEC_JPEG_WARP_H_
#define TF_GULP_CC_CODEC_JPEG_WARP_H_

#include <cstddef>
#include <cstdint>

#include "cc/codec/jpeg_decoder.h"
#include "cc/util/status.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace jpeg {

// The output of a fused decode: out_height x out_width x channels (NHWC) of
// float ((v - bias) * norm) or uint8 (v).
struct WarpTarget {
  int out_height = 0;
  int out_width = 0;
  // Decode at 1/2, 1/4, 1/8 where the warp keeps the output's resolution.
  bool dct_scaling = true;
  // One value per channel each; bias and norm are used for float output.
  const float* bias = nullptr;
  const float* norm = nullptr;
  const float* oob_color = nullptr;
  // Colour augmentation of the warped picture (cc/warp/color_transform.h),
  // before bias and norm; null or empty: none. Out-of-bounds pixels are then
  // coloured, biased and normed like the others (their level is oob_color).
  const warp::ColorDraw* color = nullptr;
};

// What a fused decode reads: the scale and the region of the scaled picture
// ([x0, x1) x [y0, y1), before jpeg_crop_scanline widens the columns to
// iMCU boundaries); empty when the warp samples nothing inside the picture.
struct CropPlan {
  int scale_denominator = 1;
  int scaled_width = 0, scaled_height = 0;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool empty = false;
};

// The plan for warping a picture of `info`'s size with `matrix` (row-major
// 3x3, output pixels -> full-size input pixels) to `target`'s size.
CropPlan PlanCrop(const ImageInfo& info, const double matrix[9],
                  const WarpTarget& target);

// Decodes what `matrix` samples of the JPEG `data` and warps it into `dst`
// (out_height * out_width * channels values). `info` is the JPEG's header
// (ReadHeader, which also applies the size limits). options.color_space,
// fast_dct and fast_upsample apply; options.scale_denominator is ignored (the
// plan's scale is used). `plan` may be null; else it receives the plan.
Status DecodeWarped(const uint8_t* data, size_t size, const DecodeOptions& options,
                    const ImageInfo& info, const double matrix[9],
                    const WarpTarget& target, float* dst, CropPlan* plan = nullptr);
Status DecodeWarped(const uint8_t* data, size_t size, const DecodeOptions& options,
                    const ImageInfo& info, const double matrix[9],
                    const WarpTarget& target, uint8_t* dst, CropPlan* plan = nullptr);

// The whole picture at 1/options.scale_denominator (width x height, its
// ScaledSize) through the libjpeg API, rows packed: what Decode does with
// TurboJPEG, for the JPEGs TurboJPEG cannot convert (CMYK, YCCK).
Status DecodeWhole(const uint8_t* data, size_t size, const DecodeOptions& options,
                   const ImageInfo& info, int width, int height, uint8_t* dst);

}  // namespace jpeg
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_JPEG_WARP_H_
