#include "cc/codec/jpeg_warp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <turbojpeg.h>

#include "cc/testing/gulp_testing.h"
#include "cc/warp/similarity_transform.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace jpeg {
namespace {

// A picture with detail at every scale (so cropping and scaling errors show):
// a smooth gradient plus a fine checker.
std::string DetailedJpeg(int width, int height, bool s444, bool progressive) {
  return testing::MakeJpeg(width, height, 3, 3, s444, progressive);
}

// A photo-like picture: smooth shapes of a few sizes, 4:2:0, quality 90.
std::string SmoothJpeg(int width, int height) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        const double v = 128 + 60 * std::sin(x * 0.05 + c) * std::cos(y * 0.07) +
                         40 * std::sin((x + 2 * y) * 0.21 + c * 2);
        pixels[(static_cast<size_t>(y) * width + x) * 3 + c] =
            static_cast<unsigned char>(std::lround(v));
      }
    }
  }
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  tjCompress2(handle, pixels.data(), width, 0, height, TJPF_RGB, &jpeg, &size, TJSAMP_420,
              90, 0);
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(handle);
  return out;
}

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Decode every pixel, then warp: the reference the fused path must match.
std::vector<float> FullThenWarp(const std::string& jpeg, const double m[9], int out_h,
                                int out_w, const float* bias, const float* norm,
                                const float* oob) {
  ImageInfo info;
  EXPECT_TRUE(ReadHeader(Bytes(jpeg), jpeg.size(), &info).ok());
  DecodeOptions options;
  std::vector<uint8_t> pixels(static_cast<size_t>(info.width) * info.height * 3);
  EXPECT_TRUE(Decode(Bytes(jpeg), jpeg.size(), options, info.width, info.height,
                     pixels.data()).ok());
  warp::WarpGeometry g{info.height, info.width, 3, out_h, out_w};
  float mf[9];
  for (int i = 0; i < 9; ++i) mf[i] = static_cast<float>(m[i]);
  std::vector<float> out(static_cast<size_t>(out_h) * out_w * 3);
  warp::WarpPicture(g, pixels.data(), mf, bias, norm, oob, out.data());
  return out;
}

// An out_h x out_w target; without bias and norm, a uint8 one.
WarpTarget Target(int out_h, int out_w, bool scaling, const float* oob,
                  const float* bias = nullptr, const float* norm = nullptr) {
  return WarpTarget{out_h, out_w, scaling, bias, norm, oob};  // in WarpTarget's order
}

