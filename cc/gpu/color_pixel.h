// The colour steps (cc/warp/color_transform.h: ColorJitter, RandomGrayscale)
// as the GPU's colour kernel (tfg_color_levels, similarity_warp_kernels.cu)
// computes them, one pixel at a time: shared by the kernel and the host, so
// the harness compares this very arithmetic with the CPU's ColorOutput.
//
// The fused warp kernels write levels (0-255, unnormalized) when a picture
// has colour; tfg_color_levels then colours the picture in place and writes
// (v - bias) * norm (float) or rounded levels (uint8), as the CPU's
// WarpWithColor does. A contrast step needs the mean gray of the picture as
// the steps before it left it: one block per picture measures it (each thread
// re-runs those steps on its pixels, the block adds the sums), so no picture
// is written until every mean is known and no device scratch memory is needed.
#ifndef TF_GULP_CC_GPU_COLOR_PIXEL_H_
#define TF_GULP_CC_GPU_COLOR_PIXEL_H_

#include <stdint.h>

#include "cc/util/host_device.h"

namespace tfg {
namespace gpu {

// warp::ColorDraw's bound (4 steps x 8 transforms); color_plan.h checks it.
constexpr int kColorPlanSteps = 32;
// Threads of the colour kernel's one block per picture.
constexpr int kColorThreads = 256;

// The step kinds, warp::ColorStep::Op's values (color_plan.h checks them).
enum ColorOp : int {
  kColorBrightness = 0,
  kColorContrast = 1,
  kColorSaturation = 2,
  kColorHue = 3,
  kColorGrayscale = 4,
};

// One picture's colour: the drawn steps, and its output (out_height x
// out_width x 3 values, NHWC or NCHW). Passed to the kernel by value.
struct ColorPlan {
  int count = 0;
  int ops[kColorPlanSteps] = {};
  float factors[kColorPlanSteps] = {};
  float bias[3] = {0, 0, 0};
  float norm[3] = {1, 1, 1};
  int out_height = 0, out_width = 0;
  int nchw = 0;       // else NHWC
  int u8_output = 0;  // uint8 levels, else float32 (v - bias) * norm
};

// The CPU's definitions (color_pixels.h): max / min as a > b ? a : b, the
// clamp after every step, ITU-R 601-2 gray.
TFG_HOST_DEVICE float ColorMax(float a, float b) { return a > b ? a : b; }
TFG_HOST_DEVICE float ColorMin(float a, float b) { return a < b ? a : b; }
TFG_HOST_DEVICE float ColorClamp(float v) { return ColorMin(255.f, ColorMax(0.f, v)); }
TFG_HOST_DEVICE float ColorGray(float r, float g, float b) {
  return 0.2989f * r + 0.587f * g + 0.114f * b;
}

// torchvision's RGB -> HSV, h + shift turns, HSV -> RGB, in the closed form
// color_pixels.h's ShiftHueVector uses (one formula per channel, no sector
// branches): c = max - min, h in sixths of a turn from the maximum channel,
// channel n (5, 3, 1 for R, G, B) = max - c clamp(2 - |k - 2|, 0, 1),
// k = (n + 6 h') mod 6. A gray pixel (c = 0) stays as it is.
TFG_HOST_DEVICE void ColorShiftHue(float shift, float& r, float& g, float& b) {
  const float maxc = ColorMax(r, ColorMax(g, b));
  const float c = maxc - ColorMin(r, ColorMin(g, b));
  const bool max_r = maxc == r, max_g = maxc == g;
  const float num = max_r ? g - b : (max_g ? b - r : r - g);
  const float base = max_r ? 0.f : (max_g ? 2.f : 4.f);
  // In [2, 14]: truncation floors, x - 6 trunc(x / 6) is x mod 6.
  const float x = base + num / (c == 0.f ? 1.f : c) + (6.f * shift + 6.f);
  const float h6 = x - 6.f * static_cast<float>(static_cast<int>(x * (1.f / 6.f)));
  float out[3];
  const float n[3] = {5.f, 3.f, 1.f};
  for (int i = 0; i < 3; ++i) {
    float k = h6 + n[i];
    if (k >= 6.f) k -= 6.f;
    const float d = k - 2.f;
    out[i] = maxc - c * ColorMin(1.f, ColorMax(0.f, 2.f - (d < 0.f ? -d : d)));
  }
  r = out[0];
  g = out[1];
  b = out[2];
}

// Step `k` of `plan` on one pixel; `offset` is a contrast step's
// (1 - factor) * mean (unused by the others).
TFG_HOST_DEVICE void ColorStepPixel(const ColorPlan& plan, int k, float offset, float& r,
                                    float& g, float& b) {
  const float f = plan.factors[k];
  switch (plan.ops[k]) {
    case kColorBrightness:
      r = ColorClamp(f * r), g = ColorClamp(f * g), b = ColorClamp(f * b);
      break;
    case kColorContrast:
      r = ColorClamp(f * r + offset), g = ColorClamp(f * g + offset),
      b = ColorClamp(f * b + offset);
      break;
    case kColorSaturation: {
      const float m = (1.f - f) * ColorGray(r, g, b);
      r = ColorClamp(f * r + m), g = ColorClamp(f * g + m), b = ColorClamp(f * b + m);
      break;
    }
    case kColorHue:
      ColorShiftHue(f, r, g, b);
      break;
    default: {  // kColorGrayscale
      const float v = ColorGray(r, g, b);
      r = g = b = v;
    }
  }
}

// Where pixel i's channels are in the picture (values, not bytes).
TFG_HOST_DEVICE long long ColorPixelAt(const ColorPlan& plan, long long i) {
  return plan.nchw ? i : 3 * i;
}
TFG_HOST_DEVICE long long ColorChannelStride(const ColorPlan& plan) {
  return plan.nchw ? static_cast<long long>(plan.out_height) * plan.out_width : 1;
}

// Pixel i's levels as the warp wrote them, run through steps [0, end).
TFG_HOST_DEVICE void ColorLevelsThrough(const ColorPlan& plan, const void* picture,
                                        const float* offsets, long long i, int end,
                                        float& r, float& g, float& b) {
  const long long at = ColorPixelAt(plan, i), cs = ColorChannelStride(plan);
  if (plan.u8_output) {
    const uint8_t* p = static_cast<const uint8_t*>(picture) + at;
    r = p[0], g = p[cs], b = p[2 * cs];
  } else {
    const float* p = static_cast<const float*>(picture) + at;
    r = p[0], g = p[cs], b = p[2 * cs];
  }
  for (int k = 0; k < end; ++k) {
    // Only a contrast step has an offset (its mean, measured before it runs).
    ColorStepPixel(plan, k, plan.ops[k] == kColorContrast ? offsets[k] : 0.f, r, g, b);
  }
}

// Thread `t` of `threads`' share of the picture's gray sum after steps
// [0, end): pixels t, t + threads, ...
TFG_HOST_DEVICE float ColorGrayShare(const ColorPlan& plan, const void* picture,
                                     const float* offsets, int end, int t, int threads) {
  const long long n = static_cast<long long>(plan.out_height) * plan.out_width;
  float sum = 0.f;
  for (long long i = t; i < n; i += threads) {
    float r, g, b;
    ColorLevelsThrough(plan, picture, offsets, i, end, r, g, b);
    sum += ColorGray(r, g, b);
  }
  return sum;
}

// Contrast step `k`'s offset from the threads' shares (added in thread order).
TFG_HOST_DEVICE float ColorContrastOffset(const ColorPlan& plan, int k, const float* shares,
                                          int threads) {
  const long long n = static_cast<long long>(plan.out_height) * plan.out_width;
  double total = 0;
  for (int t = 0; t < threads; ++t) total += shares[t];
  const float mean = n > 0 ? static_cast<float>(total / static_cast<double>(n)) : 0.f;
  return (1.f - plan.factors[k]) * mean;
}

// Thread `t`'s pixels coloured by every step and written as the output
// (float: (v - bias) * norm; uint8: rounded, the steps keep [0, 255]).
TFG_HOST_DEVICE void ColorWritePixels(const ColorPlan& plan, void* picture, const float* offsets,
                                      int t, int threads) {
  const long long n = static_cast<long long>(plan.out_height) * plan.out_width;
  const long long cs = ColorChannelStride(plan);
  for (long long i = t; i < n; i += threads) {
    float v[3];
    ColorLevelsThrough(plan, picture, offsets, i, plan.count, v[0], v[1], v[2]);
    const long long at = ColorPixelAt(plan, i);
    for (int c = 0; c < 3; ++c) {
      if (plan.u8_output) {
        static_cast<uint8_t*>(picture)[at + c * cs] =
            static_cast<uint8_t>(static_cast<int>(v[c] + 0.5f));
      } else {
        static_cast<float*>(picture)[at + c * cs] = (v[c] - plan.bias[c]) * plan.norm[c];
      }
    }
  }
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_COLOR_PIXEL_H_
