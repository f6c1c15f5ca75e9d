// DecodeWarped (decode_hevc_warped's GPU path, TensorFlow-free) against the
// fake CUDA driver + NVDEC (testing/fake_nvdec.h). The fake cuLaunchKernel
// records the launch, tells the fake which picture the kernel reads (so an
// unmap before the kernel's event is a violation), and runs the fused kernel's
// own source (similarity_warp_kernels.cu) on the host over the launch it was
// given, reading a host NV12 surface laid out as the mapped one (pitch, chroma
// after the coded rows): the output is compared with the CPU decode_hevc_warped
// path (codec::WarpDecoded) on edge shapes.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels' source on the host

#include "cc/gpu/nvdec_warp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc/codec/hevc_warp.h"
#include "cc/gpu/color_plan.h"
#include "cc/gpu/testing/fake_kernels.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::kStream;

// One launch of the fused kernel, as the launcher packed it.
struct Launch {
  codec::YcbcrPicture picture;  // fake device pointers
  RegionWarp warp;
  CUdeviceptr dst;
  LaunchDims dims;
};

// The host copy of a mapped picture: the same layout (pitch, chroma after the
// coded rows), its bytes drawn from `seed`.
codec::YcbcrPicture OnHost(const codec::YcbcrPicture& mapped, unsigned seed,
                           std::vector<uint8_t>* surface) {
  codec::YcbcrPicture p = mapped;
  const long long chroma_at = mapped.cb - mapped.y;
  const size_t size = static_cast<size_t>(chroma_at + mapped.cb_stride * mapped.chroma_height);
  if (surface->size() != size) {
    surface->resize(size);
    std::mt19937 rng(seed);
    for (auto& v : *surface) v = static_cast<uint8_t>(rng() % 256);
  }
  p.y = surface->data();
  p.cb = p.y + chroma_at;
  p.cr = p.cb + 1;
  return p;
}

// The fake driver with both kernels of the module: decode_hevc's conversion
// (nothing to run here) and the fused warp, recorded and, when it has an
// output, run on the host over the launch on a host copy of the picture.
struct FusedFake {
  testing::FakeNvdec fake;
  std::vector<Launch> launches;
  struct ColorLaunch {
    ColorPlan plan;
    CUdeviceptr dst;
    LaunchDims dims;
    CUstream stream;
    size_t after_warps;  // warp launches before it
  };
  std::vector<ColorLaunch> color_launches;
  std::vector<uint8_t> surface;  // the host copy of the mapped picture
  unsigned seed = 1;
  testing::FakeKernels kernels{
      &fake,
      {{"tfg_ycbcr_to_rgb_u8", [](CUstream, void**, const LaunchDims&) {}},
       {"tfg_decode_warp_ycbcr", [this](CUstream, void** args, const LaunchDims& d) {
          Launch l{*static_cast<codec::YcbcrPicture*>(args[0]),
                   *static_cast<RegionWarp*>(args[1]), *static_cast<CUdeviceptr*>(args[2]), d};
          launches.push_back(l);
          if (l.dst == 0) return;
          const codec::YcbcrPicture host = OnHost(l.picture, seed, &surface);
          testing::LaunchOnHost(l.dims, [&] {
            tfg_decode_warp_ycbcr(host, l.warp, reinterpret_cast<void*>(l.dst));
          });
        }},
       {"tfg_color_levels", [this](CUstream stream, void** args, const LaunchDims& d) {
          ColorLaunch l{*static_cast<ColorPlan*>(args[0]), *static_cast<CUdeviceptr*>(args[1]), d,
                        stream, launches.size()};
          color_launches.push_back(l);
          if (l.dst == 0) return;
          testing::LaunchOnHostSynced(l.dims, [&] {
            tfg_color_levels(l.plan, reinterpret_cast<void*>(l.dst));
          });
        }}}};

  std::unique_ptr<NvdecRgbDecoder> Decoder(int surfaces = 2) {
    NvdecPoolOptions options;
    options.sessions = 1;
    options.surfaces = surfaces;
    return std::make_unique<NvdecRgbDecoder>(kernels.cuda(), fake.nvdec(), testing::kFakeFatbin,
                                             sizeof(testing::kFakeFatbin), options);
  }
};

