// Colour augmentation of warped pictures: the C++ twin of
// tf_gulp.transforms.ColorJitter and RandomGrayscale, applied by the fused
// decode + warp kernels to each output picture after the warp and before
// (v - bias) * norm.
//
// The definitions are torchvision's (transforms.ColorJitter and
// functional.adjust_*) on pictures whose values are levels in [0, 255] kept
// as float between the steps (torchvision's float images times 255):
//   brightness f:  v' = clamp(f * v)
//   contrast f:    v' = clamp(f * v + (1 - f) * m), m the mean over the
//                  picture of gray = 0.2989 R + 0.587 G + 0.114 B
//   saturation f:  v' = clamp(f * v + (1 - f) * gray)   (one channel: v)
//   hue f:         RGB -> HSV, h' = (h + f) mod 1, HSV -> RGB (hexcone
//                  model, torchvision's _rgb2hsv / _hsv2rgb; one channel: v)
//   grayscale:     every channel = gray  (one channel: v)
// clamp is to [0, 255] after each step. ColorJitter applies its four steps in
// a random order with factors drawn uniformly from its ranges (brightness,
// contrast, saturation: [max(0, 1 - x), 1 + x]; hue [-x, x]), with
// probability p; RandomGrayscale with probability p.
//
// Every choice is a function of (key, the transform's place in the list),
// drawn with cc/util/stateless_random.h: one draw per element (a clip's frames
// all get the same one; the contrast mean is each frame's own, as torchvision
// computes it for a [T, C, H, W] tensor). TensorFlow-free.
#ifndef TF_GULP_CC_WARP_COLOR_TRANSFORM_H_
#define TF_GULP_CC_WARP_COLOR_TRANSFORM_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace warp {

// One colour transform of a list.
struct ColorTransform {
  enum class Kind { kJitter = 1, kGrayscale = 2 };
  Kind kind = Kind::kJitter;
  double p = 1.0;  // probability of applying it
  // kJitter: uniform ranges of the factors (lo == hi: constant).
  double brightness_lo = 1, brightness_hi = 1;
  double contrast_lo = 1, contrast_hi = 1;
  double saturation_lo = 1, saturation_hi = 1;
  double hue_lo = 0, hue_hi = 0;
};

// The list the ops carry, applied in order. Flat float encoding (written by
// tf_gulp.transforms' `_color_params()`), one segment per transform:
//   [1, p, b_lo, b_hi, c_lo, c_hi, s_lo, s_hi, h_lo, h_hi]   kJitter
//   [2, p]                                                    kGrayscale
// at most kMaxColorTransforms of them; [] is none.
inline constexpr int kMaxColorTransforms = 8;
struct ColorSpec {
  std::vector<ColorTransform> transforms;
  bool empty() const { return transforms.empty(); }
};

// Refuses an unknown kind, a short segment, a probability outside [0, 1], a
// factor range that is not 0 <= lo <= hi (hue: -0.5 <= lo <= hi <= 0.5) or
// too many transforms, naming the value.
Status ParseColorSpec(const std::vector<float>& values, ColorSpec* spec);

// One step of a drawn colour transform.
struct ColorStep {
  enum class Op { kBrightness = 0, kContrast = 1, kSaturation = 2, kHue = 3, kGrayscale = 4 };
  Op op = Op::kBrightness;
  float factor = 1.f;  // unused by kGrayscale
};

// The steps one element gets, in order (steps whose factor changes nothing,
// and transforms not applied, are left out).
struct ColorDraw {
  int count = 0;
  ColorStep steps[4 * kMaxColorTransforms];
  bool empty() const { return count == 0; }
};

// The draw of the element whose warp key is `key` (the fused kernels' key of
// (seed, epoch, element)): a pure function of (spec, key).
ColorDraw DrawColor(const ColorSpec& spec, uint64_t key);

// Applies `draw` in place to one picture of `pixels` pixels x `channels`
// (1 or 3, interleaved) levels in [0, 255]; the results stay unrounded. (The
// steps run a vector of pixels at a time in registers, split into channels
// there (color_pixels.h); a contrast step's mean is measured by a pass of the
// steps before it, whose result a per-thread float buffer keeps.)
void ApplyColor(const ColorDraw& draw, int64_t pixels, int channels, float* values);

// The fused kernels' output stage with colour: `levels` (one picture of
// warped levels, `pixels` x `channels`, interleaved) coloured by `draw` and
// written to `dst` as (v - bias) * norm (float) or rounded and clamped
// (uint8). `levels` may be `dst`.
void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const float* levels,
                 const float* bias, const float* norm, float* dst);
void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const uint8_t* levels,
                 uint8_t* dst);

namespace internal {
// Set by tests to run the portable path (4 lanes) where the CPU has AVX2.
extern bool color_portable_only;
}  // namespace internal

// The fused kernels' output stage. `warp(bias, norm, out)` warps one picture
// into `out` (float: (level - bias) * norm; uint8: levels). Without colour
// (`draw` null or empty) it writes `dst` directly; with colour it writes
// levels (float: bias 0, norm 1) into `dst`, which ColorOutput colours, biases
// and normalizes in place.
template <typename Out, typename Warp>
Status WarpWithColor(const ColorDraw* draw, int64_t pixels, int channels, const float* bias,
                     const float* norm, Out* dst, Warp&& warp) {
  if (draw == nullptr || draw->empty()) return warp(bias, norm, dst);
  if constexpr (std::is_same<Out, float>::value) {
    const std::vector<float> zero(channels, 0.f), one(channels, 1.f);
    Status status = warp(zero.data(), one.data(), dst);
    if (!status.ok()) return status;
    ColorOutput(*draw, pixels, channels, dst, bias, norm, dst);
  } else {
    Status status = warp(bias, norm, dst);
    if (!status.ok()) return status;
    ColorOutput(*draw, pixels, channels, dst, dst);
  }
  return Status::Ok();
}

}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_COLOR_TRANSFORM_H_
