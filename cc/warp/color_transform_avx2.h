// The AVX2 build of the colour steps (color_transform_avx2.cc), for
// color_transform.cc to call where the CPU has them. Not a public header.
#ifndef TF_GULP_CC_WARP_COLOR_TRANSFORM_AVX2_H_
#define TF_GULP_CC_WARP_COLOR_TRANSFORM_AVX2_H_

#include <cstdint>

#include "cc/warp/color_transform.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFG_HAVE_AVX2_COLOR 1

namespace tfg {
namespace warp {

// ColorOutput's work on 3-channel pictures (`n` pixels, interleaved): uint8
// levels to rounded levels, float levels to (v - bias) * norm. Call only where
// the CPU has AVX2.
void ColorRgbAvx2(const ColorDraw& draw, int64_t n, const uint8_t* src, uint8_t* dst);
void ColorRgbAvx2(const ColorDraw& draw, int64_t n, const float* src, const float* bias,
                  const float* norm, float* dst);

}  // namespace warp
}  // namespace tfg

#endif
#endif  // TF_GULP_CC_WARP_COLOR_TRANSFORM_AVX2_H_