class NvdecWarpTest : public ::testing::Test {
 protected:
  Status Decode(int width, int height, const WarpPlanner& plan, int bit_depth_minus8 = 0,
                const warp::ColorDraw* color = nullptr) {
    testing::FakeSample s;
    s.width = width;
    s.height = height;
    s.bit_depth_minus8 = bit_depth_minus8;
    const std::vector<uint8_t> bytes = testing::FakeSampleBytes(s);
    return DecodeWarped(decoder_.get(), bytes.data(), bytes.size(), kStream, "sample 7", plan,
                        color);
  }

  void ExpectCleanEnd() {
    fake_.CompleteStream(kStream);
    decoder_.reset();
    EXPECT_THAT(fake_.problems(), ::testing::IsEmpty());
  }

  int Count(const std::string& prefix) const { return fake_.Count(prefix); }

  FusedFake state_;
  testing::FakeNvdec& fake_ = state_.fake;
  std::unique_ptr<NvdecRgbDecoder> decoder_ = state_.Decoder();
};

WarpPlanner Plan(const RegionWarp& w, CUdeviceptr dst, std::vector<int>* seen = nullptr) {
  return [=](int width, int height, RegionWarp* warp, CUdeviceptr* out) {
    if (seen != nullptr) *seen = {width, height};
    *warp = w;
    *out = dst;
    return Status::Ok();
  };
}

RegionWarp Resize(int x0, int y0, int w, int h, int out_h, int out_w) {
  RegionWarp r;
  r.x0 = x0;
  r.y0 = y0;
  r.width = w;
  r.height = h;
  r.out_height = out_h;
  r.out_width = out_w;
  r.matrix[0] = static_cast<float>(w) / out_w;
  r.matrix[4] = static_cast<float>(h) / out_h;
  return r;
}

TEST_F(NvdecWarpTest, WarpsTheMappedPictureOnTheStreamAndUnmapsOnlyAfterTheKernelsEvent) {
  std::vector<int> seen;
  ASSERT_TRUE(Decode(60, 45, Plan(Resize(2, 1, 50, 40, 9, 33), 0, &seen)).ok());
  EXPECT_EQ(seen, (std::vector<int>{60, 45})) << "the planner gets the display size";
  ASSERT_EQ(state_.launches.size(), 1u);
  const auto& l = state_.launches[0];
  EXPECT_EQ(l.warp.x0, 2);
  EXPECT_EQ(l.warp.y0, 1);
  EXPECT_EQ(l.warp.width, 50);
  EXPECT_EQ(l.warp.out_width, 33);
  EXPECT_EQ(l.dims.grid_x, 2u);  // 33 / 32 rounded up
  EXPECT_EQ(l.dims.grid_y, 2u);  // 9 / 8
  EXPECT_EQ(l.dims.grid_z, 1u);
  EXPECT_EQ(l.picture.width, 60);
  EXPECT_EQ(l.picture.height, 45);
  EXPECT_EQ(l.picture.cb, l.picture.y + 256 * 48) << "NV12 chroma after the coded rows";
  EXPECT_EQ(l.picture.chroma_step, 2);

  int record = -1;
  ASSERT_EQ(testing::KernelOrderProblem(fake_, &record), "");
  fake_.CompleteStream(kStream);
  ASSERT_TRUE(Decode(60, 45, Plan(Resize(0, 0, 60, 45, 8, 8), 0)).ok());
  EXPECT_GT(fake_.Find("cuvidUnmapVideoFrame"), record);
  EXPECT_EQ(Count("cuCtxPushCurrent"), Count("cuCtxPopCurrent"));
  ExpectCleanEnd();
}

TEST_F(NvdecWarpTest, SharesThePoolAndModuleWithDecodeHevcsConversion) {
  const std::vector<uint8_t> bytes = testing::FakeSampleBytes(testing::FakeSample());
  ASSERT_TRUE(decoder_
                  ->Decode(bytes.data(), bytes.size(), true, kStream, "rgb",
                           [](int w, int h, RgbRegion* r, CUdeviceptr* dst) {
                             *r = {0, 0, w, h};
                             *dst = 0x1000;
                             return Status::Ok();
                           })
                  .ok());
  fake_.CompleteStream(kStream);
  ASSERT_TRUE(Decode(64, 48, Plan(Resize(0, 0, 64, 48, 8, 8), 0)).ok());
  EXPECT_EQ(decoder_->pools(), 1) << "one pool per GPU for both ops";
  EXPECT_EQ(state_.kernels.loads, 1) << "one module per GPU for both kernels";
  EXPECT_THAT(state_.kernels.looked_up, ::testing::Contains("tfg_decode_warp_ycbcr"));
  ExpectCleanEnd();
}

