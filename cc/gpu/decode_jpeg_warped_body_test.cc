// The GPU JPEG path's body (DecodeJpegWarpedBatch) against the fake nvJPEG,
// the fused kernel's own source (tfg_decode_warp_ycbcr) run on the host over
// each launch: the output against the CPU fused JPEG path (cc/codec/jpeg_warp)
// for the same (seed, epoch, element), one draw per clip, the stream order,
// and the errors.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels need the stand-in

#include "cc/gpu/decode_jpeg_warped_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cc/gpu/color_plan.h"
#include "cc/gpu/testing/cpu_fused_jpeg.h"
#include "cc/gpu/testing/fake_nvjpeg.h"
#include "cc/gpu/testing/jpeg_reference.h"
#include "cc/gpu/testing/jpeg_samples.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::BytesOf;
using testing::EncodeJpeg;
using testing::JpegKind;
using testing::ReferenceSpec;
using testing::kJpegStream;

const float kZero[3] = {0, 0, 0}, kOne[3] = {1, 1, 1}, kOob[3] = {7, 8, 9};
constexpr int kOutH = 24, kOutW = 32;
constexpr uint64_t kSeed = 11, kEpoch = 3;

uint64_t ClipKey(int64_t clip) {
  return HashKey({kSeed, kEpoch, static_cast<uint64_t>(clip)});
}

struct Body {
  int launches = 0;
  std::vector<CUstream> launch_streams;
  testing::FakeNvjpeg fake{
      {{"tfg_decode_warp_ycbcr", [this](CUstream stream, void** args, const LaunchDims& d) {
          ++launches;
          launch_streams.push_back(stream);
          const auto picture = *static_cast<codec::YcbcrPicture*>(args[0]);
          const auto warp = *static_cast<RegionWarp*>(args[1]);
          void* dst = reinterpret_cast<void*>(*static_cast<CUdeviceptr*>(args[2]));
          testing::LaunchOnHost(d, [&] { tfg_decode_warp_ycbcr(picture, warp, dst); });
        }},
       {"tfg_color_levels", [this](CUstream stream, void** args, const LaunchDims& d) {
          color_launches.push_back({launches, stream});
          const auto plan = *static_cast<ColorPlan*>(args[0]);
          void* dst = reinterpret_cast<void*>(*static_cast<CUdeviceptr*>(args[1]));
          testing::LaunchOnHostSynced(d, [&] { tfg_color_levels(plan, dst); });
        }}}};
  // Each colour launch: the warp launches before it, its stream.
  std::vector<std::pair<int, CUstream>> color_launches;
  std::vector<warp::ColorDraw> colors;  // per clip, handed to the batch
  const float* bias = kZero;
  const float* norm = kOne;
  NvjpegDecoder decoder{fake.api(), [](const std::string&) {}};
  KernelModules modules{fake.cuda(), testing::kFakeJpegFatbin,
                        sizeof(testing::kFakeJpegFatbin)};
  JpegWarpGpu gpu;
  TaskThreads threads{2};
  std::vector<std::string> jpegs;
  std::vector<std::vector<unsigned char>> planes;
  std::vector<std::vector<float>> outputs;  // per frame
  std::map<int64_t, int> plans;             // per clip
  std::vector<int64_t> on_host;

  Body() {
    EXPECT_TRUE(decoder.Init().ok());
    gpu.cuda = fake.cuda();
    gpu.modules = &modules;
    gpu.decoder = &decoder;
  }

  std::vector<Status> Run(std::vector<std::string> frames, int frames_per_clip,
                          CUstream stream = kJpegStream) {
    jpegs = std::move(frames);
    outputs.assign(jpegs.size(), std::vector<float>(kOutH * kOutW * 3, -1.f));
    auto batch = std::make_shared<JpegClipBatch>();
    for (size_t i = 0; i < jpegs.size(); ++i) {
      batch->frames.push_back({BytesOf(jpegs[i]), jpegs[i].size(),
                               "item " + std::to_string(i / frames_per_clip) + " frame " +
                                   std::to_string(i % frames_per_clip)});
    }
    batch->frames_per_clip = frames_per_clip;
    batch->stream = stream;
    batch->allocate = [this](size_t bytes, CUdeviceptr* p) {
      planes.emplace_back(bytes);
      *p = reinterpret_cast<CUdeviceptr>(planes.back().data());
      return Status::Ok();
    };
    batch->plan = [this](int64_t clip, int width, int height, RegionWarp* w) {
      ++plans[clip];
      PlanClipWarp(ReferenceSpec(), ClipKey(clip), width, height, kOutH, kOutW, bias, norm,
                   kOob, w);
      return Status::Ok();
    };
    batch->dst = [this](int64_t i) {
      return reinterpret_cast<CUdeviceptr>(outputs[i].data());
    };
    batch->colors = colors;
    batch->on_host = [this](int64_t i, const Status& why) {
      on_host.push_back(i);
      return why.code() == StatusCode::kOutOfRange ? Status::Ok() : why;
    };
    std::promise<std::vector<Status>> done;
    DecodeJpegWarpedBatch(&gpu, &threads, batch,
                          [&](std::vector<Status> s) { done.set_value(std::move(s)); });
    return done.get_future().get();
  }
};

