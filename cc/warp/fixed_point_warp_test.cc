#include "cc/warp/fixed_point_warp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cc/warp/similarity_transform.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace warp {
namespace {

TEST(FixedPointWarpTest, WithinOneLevelOfWarpRows) {
  std::mt19937 rng(5);
  for (int channels : {1, 3}) {
    WarpGeometry g{37, 53, channels, 19, 23};
    std::vector<uint8_t> src(g.in_height * g.in_width * channels);
    for (auto& v : src) v = static_cast<uint8_t>(rng() & 0xff);
    const float bias[3] = {3, 5, 7}, norm[3] = {0.5f, 1, 2}, oob[3] = {9, 8, 7};
    int checked = 0;
    for (int k = 0; k < 40; ++k) {
      std::uniform_real_distribution<double> u(0, 1);
      double m[9];
      // Crops inside, across the edges and outside; flips; rotations (odd k:
      // the general loop) or none (even k: the separable one).
      const double degrees = k % 2 ? 40 * (u(rng) - 0.5) : 0.0;
      AffineMatrix(37, 53, 19, 23, 5 + 40 * u(rng), 5 + 60 * u(rng), 50 * (u(rng) - 0.5),
                   70 * (u(rng) - 0.5), degrees, 0, 0, u(rng) < 0.5,
                   u(rng) < 0.3, true, false, m);
      ASSERT_TRUE(CanWarpAffine(g, m));
      float mf[9];
      for (int i = 0; i < 9; ++i) mf[i] = static_cast<float>(m[i]);
      const size_t n = g.out_height * g.out_width * channels;
      std::vector<float> want(n), got(n);
      WarpPicture(g, src.data(), mf, bias, norm, oob, want.data());
      WarpAffine(g, src.data(), m, bias, norm, oob, got.data());
      std::vector<uint8_t> want8(n), got8(n);
      WarpRows(g, src.data(), mf, oob, 0, g.out_height, want8.data());
      WarpAffine(g, src.data(), m, oob, got8.data());
      for (size_t i = 0; i < n; ++i) {
        const int c = i % channels;
        // Pixels whose centre maps within float rounding of the picture's
        // edge may be inside for one and outside for the other.
        const bool want_oob = want[i] == oob[c], got_oob = got[i] == oob[c];
        if (want_oob != got_oob) continue;
        ASSERT_NEAR(got[i], want[i], 1.0 * norm[c] + 1e-4) << "matrix " << k << " value " << i;
        ASSERT_NEAR(got8[i], want8[i], 1) << "matrix " << k << " value " << i;
        ++checked;
      }
    }
    EXPECT_GT(checked, 1000);
  }
}

TEST(FixedPointWarpTest, LeavesProjectiveAndNchwToWarpRows) {
  WarpGeometry g{8, 8, 3, 4, 4};
  const double projective[9] = {1, 0, 0, 0, 1, 0, 0.01, 0, 1};
  EXPECT_FALSE(CanWarpAffine(g, projective));
  const double huge[9] = {1e9, 0, 0, 0, 1, 0, 0, 0, 1};
  EXPECT_FALSE(CanWarpAffine(g, huge));
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  EXPECT_TRUE(CanWarpAffine(g, identity));
  g.layout = Layout::kNCHW;
  EXPECT_FALSE(CanWarpAffine(g, identity));
}

}  // namespace
}  // namespace warp
}  // namespace tfg