TEST_F(NvdecWarpTest, PlannerFailureReleasesThePictureAndLaunchesNothing) {
  const Status s = Decode(64, 48, [](int, int, RegionWarp*, CUdeviceptr*) {
    return InternalError("out of GPU memory");
  });
  EXPECT_THAT(s.message(), HasSubstr("out of GPU memory"));
  EXPECT_TRUE(state_.launches.empty());
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

TEST_F(NvdecWarpTest, RegionOutsideThePictureIsAnErrorNamingTheSample) {
  for (const RegionWarp& w : {Resize(10, 0, 60, 48, 8, 8), Resize(0, -1, 64, 48, 8, 8),
                              Resize(0, 0, 0, 48, 8, 8), Resize(0, 0, 64, 48, 0, 8)}) {
    const Status s = Decode(64, 48, Plan(w, 0x1000));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
    EXPECT_THAT(s.message(), HasSubstr("sample 7"));
    fake_.CompleteStream(kStream);
  }
  EXPECT_TRUE(state_.launches.empty());
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 4);
}

TEST_F(NvdecWarpTest, FailedLaunchAndMissingKernelAreStatusesAndReleaseThePicture) {
  state_.kernels.fail_launch = CUDA_ERROR_UNKNOWN;
  Status s = Decode(64, 48, Plan(Resize(0, 0, 64, 48, 8, 8), 0x1000));
  EXPECT_THAT(s.message(), HasSubstr("cuLaunchKernel(tfg_decode_warp_ycbcr) failed"));
  EXPECT_THAT(s.message(), HasSubstr("sample 7"));
  state_.kernels.fail_launch = CUDA_SUCCESS;
  fake_.CompleteStream(kStream);
  EXPECT_EQ(Count("cuCtxPushCurrent"), Count("cuCtxPopCurrent"));
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

TEST(NvdecWarpFailures, EveryFailingPoolCallIsAStatusAndLeaksNothing) {
  // The scenario's calls, each failed at its first occurrence in turn.
  for (const char* call : {"cuvidGetDecoderCaps", "cuvidCreateVideoParser", "cuvidParseVideoData",
                           "cuvidCreateDecoder", "cuvidDecodePicture", "cuvidMapVideoFrame",
                           "cuEventCreate", "cuEventRecord", "cuCtxPushCurrent"}) {
    SCOPED_TRACE(call);
    FusedFake f;
    auto decoder = f.Decoder(1);
    f.fake.FailCall(call, 1);
    const std::vector<uint8_t> bytes = testing::FakeSampleBytes(testing::FakeSample());
    const Status s = DecodeWarped(decoder.get(), bytes.data(), bytes.size(), kStream, "sample 7",
                                  Plan(Resize(0, 0, 64, 48, 8, 8), 0));
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr(call));
    f.fake.CompleteStream(kStream);
    decoder.reset();
    EXPECT_THAT(f.fake.problems(), ::testing::IsEmpty());
  }
}

TEST_F(NvdecWarpTest, PicturesNvdecCannotTakeAreOutOfRangeForTheCpuFallback) {
  fake_.max_size = 128;
  Status s = Decode(200, 100, Plan(Resize(0, 0, 200, 100, 8, 8), 0x1000));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
  s = Decode(64, 48, Plan(Resize(0, 0, 64, 48, 8, 8), 0x1000), /*bit_depth_minus8=*/2);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
  EXPECT_TRUE(state_.launches.empty());
  ExpectCleanEnd();
}

// ----- the fused kernel's source over the launcher's launch vs the CPU path

constexpr size_t kGuard = 64;

struct Case {
  int width, height;         // the decoded picture
  int x0, y0, rw, rh;        // the sample's crop (the region the matrix maps into)
  int out_h, out_w;
  int kind;                  // 0 resize, 1 rotate + flip, 2 outside, 3 corner, 4 perspective
  bool nchw, u8, bilinear;
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << c.width << "x" << c.height << " crop " << c.rw << "x" << c.rh << "+" << c.x0 << "+"
            << c.y0 << " -> " << c.out_h << "x" << c.out_w << " kind " << c.kind
            << (c.nchw ? " NCHW" : " NHWC") << (c.u8 ? " u8" : " float")
            << (c.bilinear ? " bilinear" : " nearest");
}

