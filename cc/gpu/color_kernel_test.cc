// The GPU colour kernel's own source (tfg_color_levels in
// similarity_warp_kernels.cu, its arithmetic in color_pixel.h) run on the host
// over its real launch (one block of kColorThreads threads, __syncthreads a
// barrier: cuda_launch_stand_in.h's LaunchOnHostSynced), against the CPU
// path's output stage (warp::ColorOutput) on random pictures and draws: every
// step kind, in every position, contrast after each of the others and several
// contrasts in one draw; float (NHWC and NCHW) and uint8 outputs.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels' source on the host

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cc/gpu/color_plan.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace gpu {
namespace {

using warp::ColorDraw;
using warp::ColorStep;

// Levels as the warp writes them: whole levels, a few pixels of an
// out-of-bounds colour that is not (the CPU kernels write it as it is), some
// saturated and some gray pixels (hue's edge cases).
std::vector<float> RandomLevels(std::mt19937& rng, int pixels) {
  std::uniform_int_distribution<int> level(0, 255), kind(0, 9);
  std::vector<float> v(3 * pixels);
  for (int i = 0; i < pixels; ++i) {
    float* p = &v[3 * i];
    switch (kind(rng)) {
      case 0:  // gray
        p[0] = p[1] = p[2] = static_cast<float>(level(rng));
        break;
      case 1:  // the out-of-bounds colour
        p[0] = 7.25f, p[1] = 200.5f, p[2] = 31.f;
        break;
      case 2:  // saturated, two channels equal
        p[0] = 255.f, p[1] = 255.f, p[2] = static_cast<float>(level(rng));
        break;
      default:
        for (int c = 0; c < 3; ++c) p[c] = static_cast<float>(level(rng));
    }
  }
  return v;
}

float FactorFor(ColorStep::Op op, std::mt19937& rng) {
  if (op == ColorStep::Op::kHue) return std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
  return std::uniform_real_distribution<float>(0.f, 2.f)(rng);
}

// `count` steps of random kinds (or `kinds` in order when given).
ColorDraw RandomDraw(std::mt19937& rng, std::vector<ColorStep::Op> kinds) {
  ColorDraw d;
  for (ColorStep::Op op : kinds) d.steps[d.count++] = {op, FactorFor(op, rng)};
  return d;
}

std::string Describe(const ColorDraw& d) {
  static const char* const kNames[] = {"brightness", "contrast", "saturation", "hue", "gray"};
  std::string s;
  for (int k = 0; k < d.count; ++k) {
    s += std::string(k ? ", " : "") + kNames[static_cast<int>(d.steps[k].op)] + " " +
         std::to_string(d.steps[k].factor);
  }
  return s;
}

// The kernel over `values` (NHWC float levels, or their uint8 rounding)
// written in `nchw` layout, run in place; returned as NHWC.
template <typename T>
std::vector<T> OnKernel(const ColorDraw& draw, int height, int width, bool nchw,
                        const float* bias, const float* norm, const std::vector<T>& levels) {
  const int n = height * width;
  std::vector<T> picture(levels.size());
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) picture[nchw ? c * n + i : 3 * i + c] = levels[3 * i + c];
  RegionWarp w;
  w.out_height = height;
  w.out_width = width;
  w.nchw = nchw;
  w.u8_output = std::is_same<T, uint8_t>::value;
  for (int c = 0; c < 3; ++c) w.bias[c] = bias[c], w.norm[c] = norm[c];
  const ColorPlan plan = ColorPlanOf(draw, w);
  void* dst = picture.data();
  testing::LaunchOnHostSynced(ColorLaunchDims(), [&] { tfg_color_levels(plan, dst); });
  std::vector<T> out(levels.size());
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) out[3 * i + c] = picture[nchw ? c * n + i : 3 * i + c];
  return out;
}

struct Shape {
  int height, width;
};
const Shape kShapes[] = {{1, 1}, {7, 13}, {24, 32}, {37, 41}};

