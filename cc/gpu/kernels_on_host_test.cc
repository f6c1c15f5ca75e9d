// The warp kernels' own source (similarity_warp_kernels.cu), compiled as C++
// and run on the host for every block and thread of the launch geometry the
// launcher uses (launch_geometry.h), compared with the CPU path on edge
// shapes. Unlike the harness's host check of the per-pixel function, this
// runs the kernels' indexing: which thread writes which output element, the
// bounds check, the batch offset, NCHW/NHWC strides. The output buffers start
// as NaN with guard zones around them, so an element never written or one
// written outside the output fails the test.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels' source on the host

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/nvdec_picture.h"
#include "cc/gpu/nvdec_ycbcr.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace {

constexpr size_t kGuard = 64;  // floats before and after the output
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// An NV12 surface in host memory (luma rows `pitch` apart, Cb Cr interleaved
// after `surface_height` rows), as the launchers pass a mapped NVDEC picture
// to the kernels (YcbcrOf), with the given colour matrix and range.
codec::YcbcrPicture HostNv12(const uint8_t* luma, int width, int height, int pitch,
                             int surface_height, codec::YcbcrStandard standard, bool full_range) {
  NvdecPicture n;
  n.width = width;
  n.height = height;
  n.pitch = static_cast<unsigned int>(pitch);
  n.surface_height = surface_height;
  n.luma = reinterpret_cast<uintptr_t>(luma);
  n.chroma = n.luma + static_cast<size_t>(pitch) * surface_height;
  codec::YcbcrPicture p = YcbcrOf(n);
  p.matrix = codec::MakeYcbcrMatrix(standard, full_range);
  return p;
}

// Output matrices: identity, scales, rotations, flips, translations that leave
// the picture entirely, and a perspective term.
std::vector<float> Matrices(int batch, int in_h, int in_w, int out_h, int out_w, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> m(9 * batch);
  for (int b = 0; b < batch; ++b) {
    float* k = &m[9 * b];
    const float sx = static_cast<float>(in_w) / out_w, sy = static_cast<float>(in_h) / out_h;
    const float angle = 0.5f * u(rng);
    const float c = std::cos(angle), s = std::sin(angle);
    switch (b % 5) {
      case 0:  // plain resize
        k[0] = sx; k[1] = 0; k[2] = 0; k[3] = 0; k[4] = sy; k[5] = 0; k[6] = 0; k[7] = 0; k[8] = 1;
        break;
      case 1:  // rotation + flip + shift
        k[0] = -sx * c; k[1] = sx * s; k[2] = in_w * 0.8f; k[3] = sy * s; k[4] = sy * c;
        k[5] = in_h * 0.1f * u(rng); k[6] = 0; k[7] = 0; k[8] = 1;
        break;
      case 2:  // maps entirely outside the picture
        k[0] = sx; k[1] = 0; k[2] = in_w + 3.f; k[3] = 0; k[4] = sy; k[5] = -in_h - 2.f;
        k[6] = 0; k[7] = 0; k[8] = 1;
        break;
      case 3:  // zoom into a corner, partly outside
        k[0] = 0.37f * sx; k[1] = 0; k[2] = -0.3f * in_w; k[3] = 0; k[4] = 0.41f * sy;
        k[5] = 0.7f * in_h; k[6] = 0; k[7] = 0; k[8] = 1;
        break;
      default:  // perspective
        k[0] = sx; k[1] = 0.1f; k[2] = 0.5f; k[3] = -0.1f; k[4] = sy; k[5] = 0.25f;
        k[6] = 0.002f * u(rng); k[7] = 0.003f; k[8] = 1;
    }
  }
  return m;
}

struct Output {
  std::vector<float> buffer;  // guard + data + guard
  explicit Output(size_t n) : buffer(n + 2 * kGuard, kNaN) {}
  float* data() { return buffer.data() + kGuard; }
  size_t size() const { return buffer.size() - 2 * kGuard; }
};

// Every element written, nothing outside, within `tolerance` levels of `want`.
void ExpectMatches(const Output& got, const std::vector<float>& want, float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < kGuard; ++i) {
    ASSERT_TRUE(std::isnan(got.buffer[i])) << "written before the output at " << i;
    ASSERT_TRUE(std::isnan(got.buffer[kGuard + want.size() + i])) << "written after the output";
  }
  int unwritten = 0, off = 0;
  float worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = got.buffer[kGuard + i];
    if (std::isnan(g)) {
      ++unwritten;
      continue;
    }
    const float d = std::fabs(g - want[i]);
    worst = std::max(worst, d);
    off += d > tolerance;
  }
  EXPECT_EQ(unwritten, 0) << "output elements no thread wrote";
  EXPECT_EQ(off, 0) << "elements off by more than " << tolerance << " (worst " << worst << ")";
}