void MatrixOf(const Case& c, double m[9]) {
  const double sx = static_cast<double>(c.rw) / c.out_w, sy = static_cast<double>(c.rh) / c.out_h;
  const double a = 0.3, cs = std::cos(a), sn = std::sin(a);
  const double kinds[5][9] = {
      {sx, 0, 0, 0, sy, 0, 0, 0, 1},
      {-sx * cs, sx * sn, c.rw * 0.8, sy * sn, sy * cs, -0.1 * c.rh, 0, 0, 1},
      {sx, 0, c.rw + 3.0, 0, sy, -c.rh - 2.0, 0, 0, 1},
      {0.37 * sx, 0, -0.3 * c.rw, 0, 0.41 * sy, 0.7 * c.rh, 0, 0, 1},
      {sx, 0.1, 0.5, -0.1, sy, 0.25, 0.002, 0.003, 1}};
  for (int i = 0; i < 9; ++i) m[i] = kinds[c.kind][i];
}

const float kZeroOob[3] = {0.f, 0.f, 0.f};  // decode_hevc_warped's

// The case's warp: its crop and matrix, a bias and norm on float output (none
// on uint8), `oob` outside the picture.
RegionWarp WarpOf(const Case& c, const float oob[3]) {
  double m[9];
  MatrixOf(c, m);
  RegionWarp w;
  w.x0 = c.x0;
  w.y0 = c.y0;
  w.width = c.rw;
  w.height = c.rh;
  for (int i = 0; i < 9; ++i) w.matrix[i] = static_cast<float>(m[i]);
  const float bias[3] = {10.f, 120.f, 200.f}, norm[3] = {0.5f, 2.f, 1.f / 64};
  for (int i = 0; i < 3; ++i) {
    w.bias[i] = c.u8 ? 0.f : bias[i];
    w.norm[i] = c.u8 ? 1.f : norm[i];
    w.oob_color[i] = oob[i];
  }
  w.out_height = c.out_h;
  w.out_width = c.out_w;
  w.nchw = c.nchw;
  w.bilinear_chroma = c.bilinear;
  w.u8_output = c.u8;
  return w;
}

class FusedKernelOverTheLauncher : public NvdecWarpTest,
                                   public ::testing::WithParamInterface<Case> {};

TEST_P(FusedKernelOverTheLauncher, MatchesTheCpuDecodeHevcWarpedPath) {
  const Case c = GetParam();
  state_.seed = c.width * 31 + c.height;
  const RegionWarp w = WarpOf(c, kZeroOob);
  double m[9];  // the CPU path's matrix
  MatrixOf(c, m);
  const size_t values = static_cast<size_t>(c.out_h) * c.out_w * 3;
  // Guarded output: NaN (float) or a fill byte (u8, then caught unless within a level of the
  // CPU value) where no thread wrote.
  std::vector<float> fout(values + 2 * kGuard, std::numeric_limits<float>::quiet_NaN());
  std::vector<uint8_t> uout(values + 2 * kGuard, 0xA5);
  const CUdeviceptr dst = c.u8 ? reinterpret_cast<CUdeviceptr>(uout.data() + kGuard)
                               : reinterpret_cast<CUdeviceptr>(fout.data() + kGuard);
  ASSERT_TRUE(Decode(c.width, c.height, Plan(w, dst)).ok());
  ASSERT_EQ(state_.launches.size(), 1u);
  EXPECT_EQ(state_.launches[0].dims.grid_x, (c.out_w + 31u) / 32);

  // The CPU decode_hevc_warped path on the same picture (NHWC; transposed for NCHW).
  const codec::YcbcrPicture host = OnHost(state_.launches[0].picture, state_.seed, &state_.surface);
  codec::PictureRegion region;
  region.x = c.x0;
  region.y = c.y0;
  region.width = c.rw;
  region.height = c.rh;
  codec::HevcWarpTarget target;
  target.out_height = c.out_h;
  target.out_width = c.out_w;
  target.bias = w.bias;
  target.norm = w.norm;
  target.oob_color = w.oob_color;
  const auto chroma =
      c.bilinear ? codec::ChromaUpsampling::kBilinear : codec::ChromaUpsampling::kNearest;
  std::vector<float> want(values);
  std::vector<uint8_t> want_u8(values);
  if (c.u8) {
    ASSERT_TRUE(codec::WarpDecoded(host, region, chroma, m, target, want_u8.data()).ok());
    for (size_t i = 0; i < values; ++i) want[i] = want_u8[i];
  } else {
    ASSERT_TRUE(codec::WarpDecoded(host, region, chroma, m, target, want.data()).ok());
  }
  for (size_t i = 0; i < kGuard; ++i) {
    if (c.u8) {
      ASSERT_EQ(uout[i], 0xA5) << "written before the output";
      ASSERT_EQ(uout[kGuard + values + i], 0xA5) << "written after the output";
    } else {
      ASSERT_TRUE(std::isnan(fout[i])) << "written before the output";
      ASSERT_TRUE(std::isnan(fout[kGuard + values + i])) << "written after the output";
    }
  }
  int off = 0, unwritten = 0;
  float worst = 0;
  for (int y = 0; y < c.out_h; ++y) {
    for (int x = 0; x < c.out_w; ++x) {
      for (int ch = 0; ch < 3; ++ch) {
        const size_t at_nhwc = (static_cast<size_t>(y) * c.out_w + x) * 3 + ch;
        const size_t at = c.nchw ? (static_cast<size_t>(ch) * c.out_h + y) * c.out_w + x
                                 : at_nhwc;
        const float g = c.u8 ? uout[kGuard + at] : fout[kGuard + at];
        if (std::isnan(g)) {
          ++unwritten;
          continue;
        }
        // In levels: the fixed-point CPU warp and the float kernel may round a sample apart.
        const float scale = c.u8 ? 1.f : w.norm[ch];
        const float d = std::fabs(g - want[at_nhwc]) / scale;
        worst = std::max(worst, d);
        off += d > 1.01f;
      }
    }
  }
  EXPECT_EQ(unwritten, 0) << "output elements no thread wrote";
  EXPECT_EQ(off, 0) << "elements more than a level from the CPU path (worst " << worst << ")";
  ExpectCleanEnd();
}

