// The C++ random resized crop and flip (TransformMatrix with a kSimilarity
// spec) against the distribution tf_gulp.transforms.SimilarityTransform
// documents, computed here from that definition and not from our code:
//   - the area fraction s is log-uniform on [s0, s1];
//   - the aspect ratio r = w/h is log-uniform on [r0, r1], retried up to 10
//     times until the crop fits, else the whole input (clamped to the ratio
//     range), centred;
//   - a drawn crop is placed uniformly inside the input;
//   - the left-right flip happens with probability flip_h.
// Many keys, fixed (the keys 0..n-1); tolerances follow from the sample size
// (Kolmogorov-Smirnov at a one-in-a-million false alarm per check, binomial
// counts within 5 standard deviations), so a correct implementation passes
// for any keys while the mutants docs/testing.md lists fail by tens of
// critical values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "cc/warp/similarity_transform.h"

namespace tfg {
namespace warp {
namespace {

constexpr int kDraws = 20000;
constexpr double kOutSize = 100;

// What the matrix says about the crop: the matrix maps output pixels to input
// pixels, so the crop's width is the input span of the output's width, its
// centre is where the output's centre lands, and a negative x scale is a
// left-right mirror.
struct Crop {
  double w, h, cx, cy;  // size; centre relative to the input's centre
  bool flip_h;
};

Crop CropOf(const double m[9], double in_h, double in_w) {
  Crop c;
  c.flip_h = m[0] < 0;
  c.w = std::fabs(m[0]) * kOutSize;
  c.h = std::fabs(m[4]) * kOutSize;
  const double centre = (kOutSize - 1) / 2;
  c.cx = m[0] * centre + m[1] * centre + m[2] - (in_w - 1) / 2;
  c.cy = m[3] * centre + m[4] * centre + m[5] - (in_h - 1) / 2;
  return c;
}

std::vector<Crop> Draw(const std::vector<float>& params, double in_h, double in_w) {
  TransformSpec spec;
  EXPECT_TRUE(ParseTransformSpec(params, &spec).ok());
  std::vector<Crop> crops;
  for (uint64_t key = 0; key < kDraws; ++key) {
    double m[9];
    TransformMatrix(spec, key, static_cast<int64_t>(in_h), static_cast<int64_t>(in_w),
                    static_cast<int64_t>(kOutSize), static_cast<int64_t>(kOutSize), m);
    crops.push_back(CropOf(m, in_h, in_w));
  }
  return crops;
}

// The Kolmogorov-Smirnov distance between the sample and the CDF `cdf`.
double KsDistance(std::vector<double> sample, const std::function<double(double)>& cdf) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double d = 0;
  for (size_t i = 0; i < sample.size(); ++i) {
    const double f = cdf(sample[i]);
    d = std::max({d, f - i / n, (i + 1) / n - f});
  }
  return d;
}

// The KS critical distance for n draws at false-alarm probability alpha
// (asymptotic: sqrt(-ln(alpha / 2) / 2) / sqrt(n)).
double KsCritical(size_t n, double alpha = 1e-6) {
  return std::sqrt(-std::log(alpha / 2) / 2) / std::sqrt(static_cast<double>(n));
}

double Uniform01Cdf(double t) { return std::min(1.0, std::max(0.0, t)); }

#define EXPECT_UNIFORM(sample, what)                                              \
  do {                                                                           \
    const double d_ = KsDistance(sample, Uniform01Cdf), c_ = KsCritical((sample).size()); \
    EXPECT_LT(d_, c_) << what << ": KS distance " << d_ << " over " << (sample).size() \
                      << " draws, critical " << c_;                              \
  } while (0)

double Correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// A count of n Bernoulli(p) trials within 5 standard deviations of n p.
void ExpectBinomial(int64_t count, int64_t n, double p, const char* what) {
  const double sd = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(count), n * p, std::max(5 * sd, 1.0))
      << what << ": " << count << " of " << n << ", expected p = " << p;
}

// Parameters where every first ratio try fits (s r <= in_w / in_h and
// s / r <= in_h / in_w for every s, r in range), so the draws are exactly the
// documented independent uniforms: 400 x 600 input, s in [0.05, 0.4], r in
// [3/4, 4/3] (largest s / r = 0.533 < 2/3, largest s r = 0.533 < 3/2).
TEST(RandomCropDistributionTest, ScaleRatioCentreAndFlipFollowTheDefinition) {
  const double in_h = 400, in_w = 600, s0 = 0.05, s1 = 0.4, r0 = 0.75, r1 = 4.0 / 3;
  const std::vector<Crop> crops = Draw(
      {1, float(s0), float(s1), float(r0), float(r1), 0, 0, 0, 0, 0.3f, 0, 1, 0, 1}, in_h, in_w);
  std::vector<double> t_scale, t_ratio, t_cx, t_cy;
  int64_t flips = 0;
  for (const Crop& c : crops) {
    const double s = c.w * c.h / (in_w * in_h), r = c.w / c.h;
    // Each quantity mapped through its documented CDF: uniform on [0, 1).
    t_scale.push_back((std::log(s) - std::log(s0)) / (std::log(s1) - std::log(s0)));
    t_ratio.push_back((std::log(r) - std::log(r0)) / (std::log(r1) - std::log(r0)));
    t_cx.push_back(c.cx / (in_w - c.w) + 0.5);
    t_cy.push_back(c.cy / (in_h - c.h) + 0.5);
    flips += c.flip_h;
  }
  EXPECT_UNIFORM(t_scale, "log area fraction");
  EXPECT_UNIFORM(t_ratio, "log aspect ratio");
  EXPECT_UNIFORM(t_cx, "crop centre x");
  EXPECT_UNIFORM(t_cy, "crop centre y");
  ExpectBinomial(flips, kDraws, 0.3, "left-right flips");
  // Independent quantities: |correlation| < 5 / sqrt(n) for each pair.
  const std::vector<std::vector<double>*> all = {&t_scale, &t_ratio, &t_cx, &t_cy};
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      EXPECT_LT(std::fabs(Correlation(*all[i], *all[j])), 5 / std::sqrt(double(kDraws)))
          << "quantities " << i << " and " << j;
    }
  }
}