struct Shape {
  int in_h, in_w, channels, out_h, out_w, batch;
  bool nchw;
};

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.batch << "x" << s.in_h << "x" << s.in_w << "x" << s.channels << " -> " << s.out_h
            << "x" << s.out_w << (s.nchw ? " NCHW" : " NHWC");
}

class U8KernelOnHost : public ::testing::TestWithParam<Shape> {};

TEST_P(U8KernelOnHost, MatchesTheCpuWarpOverTheRealLaunchGeometry) {
  const Shape s = GetParam();
  std::mt19937 rng(s.in_h * 131 + s.in_w);
  const long long picture = static_cast<long long>(s.in_h) * s.in_w * s.channels;
  const long long stride = picture + 7;  // pictures apart by more than their size
  std::vector<uint8_t> src(stride * s.batch);
  for (auto& v : src) v = static_cast<uint8_t>(rng() & 0xFF);
  const std::vector<float> m = Matrices(s.batch, s.in_h, s.in_w, s.out_h, s.out_w, 7);
  const std::vector<float> bias(s.channels, 0.f), norm(s.channels, 1.f);  // levels out
  std::vector<float> oob(s.channels);
  for (int c = 0; c < s.channels; ++c) oob[c] = 10.f + 40.f * c;

  const size_t out_picture = static_cast<size_t>(s.out_h) * s.out_w * s.channels;
  Output got(out_picture * s.batch);
  const LaunchDims d = WarpLaunchDims(s.out_h, s.out_w, s.batch);
  testing::LaunchOnHost(d, [&] {
    tfg_similarity_warp_u8(src.data(), stride, s.in_h, s.in_w, s.channels, m.data(), bias.data(),
                           norm.data(), oob.data(), s.out_h, s.out_w, s.nchw ? 1 : 0, got.data());
  });

  std::vector<float> want(out_picture * s.batch);
  warp::WarpGeometry g{s.in_h, s.in_w, s.channels,
                       s.out_h, s.out_w, s.nchw ? warp::Layout::kNCHW : warp::Layout::kNHWC};
  for (int b = 0; b < s.batch; ++b) {
    warp::WarpPicture(g, src.data() + b * stride, &m[9 * b], bias.data(), norm.data(), oob.data(),
                      want.data() + b * out_picture);
  }
  // Float (kernel) vs double (CPU) coordinates move a rounded sample by at most a level.
  ExpectMatches(got, want, 1.0f);
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, U8KernelOnHost,
    ::testing::Values(Shape{1, 1, 3, 1, 1, 5, false},     // 1-pixel pictures
                      Shape{1, 1, 1, 9, 7, 5, true},      // 1 pixel in, odd out
                      Shape{7, 5, 3, 9, 33, 6, false},    // odd sizes, 2 blocks wide
                      Shape{7, 5, 3, 9, 33, 6, true},
                      Shape{13, 17, 4, 8, 31, 5, false},  // 4 channels, one short block
                      Shape{3, 64, 1, 1, 65, 5, true},    // one row out, a thread past the edge
                      Shape{40, 30, 3, 17, 1, 5, false},  // one column out
                      // a clip [B=2, T=3, H, W, C] is warped as B*T pictures
                      Shape{24, 20, 3, 16, 16, 6, true}));

// NV12 as NVDEC hands it over: the luma rows `pitch` bytes apart (wider than
// the picture), the interleaved CbCr plane after `surface_height` luma rows.
struct Nv12Shape {
  int width, height, pitch, surface_height, out_h, out_w;
  bool nchw, bilinear;
};

class Nv12KernelOnHost : public ::testing::TestWithParam<Nv12Shape> {};