// ----- the colour steps: the warp writes levels, tfg_color_levels colours them

// Every step kind, contrast twice (after hue and saturation, then after
// brightness), grayscale last in the second draw.
warp::ColorDraw TestDraw(bool grayscale) {
  using Op = warp::ColorStep::Op;
  warp::ColorDraw d;
  const warp::ColorStep steps[] = {{Op::kHue, 0.21f},        {Op::kSaturation, 1.7f},
                                   {Op::kContrast, 1.6f},    {Op::kBrightness, 0.8f},
                                   {Op::kContrast, 0.45f},   {Op::kGrayscale, 1.f}};
  for (const auto& s : steps) {
    if (s.op != Op::kGrayscale || grayscale) d.steps[d.count++] = s;
  }
  return d;
}

class ColorOverTheLauncher : public NvdecWarpTest, public ::testing::WithParamInterface<Case> {};

// The picture warped without colour into levels (bias 0, norm 1), then with a
// draw: the second run's output is the CPU output stage (warp::ColorOutput)
// on the first run's levels, with the plan's bias and norm; the colour kernel
// runs once, behind the warp on the same stream, over the warp's slot.
TEST_P(ColorOverTheLauncher, ColoursTheWarpedLevelsAsTheCpuOutputStage) {
  const Case c = GetParam();
  state_.seed = c.width * 31 + c.height;
  const float oob[3] = {3.5f, 43.5f, 83.5f};
  const RegionWarp w = WarpOf(c, oob);
  const int n = c.out_h * c.out_w;
  const size_t values = static_cast<size_t>(n) * 3;
  std::vector<float> flevels(values), fout(values);
  std::vector<uint8_t> ulevels(values), uout(values);
  auto slot = [&](std::vector<float>& f, std::vector<uint8_t>& u) {
    return c.u8 ? reinterpret_cast<CUdeviceptr>(u.data()) : reinterpret_cast<CUdeviceptr>(f.data());
  };
  const warp::ColorDraw draw = TestDraw(c.kind % 2 == 1);
  ASSERT_TRUE(Decode(c.width, c.height, Plan(LevelsWarp(w), slot(flevels, ulevels))).ok());
  fake_.CompleteStream(kStream);
  EXPECT_TRUE(state_.color_launches.empty()) << "no colour: the warp alone";
  ASSERT_TRUE(Decode(c.width, c.height, Plan(w, slot(fout, uout)), 0, &draw).ok());
  ASSERT_EQ(state_.launches.size(), 2u);
  ASSERT_EQ(state_.color_launches.size(), 1u);
  const auto& cl = state_.color_launches[0];
  EXPECT_EQ(cl.after_warps, 2u) << "behind the picture's warp";
  EXPECT_EQ(cl.stream, kStream);
  EXPECT_EQ(cl.dst, slot(fout, uout));
  EXPECT_EQ(cl.dims.block_x, static_cast<unsigned>(kColorThreads));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(state_.launches[1].warp.bias[i], 0.f) << "the warp writes levels";
    EXPECT_EQ(state_.launches[1].warp.norm[i], 1.f);
  }

  auto nhwc = [&](int i, int ch) {
    return c.nchw ? static_cast<size_t>(ch) * n + i : static_cast<size_t>(i) * 3 + ch;
  };
  std::vector<float> got(values), want(values);
  if (c.u8) {
    std::vector<uint8_t> levels(values), want_u8(values);
    for (int i = 0; i < n; ++i)
      for (int ch = 0; ch < 3; ++ch) levels[3 * i + ch] = ulevels[nhwc(i, ch)];
    warp::ColorOutput(draw, n, 3, levels.data(), want_u8.data());
    for (size_t k = 0; k < values; ++k) want[k] = want_u8[k];
  } else {
    std::vector<float> levels(values);
    for (int i = 0; i < n; ++i)
      for (int ch = 0; ch < 3; ++ch) levels[3 * i + ch] = flevels[nhwc(i, ch)];
    warp::ColorOutput(draw, n, 3, levels.data(), w.bias, w.norm, want.data());
  }
  float worst = 0;
  for (int i = 0; i < n; ++i) {
    for (int ch = 0; ch < 3; ++ch) {
      const float g = c.u8 ? uout[nhwc(i, ch)] : fout[nhwc(i, ch)];
      const float scale = c.u8 ? 1.f : w.norm[ch];
      worst = std::max(worst, std::fabs(g - want[3 * i + ch]) / scale);
    }
  }
  EXPECT_LE(worst, c.u8 ? 1.f : 0.01f) << "levels from the CPU output stage";
  ExpectCleanEnd();
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, ColorOverTheLauncher,
    ::testing::Values(Case{16, 16, 0, 0, 1, 1, 1, 1, 0, false, false, true},
                      Case{61, 45, 3, 1, 55, 41, 9, 33, 1, true, false, false},
                      Case{61, 45, 3, 1, 55, 41, 9, 33, 1, false, true, true},
                      Case{33, 17, 1, 2, 31, 15, 16, 40, 2, false, false, true},
                      Case{70, 50, 5, 4, 57, 41, 17, 65, 3, true, true, false},
                      Case{40, 30, 0, 0, 40, 30, 13, 1, 4, false, false, true}));