// The ImageNet crop (s in [0.08, 1], r in [3/4, 4/3], flip 0.5) on a square
// input, where large crops often do not fit. From the definition, with
// x = ln s uniform on [ln 0.08, 0] and a = ln(4/3): one try fits when
// |ln r| <= -x, so with probability p(x) = min(1, -x / a); all 10 fail with
// probability (1 - p)^10, and then the crop is the whole (square) input. A
// drawn crop's x has density proportional to 1 - (1 - p(x))^10, and its ln r
// is uniform on [max(-a, x), min(a, -x)].
TEST(RandomCropDistributionTest, TheImageNetCropsRetriesAndFallbackFollowTheDefinition) {
  const double side = 500, s0 = 0.08, a = std::log(4.0 / 3);
  const std::vector<Crop> crops =
      Draw({1, float(s0), 1, 0.75f, 4.f / 3, 0, 0, 0, 0, 0.5f, 0, 1, 0, 1}, side, side);
  const double lo = std::log(s0);
  auto fit = [&](double x) { return std::min(1.0, -x / a); };
  auto drawn_density = [&](double x) { return 1 - std::pow(1 - fit(x), 10); };
  // The integral of drawn_density from lo to x (trapezoids; smooth integrand).
  constexpr int kSteps = 20000;
  std::vector<double> cumulative(kSteps + 1, 0.0);
  for (int i = 1; i <= kSteps; ++i) {
    const double x0 = lo - lo * (i - 1) / kSteps, x1 = lo - lo * i / kSteps;
    cumulative[i] = cumulative[i - 1] + (x1 - x0) * (drawn_density(x0) + drawn_density(x1)) / 2;
  }
  const double p_drawn = cumulative[kSteps] / -lo;
  auto drawn_cdf = [&](double x) {
    const double f = std::min(1.0, std::max(0.0, (x - lo) / -lo)) * kSteps;
    const int i = std::min(kSteps - 1, static_cast<int>(f));
    return (cumulative[i] + (f - i) * (cumulative[i + 1] - cumulative[i])) / cumulative[kSteps];
  };

  int64_t fallbacks = 0, flips = 0;
  std::vector<double> x_drawn, t_ratio, t_cx;
  for (const Crop& c : crops) {
    flips += c.flip_h;
    if (std::fabs(c.w - side) < 1e-6 && std::fabs(c.h - side) < 1e-6) {
      ++fallbacks;
      EXPECT_NEAR(c.cx, 0, 1e-6);  // the fallback is centred
      EXPECT_NEAR(c.cy, 0, 1e-6);
      continue;
    }
    const double x = std::log(c.w * c.h / (side * side)), lr = std::log(c.w / c.h);
    x_drawn.push_back(x);
    const double r_lo = std::max(-a, x), r_hi = std::min(a, -x);
    t_ratio.push_back((lr - r_lo) / (r_hi - r_lo));
    t_cx.push_back(c.cx / (side - c.w) + 0.5);
  }
  ExpectBinomial(fallbacks, kDraws, 1 - p_drawn, "fallback crops");
  ExpectBinomial(flips, kDraws, 0.5, "left-right flips");
  const double d = KsDistance(x_drawn, drawn_cdf), crit = KsCritical(x_drawn.size());
  EXPECT_LT(d, crit) << "log area of drawn crops: KS " << d << ", critical " << crit;
  EXPECT_UNIFORM(t_ratio, "log aspect ratio given the area");
  EXPECT_UNIFORM(t_cx, "crop centre x");
}

}  // namespace
}  // namespace warp
}  // namespace tfg