TEST_P(Nv12KernelOnHost, MatchesTheCpuConversionAndWarpOverTheRealLaunchGeometry) {
  const Nv12Shape s = GetParam();
  const int batch = 5;
  const int ch = (s.height + 1) / 2;
  const size_t surface = static_cast<size_t>(s.pitch) * (s.surface_height + ch);
  std::vector<uint8_t> surfaces(surface * batch);
  std::mt19937 rng(s.width * 7 + s.height);
  for (auto& v : surfaces) v = static_cast<uint8_t>(16 + rng() % 224);
  const codec::YcbcrStandard standards[] = {codec::YcbcrStandard::kBt601,
                                            codec::YcbcrStandard::kBt709,
                                            codec::YcbcrStandard::kBt2020};
  std::vector<codec::YcbcrPicture> pictures(batch);
  for (int b = 0; b < batch; ++b) {
    pictures[b] = HostNv12(surfaces.data() + b * surface, s.width, s.height, s.pitch,
                           s.surface_height, standards[b % 3], b % 2 == 0);
  }
  const std::vector<float> m = Matrices(batch, s.height, s.width, s.out_h, s.out_w, 11);
  const float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {0, 128, 255};

  const size_t out_picture = static_cast<size_t>(s.out_h) * s.out_w * 3;
  Output got(out_picture * batch);
  testing::LaunchOnHost(WarpLaunchDims(s.out_h, s.out_w, batch), [&] {
    tfg_similarity_warp_ycbcr(pictures.data(), s.bilinear ? 1 : 0, m.data(), bias, norm, oob,
                              s.out_h, s.out_w, s.nchw ? 1 : 0, got.data());
  });

  // The CPU path: the CPU decoder's conversion to RGB, then the CPU warp.
  std::vector<float> want(out_picture * batch);
  warp::WarpGeometry g{s.height, s.width, 3,
                       s.out_h, s.out_w, s.nchw ? warp::Layout::kNCHW : warp::Layout::kNHWC};
  std::vector<uint8_t> rgb(static_cast<size_t>(s.height) * s.width * 3);
  for (int b = 0; b < batch; ++b) {
    for (int y = 0; y < s.height; ++y) {
      for (int x = 0; x < s.width; ++x) {
        uint8_t px[3];
        codec::PixelToRgb(pictures[b], x, y, s.bilinear, px);
        for (int c = 0; c < 3; ++c) {
          const size_t at = s.nchw ? (static_cast<size_t>(c) * s.height + y) * s.width + x
                                   : (static_cast<size_t>(y) * s.width + x) * 3 + c;
          rgb[at] = px[c];
        }
      }
    }
    warp::WarpPicture(g, rgb.data(), &m[9 * b], bias, norm, oob, want.data() + b * out_picture);
  }
  ExpectMatches(got, want, 1.0f);
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, Nv12KernelOnHost,
    ::testing::Values(Nv12Shape{1, 1, 256, 2, 1, 1, false, false},       // 1 pixel
                      Nv12Shape{1, 1, 256, 2, 3, 5, true, true},
                      Nv12Shape{7, 5, 256, 8, 9, 33, false, true},       // odd, coded height 8
                      Nv12Shape{7, 5, 256, 8, 9, 33, true, false},
                      Nv12Shape{33, 17, 64, 24, 16, 40, true, true},     // odd, padded surface
                      Nv12Shape{64, 48, 64, 48, 32, 32, false, true}));  // pitch == width

// decode_hevc's conversion kernel (tfg_ycbcr_to_rgb_u8) over its launch
// geometry: a region of an NV12 surface to RGB bytes, against the CPU
// decoder's conversion of the same region (codec::RegionToRgb). The output is
// run twice, over buffers filled with 0x00 and 0xFF, with guard bytes around
// it: a byte never written, or one written outside, fails either run.
struct RgbShape {
  int width, height, pitch, surface_height;  // the decoded picture
  int x, y, w, h;                            // the region converted
  bool bilinear;
};

class RgbKernelOnHost : public ::testing::TestWithParam<RgbShape> {};

TEST_P(RgbKernelOnHost, MatchesTheCpuDecodersConversionOverTheRealLaunchGeometry) {
  const RgbShape s = GetParam();
  const int ch = (s.height + 1) / 2;
  std::vector<uint8_t> surface(static_cast<size_t>(s.pitch) * (s.surface_height + ch));
  std::mt19937 rng(s.width * 13 + s.height);
  for (auto& v : surface) v = static_cast<uint8_t>(rng() % 256);
  const codec::YcbcrPicture p = HostNv12(surface.data(), s.width, s.height, s.pitch,
                                         s.surface_height, codec::YcbcrStandard::kBt709,
                                         s.width % 2 == 1);

  const size_t size = static_cast<size_t>(s.w) * s.h * 3;
  std::vector<uint8_t> want(size);
  codec::RegionToRgb(p, s.x, s.y, s.w, s.h, s.bilinear, want.data());
  for (const uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}}) {
    std::vector<uint8_t> out(size + 2 * kGuard, fill);
    testing::LaunchOnHost(WarpLaunchDims(s.h, s.w, 1), [&] {
      tfg_ycbcr_to_rgb_u8(p, s.x, s.y, s.w, s.h, s.bilinear ? 1 : 0, out.data() + kGuard);
    });
    for (size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(out[i], fill) << "written before the output";
      ASSERT_EQ(out[kGuard + size + i], fill) << "written after the output";
    }
    for (size_t i = 0; i < size; ++i) {
      ASSERT_EQ(out[kGuard + i], want[i]) << "byte " << i << " (fill " << int(fill) << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, RgbKernelOnHost,
    ::testing::Values(RgbShape{1, 1, 256, 2, 0, 0, 1, 1, true},        // 1 pixel
                      RgbShape{7, 5, 256, 8, 0, 0, 7, 5, true},        // odd, coded height 8
                      RgbShape{7, 5, 256, 8, 1, 1, 5, 3, false},       // odd crop, nearest
                      RgbShape{33, 17, 64, 24, 3, 2, 29, 15, true},    // 2 blocks wide
                      RgbShape{64, 48, 64, 48, 0, 0, 64, 48, false},   // pitch == width
                      RgbShape{40, 9, 128, 16, 0, 8, 40, 1, true}));   // one row

}  // namespace
}  // namespace gpu
}  // namespace tfg
