// The device check's colour cases (nvjpeg and nvdec phases): each picture is
// warped on the GPU twice, once to levels (no colour, bias 0, norm 1) and once
// with a colour draw; the second must be the CPU's colour output stage
// (warp::ColorOutput) on the first's levels, within a level. The comparison
// isolates the GPU colour kernel from the warp's own differences to the CPU.
#ifndef TF_GULP_CC_GPU_TESTING_COLOR_CHECK_H_
#define TF_GULP_CC_GPU_TESTING_COLOR_CHECK_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cc/util/stateless_random.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace gpu {
namespace testing {

// ColorJitter(0.4, 0.4, 0.4, 0.1) then RandomGrayscale(0.3): every step kind,
// in drawn orders.
inline warp::ColorSpec CheckColorSpec() {
  warp::ColorSpec spec;
  const Status s = warp::ParseColorSpec(
      {1, 1, 0.6f, 1.4f, 0.6f, 1.4f, 0.6f, 1.4f, -0.1f, 0.1f, 2, 0.3f}, &spec);
  (void)s;  // a constant list the parser takes
  return spec;
}

inline warp::ColorDraw CheckColorDraw(int index) {
  return warp::DrawColor(CheckColorSpec(), HashKey({5, 0, static_cast<uint64_t>(index)}));
}

// ImageNet's mean and 1 / std in levels.
inline const float kCheckBias[3] = {123.675f, 116.28f, 103.53f};
inline const float kCheckNorm[3] = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f};

// The largest difference, in levels, between `got` (float, (v - bias) * norm,
// NHWC) and the CPU's colour output stage on `levels` (NHWC float levels).
inline double FloatColorDiff(const warp::ColorDraw& draw, int64_t pixels, const float* levels,
                             const float* got) {
  std::vector<float> want(static_cast<size_t>(pixels) * 3);
  warp::ColorOutput(draw, pixels, 3, levels, kCheckBias, kCheckNorm, want.data());
  double worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    worst = std::max(worst, std::fabs(double(got[k]) - want[k]) / kCheckNorm[k % 3]);
  }
  return worst;
}

// The same for uint8 output: the CPU stage on the levels as the uint8 warp
// writes them (rounded; inside the picture they are whole already).
inline double U8ColorDiff(const warp::ColorDraw& draw, int64_t pixels, const float* levels,
                          const uint8_t* got) {
  const size_t n = static_cast<size_t>(pixels) * 3;
  std::vector<uint8_t> in(n), want(n);
  for (size_t k = 0; k < n; ++k) {
    in[k] = static_cast<uint8_t>(std::min(255.f, std::max(0.f, std::floor(levels[k] + 0.5f))));
  }
  warp::ColorOutput(draw, pixels, 3, in.data(), want.data());
  double worst = 0;
  for (size_t k = 0; k < n; ++k) worst = std::max(worst, std::fabs(double(got[k]) - want[k]));
  return worst;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_COLOR_CHECK_H_
