#include "cc/warp/similarity_warp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tfg {
namespace warp {
namespace {

const float kIdentity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
const float kZero3[3] = {0, 0, 0};
const float kOne3[3] = {1, 1, 1};

std::vector<uint8_t> Ramp(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(h * w * c);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  return v;
}

WarpGeometry Geo(int64_t ih, int64_t iw, int64_t c, int64_t oh, int64_t ow,
                 Layout layout = Layout::kNHWC) {
  return WarpGeometry{ih, iw, c, oh, ow, layout};
}

TEST(SimilarityWarpTest, IdentityCopiesThePicture) {
  auto g = Geo(5, 7, 3, 5, 7);
  auto src = Ramp(5, 7, 3);
  std::vector<float> dst(src.size());
  WarpPicture(g, src.data(), kIdentity, kZero3, kOne3, kZero3, dst.data());
  for (size_t i = 0; i < src.size(); ++i) ASSERT_EQ(dst[i], src[i]) << i;
}

TEST(SimilarityWarpTest, BiasAndNormPerChannel) {
  auto g = Geo(2, 2, 3, 2, 2);
  auto src = Ramp(2, 2, 3);
  const float bias[3] = {1, 2, 3}, norm[3] = {0.5f, 2.f, -1.f};
  std::vector<float> dst(src.size());
  WarpPicture(g, src.data(), kIdentity, bias, norm, kZero3, dst.data());
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_FLOAT_EQ(dst[i], (src[i] - bias[i % 3]) * norm[i % 3]);
  }
}

TEST(SimilarityWarpTest, HalfPixelShiftAveragesAndRounds) {
  auto g = Geo(1, 2, 1, 1, 1);
  const uint8_t src[2] = {10, 21};
  const float m[9] = {1, 0, 0.5f, 0, 1, 0, 0, 0, 1};
  float bias = 0, norm = 1, oob = -7, out = 0;
  WarpPicture(g, src, m, &bias, &norm, &oob, &out);
  EXPECT_EQ(out, 16.f);  // 15.5 rounds half up
}

TEST(SimilarityWarpTest, OutsideGetsOobColorWithoutBiasOrNorm) {
  auto g = Geo(4, 4, 3, 1, 3);
  auto src = Ramp(4, 4, 3);
  // x = 0 -> X = -0.5 (edge, inside), x = 1 -> -0.6 (outside), x = 2 -> 4.4 (outside).
  const float m[9] = {0, 0, -0.5f, 0, 0, 1, 0, 0, 1};
  const float m2[9] = {-0.1f, 0, -0.5f, 0, 0, 1, 0, 0, 1};
  const float m3[9] = {2.45f, 0, -0.5f, 0, 0, 1, 0, 0, 1};
  const float bias[3] = {5, 5, 5}, norm[3] = {2, 2, 2}, oob[3] = {-1, -2, -3};
  std::vector<float> dst(9);
  WarpPicture(g, src.data(), m, bias, norm, oob, dst.data());
  EXPECT_EQ(dst[0], (src[4 * 3] - 5) * 2.f);  // edge repeats pixel (1, 0)
  WarpPicture(g, src.data(), m2, bias, norm, oob, dst.data());
  EXPECT_EQ(dst[3], -1.f);
  EXPECT_EQ(dst[5], -3.f);
  WarpPicture(g, src.data(), m3, bias, norm, oob, dst.data());
  EXPECT_EQ(dst[6], -1.f);
  EXPECT_EQ(dst[8], -3.f);
}

TEST(SimilarityWarpTest, ProjectiveBehindTheCameraIsOutside) {
  auto g = Geo(3, 3, 1, 1, 2);
  auto src = Ramp(3, 3, 1);
  const float m[9] = {1, 0, 0, 0, 1, 0, -1, 0, 1};  // W = 1 - x: x=1 -> W=0
  float bias = 0, norm = 1, oob = 99, dst[2];
  WarpPicture(g, src.data(), m, &bias, &norm, &oob, dst);
  EXPECT_EQ(dst[0], src[0]);
  EXPECT_EQ(dst[1], 99.f);
}

TEST(SimilarityWarpTest, HorizontalFlip) {
  auto g = Geo(3, 4, 2, 3, 4);
  auto src = Ramp(3, 4, 2);
  const float m[9] = {-1, 0, 3, 0, 1, 0, 0, 0, 1};
  const float z[2] = {0, 0}, o[2] = {1, 1};
  std::vector<float> dst(src.size());
  WarpPicture(g, src.data(), m, z, o, z, dst.data());
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 2; ++c)
        ASSERT_EQ(dst[(y * 4 + x) * 2 + c], src[(y * 4 + 3 - x) * 2 + c]);
}