std::vector<float> Fused(const std::string& jpeg, const double m[9], int out_h, int out_w,
                         bool scaling, const float* bias, const float* norm,
                         const float* oob, CropPlan* plan) {
  ImageInfo info;
  EXPECT_TRUE(ReadHeader(Bytes(jpeg), jpeg.size(), &info).ok());
  const WarpTarget target = Target(out_h, out_w, scaling, oob, bias, norm);
  std::vector<float> out(static_cast<size_t>(out_h) * out_w * 3);
  Status s = DecodeWarped(Bytes(jpeg), jpeg.size(), DecodeOptions(), info, m, target,
                          out.data(), plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

const float kZero[3] = {0, 0, 0}, kOne[3] = {1, 1, 1}, kOob[3] = {7, 8, 9};

// Crops of every kind: inside, at each edge, flipped, rotated, partly and
// wholly outside the picture, a translation with OOB pixels.
std::vector<std::vector<double>> Matrices(int in_h, int in_w, int out_h, int out_w) {
  std::vector<std::vector<double>> all;
  auto add = [&](double ch, double cw, double cy, double cx, double deg, bool fh, bool fv,
                 double ty = 0, double tx = 0) {
    std::vector<double> m(9);
    warp::AffineMatrix(in_h, in_w, out_h, out_w, ch, cw, cy, cx, deg, ty, tx, fh, fv,
                       true, false, m.data());
    all.push_back(m);
  };
  add(in_h, in_w, 0, 0, 0, false, false);                  // whole picture
  add(in_h * 0.4, in_w * 0.3, 0, 0, 0, false, false);      // centre
  add(in_h * 0.4, in_w * 0.3, -in_h * 0.3, -in_w * 0.35, 0, true, false);  // top left
  add(in_h * 0.5, in_w * 0.5, in_h * 0.25, in_w * 0.25, 0, false, true);   // bottom right
  add(in_h * 0.3, in_w * 0.6, in_h * 0.1, in_w * 0.05, 17, true, false);   // rotated
  add(in_h * 0.5, in_w * 0.5, 0, in_w * 0.6, 0, false, false);  // partly outside
  add(in_h * 0.2, in_w * 0.2, in_h * 2, in_w * 2, 0, false, false);  // wholly outside
  add(in_h * 0.6, in_w * 0.6, 0, 0, 0, false, false, out_h * 0.3, -out_w * 0.4);
  add(in_h * 0.1, in_w * 0.1, 3, -5, 0, false, false);  // tiny: magnified
  return all;
}

TEST(JpegWarpTest, WithoutScalingEqualsFullDecodeThenWarp) {
  for (bool s444 : {false, true}) {
    for (bool progressive : {false, true}) {
      const int in_w = 157, in_h = 93;  // not multiples of the iMCU size
      const std::string jpeg = DetailedJpeg(in_w, in_h, s444, progressive);
      for (auto [out_h, out_w] : {std::pair<int, int>{24, 32}, {50, 41}}) {
        for (const auto& m : Matrices(in_h, in_w, out_h, out_w)) {
          auto want = FullThenWarp(jpeg, m.data(), out_h, out_w, kZero, kOne, kOob);
          CropPlan plan;
          auto got = Fused(jpeg, m.data(), out_h, out_w, false, kZero, kOne, kOob, &plan);
          EXPECT_EQ(plan.scale_denominator, 1);
          double worst = 0;
          for (size_t i = 0; i < want.size(); ++i) {
            worst = std::max(worst, std::fabs(double(want[i]) - got[i]));
          }
          EXPECT_LE(worst, 2.0) << "s444 " << s444 << " progressive " << progressive
                                << " m[2] " << m[2] << " m[5] " << m[5];
        }
      }
    }
  }
}

TEST(JpegWarpTest, DecodesOnlyTheRegionTheWarpSamples) {
  const std::string jpeg = DetailedJpeg(320, 240, false, false);
  ImageInfo info{320, 240};
  double m[9];
  // A 64x48 crop at the top left resized to 64x48 (no scaling possible).
  warp::AffineMatrix(240, 320, 48, 64, 48, 64, -96, -128, 0, 0, 0, false, false, true, false,
                     m);
  WarpTarget target;
  target.out_height = 48;
  target.out_width = 64;
  CropPlan plan = PlanCrop(info, m, target);
  EXPECT_EQ(plan.scale_denominator, 1);
  EXPECT_EQ(plan.x0, 0);
  EXPECT_EQ(plan.y0, 0);
  EXPECT_LE(plan.x1, 68);
  EXPECT_LE(plan.y1, 52);
  // The whole 320x240 picture to 80x60 samples every 4th pixel: 1/4 scale.
  warp::AffineMatrix(240, 320, 60, 80, 240, 320, 0, 0, 0, 0, 0, false, false, true, false, m);
  target.out_height = 60;
  target.out_width = 80;
  plan = PlanCrop(info, m, target);
  EXPECT_EQ(plan.scale_denominator, 4);
  EXPECT_EQ(plan.scaled_width, 80);
  // ... and 3 pixels per output pixel is 1/2; scaling off is 1/1.
  warp::AffineMatrix(240, 320, 80, 106, 240, 320, 0, 0, 0, 0, 0, false, false, true, false, m);
  target.out_height = 80;
  target.out_width = 106;
  EXPECT_EQ(PlanCrop(info, m, target).scale_denominator, 2);
  target.dct_scaling = false;
  EXPECT_EQ(PlanCrop(info, m, target).scale_denominator, 1);
}

double Psnr(const std::vector<float>& a, const std::vector<float>& b) {
  double se = 0;
  for (size_t i = 0; i < a.size(); ++i) se += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  const double mse = se / a.size();
  return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

TEST(JpegWarpTest, WithScalingStaysCloseToFullDecode) {
  // A natural-looking picture (smooth gradients): the DCT-scaled warp
  // averages where the bilinear warp of the full picture point-samples, so
  // they differ by aliasing only; docs/gulp_dataset.md quotes the bound.
  const int in_w = 320, in_h = 240;
  const std::string jpeg = SmoothJpeg(in_w, in_h);
  for (int out : {28, 56, 112}) {
    double m[9];
    warp::AffineMatrix(in_h, in_w, out, out, 230, 230, 5, -20, 0, 0, 0, true, false, true,
                       false, m);
    CropPlan plan;
    auto got = Fused(jpeg, m, out, out, true, kZero, kOne, kOob, &plan);
    EXPECT_GT(plan.scale_denominator, 1) << out;
    auto want = FullThenWarp(jpeg, m, out, out, kZero, kOne, kOob);
    const double psnr = Psnr(want, got);
    // Measured 42.8 dB at 1/2, 30.4 at 1/4, 20.8 at 1/8 (the high-frequency
    // part aliases in the point-sampled full-size path, not the scaled one).
    const double bound = plan.scale_denominator == 2 ? 40 : plan.scale_denominator == 4 ? 28 : 18;
    EXPECT_GT(psnr, bound) << "output " << out << " scale 1/"
                                     << plan.scale_denominator;
  }
}

TEST(JpegWarpTest, Uint8OutputIsTheRoundedSample) {
  const std::string jpeg = DetailedJpeg(120, 80, true, false);
  ImageInfo info;
  ASSERT_TRUE(ReadHeader(Bytes(jpeg), jpeg.size(), &info).ok());
  double m[9];
  warp::AffineMatrix(80, 120, 30, 40, 60, 90, 4, -7, 0, 0, 0, true, false, true, false, m);
  auto want = FullThenWarp(jpeg, m, 30, 40, kZero, kOne, kOob);
  const WarpTarget target = Target(30, 40, false, kOob);
  std::vector<uint8_t> got(30 * 40 * 3);
  ASSERT_TRUE(DecodeWarped(Bytes(jpeg), jpeg.size(), DecodeOptions(), info, m, target,
                           got.data()).ok());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2.0) << i;
}

TEST(JpegWarpTest, DamagedJpegIsAnErrorNotAPicture) {
  std::string jpeg = DetailedJpeg(160, 120, false, false);
  jpeg.resize(jpeg.size() / 2);  // truncated in the middle of the scan
  ImageInfo info;
  ASSERT_TRUE(ReadHeader(Bytes(jpeg), jpeg.size(), &info).ok());
  double m[9];
  warp::AffineMatrix(120, 160, 60, 80, 120, 160, 0, 0, 0, 0, 0, false, false, true, false, m);
  const WarpTarget target = Target(60, 80, false, kOob);
  std::vector<uint8_t> out(60 * 80 * 3);
  Status s = DecodeWarped(Bytes(jpeg), jpeg.size(), DecodeOptions(), info, m, target,
                          out.data());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("corrupt JPEG"), std::string::npos) << s.message();
  // The decompressor is usable again afterwards.
  const std::string good = DetailedJpeg(160, 120, false, false);
  EXPECT_TRUE(DecodeWarped(Bytes(good), good.size(), DecodeOptions(), info, m, target,
                           out.data()).ok());
}

}  // namespace
}  // namespace jpeg
}  // namespace tfg
