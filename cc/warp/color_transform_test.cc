#include "cc/warp/color_transform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace tfg {
namespace warp {
namespace {

ColorSpec Parse(const std::vector<float>& values) {
  ColorSpec spec;
  const Status status = ParseColorSpec(values, &spec);
  EXPECT_TRUE(status.ok()) << status.message();
  return spec;
}

TEST(ColorTransformTest, ParseRefusesBadValues) {
  ColorSpec spec;
  EXPECT_FALSE(ParseColorSpec({3, 1}, &spec).ok());                          // kind
  EXPECT_FALSE(ParseColorSpec({1, 1, 0.5f, 1.5f}, &spec).ok());              // short
  EXPECT_FALSE(ParseColorSpec({2, 1.5f}, &spec).ok());                       // p
  EXPECT_FALSE(ParseColorSpec({1, 1, 1.5f, 0.5f, 1, 1, 1, 1, 0, 0}, &spec).ok());  // lo > hi
  EXPECT_FALSE(ParseColorSpec({1, 1, 1, 1, 1, 1, 1, 1, -0.6f, 0}, &spec).ok());    // hue
  EXPECT_FALSE(ParseColorSpec({1, 1, NAN, 1, 1, 1, 1, 1, 0, 0}, &spec).ok());
  EXPECT_TRUE(ParseColorSpec({}, &spec).ok());
  EXPECT_TRUE(spec.empty());
}

TEST(ColorTransformTest, DrawsAreAFunctionOfTheKeyInTheirRanges) {
  const ColorSpec spec = Parse({1, 1, 0.6f, 1.4f, 0.7f, 1.3f, 0.5f, 1.5f, -0.1f, 0.1f});
  std::set<std::vector<int>> orders;
  for (uint64_t key = 0; key < 200; ++key) {
    const ColorDraw a = DrawColor(spec, key), b = DrawColor(spec, key);
    ASSERT_EQ(a.count, 4);
    std::vector<int> order;
    for (int i = 0; i < a.count; ++i) {
      EXPECT_EQ(a.steps[i].op, b.steps[i].op);
      EXPECT_EQ(a.steps[i].factor, b.steps[i].factor);
      order.push_back(static_cast<int>(a.steps[i].op));
      const float f = a.steps[i].factor;
      switch (a.steps[i].op) {
        case ColorStep::Op::kBrightness: EXPECT_TRUE(f >= 0.6f && f <= 1.4f); break;
        case ColorStep::Op::kContrast: EXPECT_TRUE(f >= 0.7f && f <= 1.3f); break;
        case ColorStep::Op::kSaturation: EXPECT_TRUE(f >= 0.5f && f <= 1.5f); break;
        case ColorStep::Op::kHue: EXPECT_TRUE(f >= -0.1f && f <= 0.1f); break;
        default: ADD_FAILURE();
      }
    }
    orders.insert(order);
  }
  EXPECT_EQ(orders.size(), 24u);  // every order of the four steps occurs
}

// ColorJitter's order of its four steps is a uniform permutation, as
// torchvision's randperm(4): the 24 orders over 24,000 keys, chi-square with 23
// degrees of freedom below 90 (P < 1e-9 for a uniform draw; a shuffle whose
// swaps each pick from all four places gives orders 1/64 to 5/64, thousands).
TEST(ColorTransformTest, TheOrdersOfTheFourStepsAreEquallyLikely) {
  const ColorSpec spec = Parse({1, 1, 0.6f, 1.4f, 0.7f, 1.3f, 0.5f, 1.5f, -0.1f, 0.1f});
  constexpr int kKeys = 24000;
  std::map<std::vector<int>, int> counts;
  for (uint64_t key = 0; key < kKeys; ++key) {
    const ColorDraw draw = DrawColor(spec, key);
    ASSERT_EQ(draw.count, 4);
    std::vector<int> order;
    for (int i = 0; i < draw.count; ++i) order.push_back(static_cast<int>(draw.steps[i].op));
    ++counts[order];
  }
  ASSERT_EQ(counts.size(), 24u);
  const double expected = kKeys / 24.0;
  double chi2 = 0;
  for (const auto& [order, count] : counts) chi2 += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi2, 90.0);
}

TEST(ColorTransformTest, ProbabilityAndLeftOffOptions) {
  // Only brightness set: one step; p = 0.5 applies it about half the time.
  const ColorSpec spec = Parse({1, 0.5f, 0.5f, 1.5f, 1, 1, 1, 1, 0, 0, 2, 0.25f});
  int jitter = 0, gray = 0;
  for (uint64_t key = 0; key < 2000; ++key) {
    const ColorDraw d = DrawColor(spec, key);
    for (int i = 0; i < d.count; ++i) {
      if (d.steps[i].op == ColorStep::Op::kBrightness) ++jitter;
      else if (d.steps[i].op == ColorStep::Op::kGrayscale) ++gray;
      else ADD_FAILURE();
    }
  }
  EXPECT_NEAR(jitter / 2000.0, 0.5, 0.05);
  EXPECT_NEAR(gray / 2000.0, 0.25, 0.05);
}

TEST(ColorTransformTest, PixelMath) {
  // Two pixels: (200, 100, 50) and (0, 0, 0); gray mean = (0.2989*200 + 0.587*100 + 0.114*50)/2.
  const float gray0 = 0.2989f * 200 + 0.587f * 100 + 0.114f * 50;
  auto apply = [](ColorStep::Op op, float f) {
    ColorDraw d;
    d.steps[d.count++] = {op, f};
    std::vector<float> v = {200, 100, 50, 0, 0, 0};
    ApplyColor(d, 2, 3, v.data());
    return v;
  };
  std::vector<float> v = apply(ColorStep::Op::kBrightness, 1.5f);
  EXPECT_FLOAT_EQ(v[0], 255);  // clamped
  EXPECT_FLOAT_EQ(v[1], 150);
  v = apply(ColorStep::Op::kContrast, 0.5f);
  EXPECT_NEAR(v[0], 0.5f * 200 + 0.5f * gray0 / 2, 1e-3);
  EXPECT_NEAR(v[3], 0.5f * gray0 / 2, 1e-3);
  v = apply(ColorStep::Op::kSaturation, 0.f);
  EXPECT_NEAR(v[0], gray0, 1e-3);
  EXPECT_NEAR(v[2], gray0, 1e-3);
  v = apply(ColorStep::Op::kGrayscale, 1.f);
  EXPECT_NEAR(v[1], gray0, 1e-3);
  // Hue +1/3 turns red-dominant into green-dominant: (200, 100, 50) -> (50, 200, 100).
  v = apply(ColorStep::Op::kHue, 1.f / 3);
  EXPECT_NEAR(v[0], 50, 1e-3);
  EXPECT_NEAR(v[1], 200, 1e-3);
  EXPECT_NEAR(v[2], 100, 1e-3);
  EXPECT_FLOAT_EQ(v[3], 0);
}

// torchvision's _rgb2hsv / _hsv2rgb as written there (sectors, floor), for
// the vectorized hue step to be compared with, on odd pixel counts (the tail).
void ReferenceHue(float f, float* px) {
  const float r = px[0], g = px[1], b = px[2];
  const float maxc = std::max(r, std::max(g, b)), minc = std::min(r, std::min(g, b));
  const float cr = maxc - minc;
  const bool eq = cr == 0;
  const float s = cr / (eq ? 1.f : maxc);
  const float d = eq ? 1.f : cr;
  const float rc = (maxc - r) / d, gc = (maxc - g) / d, bc = (maxc - b) / d;
  float h = maxc == r ? bc - gc : maxc == g ? 2 + rc - bc : 4 + gc - rc;
  h = std::fmod(h / 6 + 1, 1.f);
  h = h + f - std::floor(h + f);
  const float i = std::floor(h * 6), fr = h * 6 - i;
  const float p = maxc * (1 - s), q = maxc * (1 - s * fr), t = maxc * (1 - s * (1 - fr));
  const float v = maxc;
  const float table[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
  const int k = static_cast<int>(i) % 6;
  for (int c = 0; c < 3; ++c) px[c] = table[k][c];
}

TEST(ColorTransformTest, HueMatchesTheSectorFormulas) {
  for (int n : {1, 5, 257}) {
    for (float f : {-0.5f, -0.13f, 0.f, 0.2f, 0.5f}) {
      std::vector<float> v(3 * n), want;
      for (int i = 0; i < 3 * n; ++i) v[i] = static_cast<float>((i * 97 + n * 13) % 256);
      for (int i = 0; i < 3; ++i) v[i] = 77;  // a gray pixel
      want = v;
      for (int i = 0; i < n; ++i) ReferenceHue(f, want.data() + 3 * i);
      ColorDraw d;
      d.steps[d.count++] = {ColorStep::Op::kHue, f};
      ApplyColor(d, n, 3, v.data());
      for (int i = 0; i < 3 * n; ++i) ASSERT_NEAR(v[i], want[i], 0.01f) << n << " " << f << " " << i;
    }
  }
}

TEST(ColorTransformTest, ContrastUsesTheMeanOfThePictureBeforeIt) {
  // Brightness 0.5 then contrast 0: every value is the mean gray of the darkened picture.
  ColorDraw d;
  d.steps[d.count++] = {ColorStep::Op::kBrightness, 0.5f};
  d.steps[d.count++] = {ColorStep::Op::kContrast, 0.f};
  std::vector<float> v = {200, 100, 50, 0, 0, 0};
  ApplyColor(d, 2, 3, v.data());
  const float mean = 0.5f * (0.2989f * 200 + 0.587f * 100 + 0.114f * 50) / 2;
  for (float x : v) EXPECT_NEAR(x, mean, 1e-3);
}

TEST(ColorTransformTest, OneChannelKeepsOnlyBrightnessAndContrast) {
  ColorDraw d;
  d.steps[d.count++] = {ColorStep::Op::kHue, 0.3f};
  d.steps[d.count++] = {ColorStep::Op::kSaturation, 0.f};
  d.steps[d.count++] = {ColorStep::Op::kBrightness, 2.f};
  std::vector<float> v = {10, 200};
  ApplyColor(d, 2, 1, v.data());
  EXPECT_FLOAT_EQ(v[0], 20);
  EXPECT_FLOAT_EQ(v[1], 255);
}

TEST(ColorTransformTest, OneChannelContrastUsesTheMeanBeforeIt) {
  ColorDraw d;
  d.steps[d.count++] = {ColorStep::Op::kBrightness, 0.5f};
  d.steps[d.count++] = {ColorStep::Op::kHue, 0.3f};  // nothing on one channel
  d.steps[d.count++] = {ColorStep::Op::kContrast, 0.5f};
  std::vector<uint8_t> v = {10, 200, 90};
  ColorOutput(d, 3, 1, v.data(), v.data());
  const float mean = (5 + 100 + 45) / 3.f;  // 50
  EXPECT_EQ(v[0], 28);   // 0.5 * 5 + 25 = 27.5, rounded up
  EXPECT_EQ(v[1], 75);   // 0.5 * 100 + 0.5 * 50
  EXPECT_EQ(v[2], static_cast<int>(0.5f * 45 + 0.5f * mean + 0.5f));
}

TEST(ColorTransformTest, OutputStageRoundsOrNormalizes) {
  ColorDraw d;
  d.steps[d.count++] = {ColorStep::Op::kBrightness, 0.5f};
  std::vector<uint8_t> u8 = {101, 51, 3};
  ColorOutput(d, 1, 3, u8.data(), u8.data());
  EXPECT_EQ(u8[0], 51);  // 50.5 rounds up
  EXPECT_EQ(u8[1], 26);
  EXPECT_EQ(u8[2], 2);
  std::vector<float> levels = {100, 50, 4};
  const float bias[3] = {10, 0, 0}, norm[3] = {2, 1, 1};
  ColorOutput(d, 1, 3, levels.data(), bias, norm, levels.data());
  EXPECT_FLOAT_EQ(levels[0], 80);
  EXPECT_FLOAT_EQ(levels[1], 25);
}

// The steps of `draw` on interleaved RGB levels, one pixel and one step at a
// time, as color_transform.h defines them (torchvision's formulas; hue by
// ReferenceHue's sectors), in double where torchvision sums.
std::vector<float> ReferenceColor(const ColorDraw& draw, std::vector<float> v) {
  const size_t n = v.size() / 3;
  auto clamp = [](float x) { return std::min(255.f, std::max(0.f, x)); };
  auto gray = [&](size_t i) { return 0.2989f * v[3 * i] + 0.587f * v[3 * i + 1] + 0.114f * v[3 * i + 2]; };
  for (int k = 0; k < draw.count; ++k) {
    const float f = draw.steps[k].factor;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += gray(i);
    const float mean = n > 0 ? static_cast<float>(sum / n) : 0.f;
    for (size_t i = 0; i < n; ++i) {
      float* px = v.data() + 3 * i;
      const float g = gray(i);
      switch (draw.steps[k].op) {
        case ColorStep::Op::kBrightness: for (int c = 0; c < 3; ++c) px[c] = clamp(f * px[c]); break;
        case ColorStep::Op::kContrast: for (int c = 0; c < 3; ++c) px[c] = clamp(f * px[c] + (1 - f) * mean); break;
        case ColorStep::Op::kSaturation: for (int c = 0; c < 3; ++c) px[c] = clamp(f * px[c] + (1 - f) * g); break;
        case ColorStep::Op::kHue: ReferenceHue(f, px); break;
        case ColorStep::Op::kGrayscale: for (int c = 0; c < 3; ++c) px[c] = g; break;
      }
    }
  }
  return v;
}

// Whole pictures of every size from 1 to 40 pixels and a few large ones (full
// vectors, blocks of them and every tail length), random draws of two jitters
// and a grayscale (contrast anywhere, twice, or first), through the uint8 and
// the float output stage, on both builds of the steps (AVX2 where the CPU has
// it, and the portable one): equal to ReferenceColor within rounding.
TEST(ColorTransformTest, PicturesMatchTheReferenceOnEveryPath) {
  const ColorSpec spec = Parse({1, 1, 0.5f, 1.5f, 0.5f, 1.5f, 0.3f, 1.7f, -0.3f, 0.3f,
                                1, 0.7f, 0.6f, 1.4f, 0.2f, 1.8f, 0.6f, 1.4f, -0.1f, 0.1f, 2, 0.3f});
  std::vector<int> sizes;
  for (int n = 1; n <= 40; ++n) sizes.push_back(n);
  for (int n : {63, 64, 65, 127, 129, 1000, 112 * 112}) sizes.push_back(n);
  const float bias[3] = {10, 120, 3}, norm[3] = {0.5f, 2.f, 1 / 58.f};
  for (bool portable : {false, true}) {
    internal::color_portable_only = portable;
    for (uint64_t key = 0; key < 24; ++key) {
      const ColorDraw draw = DrawColor(spec, key);
      for (int n : sizes) {
        std::vector<uint8_t> u8(3 * n);
        for (int i = 0; i < 3 * n; ++i) u8[i] = static_cast<uint8_t>((i * 7919 + key * 31 + n) % 251);
        for (int i = 0; i < n; i += 7) u8[3 * i + 1] = u8[3 * i + 2] = u8[3 * i];  // gray pixels
        const std::vector<float> levels(u8.begin(), u8.end());
        const std::vector<float> want = ReferenceColor(draw, levels);
        std::vector<uint8_t> out8(3 * n + 8, 77);  // past the end: untouched
        ColorOutput(draw, n, 3, u8.data(), out8.data());
        std::vector<float> outf(3 * n + 8, 77.f);
        ColorOutput(draw, n, 3, levels.data(), bias, norm, outf.data());
        for (int i = 0; i < 3 * n; ++i) {
          ASSERT_NEAR(out8[i], want[i], 0.51f) << portable << " " << key << " " << n << " " << i;
          ASSERT_NEAR(outf[i] / norm[i % 3] + bias[i % 3], want[i], 0.01f)
              << portable << " " << key << " " << n << " " << i;
        }
        for (int i = 3 * n; i < 3 * n + 8; ++i) {
          ASSERT_EQ(out8[i], 77);
          ASSERT_EQ(outf[i], 77.f);
        }
        std::vector<uint8_t> in_place = u8;  // levels may be dst
        ColorOutput(draw, n, 3, in_place.data(), in_place.data());
        ASSERT_EQ(std::vector<uint8_t>(out8.begin(), out8.begin() + 3 * n), in_place);
      }
    }
  }
  internal::color_portable_only = false;
}

// Other CPUs than x86-64 have only the portable build: nothing to compare.
#if defined(__x86_64__)
// A random draw of 1 to 6 steps, each factor from anywhere in its option's
// range (brightness, contrast, saturation [0, 2]; hue [-0.5, 0.5]) or one of
// the values that put levels on exact halves and bounds (0.5 of an odd level,
// 0, 1, 2, +-0.5 turns): every step, order and range the draws can make.
ColorDraw RandomDraw(std::mt19937* rng) {
  std::uniform_int_distribution<int> steps(1, 6), op(0, 4), pick(0, 3);
  std::uniform_real_distribution<float> factor(0.f, 2.f), hue(-0.5f, 0.5f);
  const float nice[4] = {0.5f, 0.f, 1.f, 2.f}, nice_hue[4] = {0.5f, -0.5f, 0.25f, 0.f};
  ColorDraw draw;
  for (int n = steps(*rng); draw.count < n;) {
    const auto o = static_cast<ColorStep::Op>(op(*rng));
    const bool exact = pick(*rng) == 0;
    float f = 1.f;
    if (o == ColorStep::Op::kHue) {
      f = exact ? nice_hue[pick(*rng)] : hue(*rng);
    } else if (o != ColorStep::Op::kGrayscale) {
      f = exact ? nice[pick(*rng)] : factor(*rng);
    }
    draw.steps[draw.count++] = {o, f};
  }
  return draw;
}

std::string DrawText(const ColorDraw& draw) {
  std::string text;
  for (int i = 0; i < draw.count; ++i) {
    text += " " + std::to_string(static_cast<int>(draw.steps[i].op)) + ":" +
            std::to_string(draw.steps[i].factor);
  }
  return text;
}

// The AVX2 build of the steps (8 pixels a vector, byte shuffles, its own
// rounding to uint8) and the portable one (4 pixels) are the same arithmetic:
// their outputs are equal bit for bit, uint8 and float, on random pictures
// (random levels, gray pixels, 0 and 255) of every tail length and a few
// large ones (more than 256 runs of 8 pixels: the contrast mean's flush),
// under random draws.
TEST(ColorTransformTest, Avx2AndPortablePathsAreEqualBitForBit) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "this CPU has no AVX2: only the portable path runs";
  }
  std::mt19937 rng(45);
  std::uniform_int_distribution<int> level(0, 255), kind(0, 7), small(1, 70);
  const int large[] = {255, 256, 1000, 4099, 112 * 112};
  const float bias[3] = {10, 120, 3}, norm[3] = {0.5f, 2.f, 1 / 58.f};
  for (int trial = 0; trial < 600; ++trial) {
    const ColorDraw draw = RandomDraw(&rng);
    const int n = trial % 8 == 7 ? large[(trial / 8) % 5] : small(rng);
    std::vector<uint8_t> u8(3 * n);
    for (int i = 0; i < n; ++i) {
      const int k = kind(rng);
      for (int c = 0; c < 3; ++c) {
        u8[3 * i + c] = static_cast<uint8_t>(k == 0 ? 0 : k == 1 ? 255 : level(rng));
      }
      if (k == 2) u8[3 * i + 1] = u8[3 * i + 2] = u8[3 * i];  // gray
    }
    const std::vector<float> levels(u8.begin(), u8.end());
    std::vector<uint8_t> out8[2];
    std::vector<float> outf[2];
    for (int portable : {0, 1}) {
      internal::color_portable_only = portable;
      out8[portable].assign(3 * n, 0);
      outf[portable].assign(3 * n, 0.f);
      ColorOutput(draw, n, 3, u8.data(), out8[portable].data());
      ColorOutput(draw, n, 3, levels.data(), bias, norm, outf[portable].data());
    }
    internal::color_portable_only = false;
    for (int i = 0; i < 3 * n; ++i) {
      ASSERT_EQ(out8[0][i], out8[1][i]) << "trial " << trial << " n " << n << " value " << i;
      ASSERT_EQ(std::memcmp(&outf[0][i], &outf[1][i], sizeof(float)), 0)
          << "trial " << trial << " n " << n << " value " << i << ": " << outf[0][i] << " "
          << outf[1][i] << DrawText(draw);
    }
  }
}
#endif  // defined(__x86_64__)

}  // namespace
}  // namespace warp
}  // namespace tfg
