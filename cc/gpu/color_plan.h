// The host side of the GPU colour stage (color_pixel.h, tfg_color_levels):
// a picture's drawn colour (warp::DrawColor, drawn on the host from the same
// key as its matrix) and its warp's output as the kernel's by-value plan, the
// warp the fused kernel runs before it, and the launch. Shared by the JPEG and
// HEVC bodies.
#ifndef TF_GULP_CC_GPU_COLOR_PLAN_H_
#define TF_GULP_CC_GPU_COLOR_PLAN_H_

#include "cc/gpu/color_pixel.h"
#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace gpu {

static_assert(sizeof(warp::ColorDraw::steps) / sizeof(warp::ColorStep) == kColorPlanSteps,
              "the kernel's plan holds every step a draw can have");
static_assert(static_cast<int>(warp::ColorStep::Op::kBrightness) == kColorBrightness &&
                  static_cast<int>(warp::ColorStep::Op::kContrast) == kColorContrast &&
                  static_cast<int>(warp::ColorStep::Op::kSaturation) == kColorSaturation &&
                  static_cast<int>(warp::ColorStep::Op::kHue) == kColorHue &&
                  static_cast<int>(warp::ColorStep::Op::kGrayscale) == kColorGrayscale,
              "the kernel's step kinds are warp::ColorStep::Op's");

// True when `draw` has steps to run (null or empty: the warp alone, as today).
inline bool HasColor(const warp::ColorDraw* draw) { return draw != nullptr && !draw->empty(); }

// The colour kernel's plan for picture `w`'s output coloured by `draw`: its
// bias and norm are `w`'s, applied after the steps.
inline ColorPlan ColorPlanOf(const warp::ColorDraw& draw, const RegionWarp& w) {
  ColorPlan p;
  p.count = draw.count;
  for (int k = 0; k < draw.count; ++k) {
    p.ops[k] = static_cast<int>(draw.steps[k].op);
    p.factors[k] = draw.steps[k].factor;
  }
  for (int c = 0; c < 3; ++c) {
    p.bias[c] = w.bias[c];
    p.norm[c] = w.norm[c];
  }
  p.out_height = w.out_height;
  p.out_width = w.out_width;
  p.nchw = w.nchw;
  p.u8_output = w.u8_output;
  return p;
}

// The warp that runs before the colour kernel: levels (float: bias 0, norm 1;
// the out-of-bounds colour as it is), as the CPU's WarpWithColor writes them.
inline RegionWarp LevelsWarp(RegionWarp w) {
  for (int c = 0; c < 3; ++c) {
    w.bias[c] = 0.f;
    w.norm[c] = 1.f;
  }
  return w;
}

// tfg_color_levels' launch: one block per picture.
inline LaunchDims ColorLaunchDims() {
  LaunchDims d;
  d.grid_x = d.grid_y = d.grid_z = 1;
  d.block_x = kColorThreads;
  d.block_y = d.block_z = 1;
  return d;
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_COLOR_PLAN_H_