// The CPU fused path's output for frame `jpeg` of clip `clip`: the same draw
// (TransformMatrix, same key).
std::vector<float> CpuFused(const std::string& jpeg, int64_t clip) {
  auto draw = [clip](int width, int height, double m[9]) {
    warp::TransformMatrix(ReferenceSpec(), ClipKey(clip), height, width, kOutH, kOutW, m);
  };
  return testing::CpuFusedJpeg<float>(jpeg, draw, kOutH, kOutW, kZero, kOne, kOob);
}

double WorstDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}

TEST(DecodeJpegWarpedBodyTest, EveryPictureKindMatchesTheCpuFusedPathWithinTwoLevels) {
  Body body;
  const std::vector<JpegKind> kinds = {JpegKind::k420, JpegKind::k422, JpegKind::k444,
                                       JpegKind::kProgressive420, JpegKind::k420};
  std::vector<std::string> frames;
  for (size_t i = 0; i < kinds.size(); ++i) {
    frames.push_back(EncodeJpeg(i == 4 ? 320 : 157, i == 4 ? 240 : 93, kinds[i],
                                static_cast<int>(i)));
  }
  const std::vector<Status> statuses = body.Run(frames, 1);
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].message();
    EXPECT_LE(WorstDifference(body.outputs[i], CpuFused(frames[i], i)), 2.0) << "picture " << i;
  }
  EXPECT_EQ(body.launches, 5);
  EXPECT_TRUE(body.fake.violations().empty())
      << ::testing::PrintToString(body.fake.violations());
}

TEST(DecodeJpegWarpedBodyTest, GrayPicturesMatchTheCpuPath) {
  Body body;
  const std::string gray = EncodeJpeg(101, 77, JpegKind::kGray, 2);
  const std::vector<Status> statuses = body.Run({gray}, 1);
  ASSERT_TRUE(statuses[0].ok()) << statuses[0].message();
  EXPECT_LE(WorstDifference(body.outputs[0], CpuFused(gray, 0)), 2.0);
}

TEST(DecodeJpegWarpedBodyTest, OneDrawPerClipEveryFrameWarpedWithIt) {
  Body body;
  std::vector<std::string> frames;
  for (int i = 0; i < 6; ++i) frames.push_back(EncodeJpeg(96, 64, JpegKind::k420, i));
  const std::vector<Status> statuses = body.Run(frames, 3);
  for (const Status& s : statuses) ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.plans, (std::map<int64_t, int>{{0, 1}, {1, 1}}));
  for (int i = 0; i < 6; ++i) {
    EXPECT_LE(WorstDifference(body.outputs[i], CpuFused(frames[i], i / 3)), 2.0) << "frame " << i;
  }
}

// Clips of 3 frames with a colour draw per clip (DrawColor from the clip's
// key, as the CPU path draws it): every frame's output is the CPU output
// stage (warp::ColorOutput, each frame's own contrast means) on the levels the
// same frame gets without colour, with the plan's bias and norm; the colour
// kernel runs behind each frame's warp on the batch's stream.
TEST(DecodeJpegWarpedBodyTest, ColourPerClipIsTheCpuOutputStageOnEachFramesLevels) {
  std::vector<std::string> frames;
  for (int i = 0; i < 6; ++i) frames.push_back(EncodeJpeg(96, 64, JpegKind::k420, 3 * i + 1));
  Body colored;  // one fake nvJPEG per process at a time: both runs on it
  for (const Status& s : colored.Run(frames, 3)) ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(colored.color_launches.empty()) << "no colour: the warp alone";
  const std::vector<std::vector<float>> levels = colored.outputs;
  colored.launches = 0;

  warp::ColorSpec spec;
  ASSERT_TRUE(warp::ParseColorSpec({1, 1, 0.5f, 1.5f, 0.4f, 1.6f, 0.2f, 1.8f, -0.3f, 0.3f}, &spec)
                  .ok());
  const float bias[3] = {124.f, 116.f, 104.f}, norm[3] = {1 / 58.f, 1 / 57.f, 1 / 57.5f};
  colored.bias = bias;
  colored.norm = norm;
  for (int64_t clip = 0; clip < 2; ++clip) {
    colored.colors.push_back(warp::DrawColor(spec, ClipKey(clip)));
  }
  ASSERT_NE(colored.colors[0].steps[0].factor, colored.colors[1].steps[0].factor);
  for (const Status& s : colored.Run(frames, 3)) ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(colored.color_launches.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(colored.color_launches[i].first, i + 1) << "behind frame " << i << "'s warp";
    EXPECT_EQ(colored.color_launches[i].second, kJpegStream);
    const warp::ColorDraw& draw = colored.colors[i / 3];
    std::vector<float> want(kOutH * kOutW * 3);
    warp::ColorOutput(draw, kOutH * kOutW, 3, levels[i].data(), bias, norm, want.data());
    double worst = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      worst = std::max(worst, std::fabs(double(colored.outputs[i][k]) - want[k]) / norm[k % 3]);
    }
    EXPECT_LE(worst, 0.01) << "frame " << i << ", levels";
  }
  EXPECT_TRUE(colored.fake.violations().empty())
      << ::testing::PrintToString(colored.fake.violations());
}