TEST(SimilarityWarpTest, NchwMatchesNhwc) {
  const int64_t H = 9, W = 11, C = 3, OH = 6, OW = 5;
  auto nhwc = Ramp(H, W, C);
  std::vector<uint8_t> nchw(nhwc.size());
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < C; ++c) nchw[(c * H + y) * W + x] = nhwc[(y * W + x) * C + c];
  const float m[9] = {1.3f, 0.2f, 0.7f, -0.25f, 1.1f, 1.9f, 0, 0, 1};
  const float bias[3] = {1, 2, 3}, norm[3] = {0.1f, 0.2f, 0.3f}, oob[3] = {7, 8, 9};
  std::vector<float> a(OH * OW * C), b(a.size());
  WarpPicture(Geo(H, W, C, OH, OW), nhwc.data(), m, bias, norm, oob, a.data());
  WarpPicture(Geo(H, W, C, OH, OW, Layout::kNCHW), nchw.data(), m, bias, norm, oob, b.data());
  for (int y = 0; y < OH; ++y)
    for (int x = 0; x < OW; ++x)
      for (int c = 0; c < C; ++c)
        ASSERT_EQ(a[(y * OW + x) * C + c], b[(c * OH + y) * OW + x]);
}

// NHWC RGB float output runs the channels in SSE2; NCHW runs the scalar loop.
// Random pictures (saturated values included), affine and projective matrices
// that reach outside the picture, odd sizes: exactly the same floats.
TEST(SimilarityWarpTest, RgbVectorPathEqualsScalarPath) {
  const int64_t H = 37, W = 53, C = 3, OH = 29, OW = 31;
  uint32_t state = 7;
  std::vector<uint8_t> nhwc(H * W * C), nchw(nhwc.size());
  for (auto& v : nhwc) {
    state = state * 1664525u + 1013904223u;
    const uint8_t r = static_cast<uint8_t>(state >> 24);
    v = r < 16 ? 255 : (r < 32 ? 0 : r);
  }
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < C; ++c) nchw[(c * H + y) * W + x] = nhwc[(y * W + x) * C + c];
  const float matrices[3][9] = {{1.37f, 0.21f, -3.3f, -0.25f, 1.13f, 1.9f, 0, 0, 1},
                                {-1.9f, 0.05f, 60.2f, 0.11f, 1.7f, -4.1f, 0, 0, 1},
                                {1.1f, 0.1f, 0.5f, 0.05f, 0.9f, 0.25f, 0.002f, -0.001f, 1}};
  const float bias[3] = {123.675f, 116.28f, 103.53f};
  const float norm[3] = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f}, oob[3] = {7, 8, 9};
  for (const auto& m : matrices) {
    std::vector<float> a(OH * OW * C), b(a.size());
    WarpPicture(Geo(H, W, C, OH, OW), nhwc.data(), m, bias, norm, oob, a.data());
    WarpPicture(Geo(H, W, C, OH, OW, Layout::kNCHW), nchw.data(), m, bias, norm, oob, b.data());
    int mismatches = 0;
    for (int y = 0; y < OH; ++y)
      for (int x = 0; x < OW; ++x)
        for (int c = 0; c < C; ++c)
          mismatches += a[(y * OW + x) * C + c] != b[(c * OH + y) * OW + x];
    EXPECT_EQ(mismatches, 0) << m[0];
  }
}

TEST(SimilarityWarpTest, RowRangesComposeToTheWholePicture) {
  auto g = Geo(20, 30, 3, 13, 17);
  auto src = Ramp(20, 30, 3);
  const float m[9] = {1.7f, -0.3f, 2.f, 0.3f, 1.7f, -1.f, 0, 0, 1};
  std::vector<float> whole(13 * 17 * 3), parts(whole.size());
  WarpPicture(g, src.data(), m, kZero3, kOne3, kZero3, whole.data());
  WarpRows(g, src.data(), m, kZero3, kOne3, kZero3, 0, 5, parts.data());
  WarpRows(g, src.data(), m, kZero3, kOne3, kZero3, 5, 13, parts.data());
  EXPECT_EQ(whole, parts);
}

TEST(SimilarityWarpTest, Validation) {
  EXPECT_TRUE(ValidateGeometry(Geo(2, 2, 3, 4, 4), 3, 3, 3).ok());
  EXPECT_EQ(ValidateGeometry(Geo(0, 2, 3, 4, 4), 3, 3, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateGeometry(Geo(2, 2, 3, 0, 4), 3, 3, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateGeometry(Geo(2, 2, 3, 4, 4), 1, 3, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateGeometry(Geo(2, 2, 3, 1 << 21, 4), 3, 3, 3).code(),
            StatusCode::kInvalidArgument);
  float m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  EXPECT_TRUE(ValidateMatrix(m, 0).ok());
  m[4] = std::nanf("");
  Status s = ValidateMatrix(m, 3);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("matrix 3"), std::string::npos);
  Layout layout;
  EXPECT_TRUE(ParseLayout("NCHW", &layout).ok());
  EXPECT_EQ(layout, Layout::kNCHW);
  EXPECT_FALSE(ParseLayout("HWC", &layout).ok());
}

}  // namespace
}  // namespace warp
}  // namespace tfg