// Every kind at every position of a 3- or 4-step draw, several contrast steps,
// and random longer draws: the kernel's float output within 1/100 of a level
// of the CPU's (scaled by norm), its uint8 output within 1 level.
TEST(ColorKernel, MatchesTheCpuOutputStage) {
  std::mt19937 rng(2024);
  const std::vector<ColorStep::Op> all = {ColorStep::Op::kBrightness, ColorStep::Op::kContrast,
                                          ColorStep::Op::kSaturation, ColorStep::Op::kHue,
                                          ColorStep::Op::kGrayscale};
  std::vector<std::vector<ColorStep::Op>> orders;
  for (ColorStep::Op a : all)  // each kind before and after contrast
    for (ColorStep::Op b : all) orders.push_back({a, ColorStep::Op::kContrast, b});
  orders.push_back({ColorStep::Op::kContrast, ColorStep::Op::kHue, ColorStep::Op::kContrast,
                    ColorStep::Op::kSaturation, ColorStep::Op::kContrast});
  std::uniform_int_distribution<int> kind(0, 4), length(1, 12);
  for (int r = 0; r < 12; ++r) {
    std::vector<ColorStep::Op> random(length(rng));
    for (auto& op : random) op = all[kind(rng)];
    orders.push_back(random);
  }
  const float bias[3] = {123.7f, 116.3f, 103.5f}, norm[3] = {1 / 58.4f, 1 / 57.1f, 1 / 57.4f};
  int cases = 0;
  for (size_t o = 0; o < orders.size(); ++o) {
    const Shape shape = kShapes[o % 4];
    const int n = shape.height * shape.width;
    const ColorDraw draw = RandomDraw(rng, orders[o]);
    const std::vector<float> levels = RandomLevels(rng, n);
    SCOPED_TRACE(Describe(draw) + " on " + std::to_string(shape.height) + "x" +
                 std::to_string(shape.width));
    std::vector<float> want(levels.size());
    warp::ColorOutput(draw, n, 3, levels.data(), bias, norm, want.data());
    for (bool nchw : {false, true}) {
      const auto got = OnKernel(draw, shape.height, shape.width, nchw, bias, norm, levels);
      for (size_t k = 0; k < got.size(); ++k) {
        ASSERT_NEAR(got[k], want[k], 0.01f * norm[k % 3]) << "float, nchw " << nchw << ", value "
                                                          << k;
      }
    }
    std::vector<uint8_t> u8(levels.size()), want_u8(levels.size());
    for (size_t k = 0; k < levels.size(); ++k) {
      u8[k] = static_cast<uint8_t>(std::lround(levels[k]));
    }
    warp::ColorOutput(draw, n, 3, u8.data(), want_u8.data());
    const auto got_u8 = OnKernel(draw, shape.height, shape.width, false, bias, norm, u8);
    for (size_t k = 0; k < got_u8.size(); ++k) {
      ASSERT_LE(std::abs(int(got_u8[k]) - int(want_u8[k])), 1) << "uint8, value " << k;
    }
    ++cases;
  }
  EXPECT_EQ(cases, 5 * 5 + 1 + 12);
}

// Draws as DrawColor makes them from a ColorJitter + RandomGrayscale list (the
// bodies pass exactly these), on one picture: the same agreement.
TEST(ColorKernel, MatchesTheCpuOnDrawnColours) {
  std::vector<float> encoded = {1, 1, 0.6f, 1.4f, 0.5f, 1.5f, 0.3f, 1.7f, -0.4f, 0.4f,
                                2, 0.3f};
  warp::ColorSpec spec;
  ASSERT_TRUE(warp::ParseColorSpec(encoded, &spec).ok());
  std::mt19937 rng(7);
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  int grayscale = 0;
  for (uint64_t key = 0; key < 24; ++key) {
    const ColorDraw draw = warp::DrawColor(spec, key);
    ASSERT_GE(draw.count, 4);
    grayscale += draw.steps[draw.count - 1].op == ColorStep::Op::kGrayscale;
    const std::vector<float> levels = RandomLevels(rng, 24 * 32);
    std::vector<float> want(levels.size());
    warp::ColorOutput(draw, 24 * 32, 3, levels.data(), zero, one, want.data());
    const auto got = OnKernel(draw, 24, 32, false, zero, one, levels);
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_NEAR(got[k], want[k], 0.01f) << Describe(draw) << ", value " << k;
    }
  }
  EXPECT_GT(grayscale, 0);  // RandomGrayscale's p = 0.3 did apply to some
}

// A picture with no steps is written as the output stage alone (the bodies
// never launch it so, but the kernel must not depend on that).
TEST(ColorKernel, NoStepsIsBiasAndNorm) {
  const std::vector<float> levels = {0, 128, 255, 10, 20, 30};
  const float bias[3] = {1, 2, 3}, norm[3] = {0.5f, 0.25f, 2};
  const auto got = OnKernel(ColorDraw(), 1, 2, false, bias, norm, levels);
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_FLOAT_EQ(got[k], (levels[k] - bias[k % 3]) * norm[k % 3]);
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
