// Similarity transforms drawn from a key: the C++ twin of
// tf_gulp.transforms.SimilarityTransform, for kernels that compute each
// element's matrix themselves (GulpDataset's fused decode + warp, the batch
// JPEG decode op) instead of receiving it from a Python map.
//
// The matrix maps output pixels (x, y, 1) to input pixels, with the
// conventions of similarity_warp.h. Its composition is the Python one
// (tf_gulp/transforms.py, compute_affine_matrix):
//   H = T_in . T_crop . R . S . T_out
// and the random quantities are the same, drawn from the same
// distributions; only the random stream differs (SplitMix64 keyed by
// (seed, epoch, element) here, TensorFlow's stateless Philox there).
// TensorFlow-free.
#ifndef TF_GULP_CC_WARP_SIMILARITY_TRANSFORM_H_
#define TF_GULP_CC_WARP_SIMILARITY_TRANSFORM_H_

#include <cstdint>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace warp {

// What a transform draws; defaults: the whole input, resized 1:1, no
// rotation, no flips.
struct SimilarityParams {
  double scale_lo = 1.0, scale_hi = 1.0;  // crop area / input area
  bool has_ratio = false;                 // false: the crop keeps the input's ratio
  double ratio_lo = 1.0, ratio_hi = 1.0;  // crop width / height
  double degrees_lo = 0.0, degrees_hi = 0.0;
  double translate_y = 0.0, translate_x = 0.0;  // fractions of the output size
  double flip_h = 0.0, flip_v = 0.0;            // probabilities
  bool resize = false;
  bool keep_ratio = false;
  bool random_crop = false;
};

// torchvision.transforms.v2's geometry, as tf_gulp.transforms compiles an
// augment list's crop, resize and flips into one transform. Crops are whole
// pixels drawn as torchvision draws them, and the matrix maps output pixel
// centres to input ones as torchvision's crop, resize (half-pixel centres) and
// flip of the output do, so that the same crop gives the same sampling grid.
struct CropResizeParams {
  enum class Mode {
    kRandomResizedCrop = 0,  // RandomResizedCrop(size, scale, ratio)
    kResizeCenterCrop = 1,   // Resize(resize) [+ CenterCrop(output)]
    kCenterCrop = 2,         // CenterCrop(output): pixels 1:1
  };
  Mode mode = Mode::kRandomResizedCrop;
  // kResizeCenterCrop: the size the picture is resized to; resize_w == 0:
  // its shorter side to resize_h, keeping the aspect ratio.
  double resize_h = 0, resize_w = 0;
  double scale_lo = 0.08, scale_hi = 1.0;      // area fractions, uniform
  double ratio_lo = 3.0 / 4, ratio_hi = 4.0 / 3;  // width / height, log-uniform
  double flip_h = 0.0, flip_v = 0.0;           // probabilities
};

// The transform of an element: none (the whole input resized to the output),
// a random similarity (Benzina's), a constant matrix, or torchvision's
// crop / resize / flips.
struct TransformSpec {
  enum class Kind { kResize = 0, kSimilarity = 1, kConstant = 2, kCropResize = 3 };
  Kind kind = Kind::kResize;
  SimilarityParams similarity;
  CropResizeParams crop_resize;
  double matrix[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
};

// The flat float encoding the ops carry as an attr (written by
// tf_gulp.transforms' `_kernel_params()`):
//   []                      kResize
//   [1, scale_lo, scale_hi, ratio_lo, ratio_hi (0, 0: none), degrees_lo,
//    degrees_hi, translate_y, translate_x, flip_h, flip_v, resize,
//    keep_ratio, random_crop]             kSimilarity (14 values)
//   [2, m00, m01, ..., m22]               kConstant (10 values)
//   [3, mode, resize_h, resize_w, scale_lo, scale_hi, ratio_lo, ratio_hi,
//    flip_h, flip_v]                      kCropResize (10 values)
// Refuses any other length, kind or an out-of-range value, naming it.
Status ParseTransformSpec(const std::vector<float>& values, TransformSpec* spec);

// H for explicit parameters (compute_affine_matrix in Python). Sizes are
// (height, width); crop_cy/cx is the crop centre's offset from the input's
// centre; ty/tx the output translation in output pixels.
void AffineMatrix(double in_h, double in_w, double out_h, double out_w,
                  double crop_h, double crop_w, double crop_cy, double crop_cx,
                  double degrees, double ty, double tx, bool flip_h, bool flip_v,
                  bool resize, bool keep_ratio, double m[9]);

// The matrix of one element: a pure function of (spec, key, sizes).
void TransformMatrix(const TransformSpec& spec, uint64_t key, int64_t in_h,
                     int64_t in_w, int64_t out_h, int64_t out_w, double m[9]);

}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_SIMILARITY_TRANSFORM_H_
