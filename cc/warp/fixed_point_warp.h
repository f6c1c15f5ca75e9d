// The similarity warp of similarity_warp.h for the fused decoders' hot path:
// affine matrices, NHWC, 1 or 3 channels, bilinear weights in 11-bit fixed
// point. Same conventions (pixel centres at integers, the picture covering
// [-0.5, w - 0.5] x [-0.5, h - 0.5], edge pixels repeated, outside ->
// oob_color, output (v - bias) * norm or v), within one level of
// WarpRows (the weights are rounded to 1/2048; similarity_warp_test... see
// fixed_point_warp_test.cc). Kept apart from WarpRows because that general
// loop (projective matrices, NCHW, any channel count) would cost as much as
// the decoding it follows.
#ifndef TF_GULP_CC_WARP_FIXED_POINT_WARP_H_
#define TF_GULP_CC_WARP_FIXED_POINT_WARP_H_

#include <cstdint>

#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace warp {

// True when WarpAffine handles `g` and `matrix`: an affine matrix, NHWC, 1 or
// 3 channels, coordinates within the fixed-point range.
bool CanWarpAffine(const WarpGeometry& g, const double matrix[9]);

// Whole output picture; bias/norm used for float output only.
void WarpAffine(const WarpGeometry& g, const uint8_t* src, const double matrix[9],
                const float* bias, const float* norm, const float* oob_color, float* dst);
void WarpAffine(const WarpGeometry& g, const uint8_t* src, const double matrix[9],
                const float* oob_color, uint8_t* dst);

}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_FIXED_POINT_WARP_H_