TEST(DecodeJpegWarpedBodyTest, ColourDrawsNotOnePerClipAreInvalidArgument) {
  Body body;
  body.colors.resize(1);
  body.colors[0].steps[body.colors[0].count++] = {warp::ColorStep::Op::kBrightness, 1.2f};
  std::vector<std::string> frames;
  for (int i = 0; i < 4; ++i) frames.push_back(EncodeJpeg(64, 48, JpegKind::k420, i));
  for (const Status& s : body.Run(frames, 2)) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("1 colour draws for 2 clips"));
  }
  EXPECT_EQ(body.launches, 0);
}

TEST(DecodeJpegWarpedBodyTest, KernelsRunOnTheDecodesStreamAfterEveryDecode) {
  Body body;
  std::vector<std::string> frames;
  for (int i = 0; i < 3; ++i) frames.push_back(EncodeJpeg(64, 48, JpegKind::k420, i));
  frames.push_back(EncodeJpeg(64, 48, JpegKind::kProgressive420));
  const std::vector<Status> statuses = body.Run(frames, 2, testing::kOtherJpegStream);
  for (const Status& s : statuses) ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.launch_streams, std::vector<CUstream>(4, testing::kOtherJpegStream));
  const int first_kernel = body.fake.Find("kernel(");
  EXPECT_GT(first_kernel, body.fake.Find("nvjpegDecodeBatched("));
  EXPECT_GT(first_kernel, body.fake.Find("nvjpegDecode("));
  EXPECT_TRUE(body.fake.violations().empty())
      << ::testing::PrintToString(body.fake.violations());
}

TEST(DecodeJpegWarpedBodyTest, ABadJpegIsDataLossNamingItemAndFrameAndTheRestIsWarped) {
  Body body;
  std::vector<std::string> frames;
  for (int i = 0; i < 4; ++i) frames.push_back(EncodeJpeg(64, 48, JpegKind::k420, i));
  frames[3] = "\xFF\xD8 this is no JPEG";
  std::string truncated = EncodeJpeg(64, 48, JpegKind::k420, 9);
  truncated.resize(truncated.size() / 2);
  frames[1] = truncated;
  const std::vector<Status> statuses = body.Run(frames, 2);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].code(), StatusCode::kDataLoss);
  EXPECT_THAT(statuses[1].message(), HasSubstr("item 0 frame 1"));
  EXPECT_TRUE(statuses[2].ok());
  EXPECT_EQ(statuses[3].code(), StatusCode::kDataLoss);
  EXPECT_THAT(statuses[3].message(), HasSubstr("item 1 frame 1"));
  EXPECT_EQ(body.launches, 2);
  EXPECT_TRUE(body.on_host.empty());
}

TEST(DecodeJpegWarpedBodyTest, WhatNoGpuBackendTakesGoesToTheCpuCallback) {
  Body body;
  const std::vector<Status> statuses =
      body.Run({EncodeJpeg(64, 48, JpegKind::k420), EncodeJpeg(64, 48, JpegKind::kCmyk),
                EncodeJpeg(64, 48, JpegKind::k12Bit), EncodeJpeg(64, 48, JpegKind::k444)},
               2);
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.on_host, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(body.launches, 2);
}

TEST(DecodeJpegWarpedBodyTest, AFrameOfAnotherSizeInAClipIsInvalidArgument) {
  Body body;
  const std::vector<Status> statuses =
      body.Run({EncodeJpeg(64, 48, JpegKind::k420), EncodeJpeg(48, 64, JpegKind::k420)}, 2);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(statuses[1].message(), HasSubstr("item 0 frame 1"));
  EXPECT_EQ(body.launches, 1);
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