TEST_F(NvdecWarpTest, FailedColourLaunchIsAStatusAndReleasesThePicture) {
  const warp::ColorDraw draw = TestDraw(false);
  state_.kernels.fail_launch = CUDA_ERROR_UNKNOWN;
  state_.kernels.fail_only = "tfg_color_levels";
  const Status s = Decode(64, 48, Plan(Resize(0, 0, 64, 48, 8, 8), 0), 0, &draw);
  EXPECT_THAT(s.message(), HasSubstr("cuLaunchKernel(tfg_color_levels) failed"));
  EXPECT_THAT(s.message(), HasSubstr("sample 7"));
  EXPECT_EQ(state_.launches.size(), 1u) << "the warp was queued";
  state_.kernels.fail_launch = CUDA_SUCCESS;
  fake_.CompleteStream(kStream);
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, FusedKernelOverTheLauncher,
    ::testing::Values(Case{16, 16, 0, 0, 1, 1, 1, 1, 0, false, false, true},    // 1-pixel crop
                      Case{16, 16, 0, 0, 1, 1, 3, 5, 0, true, true, true},      // 1 pixel in
                      Case{61, 45, 3, 1, 55, 41, 9, 33, 0, false, false, true}, // odd, odd crop
                      Case{61, 45, 3, 1, 55, 41, 9, 33, 1, true, false, false},
                      Case{61, 45, 3, 1, 55, 41, 9, 33, 1, false, true, true},
                      Case{33, 17, 0, 0, 33, 17, 16, 40, 2, true, true, true},  // outside
                      Case{33, 17, 1, 2, 31, 15, 16, 40, 2, false, false, true},
                      Case{70, 50, 5, 4, 57, 41, 17, 65, 3, false, false, true},  // corner
                      Case{70, 50, 5, 4, 57, 41, 17, 65, 3, true, true, false},
                      Case{40, 30, 0, 0, 40, 30, 13, 1, 4, false, false, true},  // perspective
                      Case{40, 30, 1, 1, 37, 27, 1, 29, 4, true, true, true}));

}  // namespace
}  // namespace gpu
}  // namespace tfg
