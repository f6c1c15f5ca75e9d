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

#include "cc/codec/jpeg_warp.h"
#include "cc/gpu/testing/fake_nvjpeg.h"
#include "cc/gpu/testing/jpeg_samples.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::BytesOf;
using testing::EncodeJpeg;
using testing::JpegKind;
using testing::kJpegStream;

const float kZero[3] = {0, 0, 0}, kOne[3] = {1, 1, 1}, kOob[3] = {7, 8, 9};
constexpr int kOutH = 24, kOutW = 32;
constexpr uint64_t kSeed = 11, kEpoch = 3;

warp::TransformSpec RandomCrops() {
  warp::TransformSpec spec;
  spec.kind = warp::TransformSpec::Kind::kSimilarity;
  spec.similarity.scale_lo = 0.2;
  spec.similarity.scale_hi = 0.9;
  spec.similarity.degrees_lo = -20;
  spec.similarity.degrees_hi = 20;
  spec.similarity.flip_h = 0.5;
  spec.similarity.translate_x = 0.1;
  spec.similarity.resize = true;
  spec.similarity.random_crop = true;
  return spec;
}

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
        }}}};
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
      PlanClipWarp(RandomCrops(), ClipKey(clip), width, height, kOutH, kOutW, kZero, kOne,
                   kOob, w);
      return Status::Ok();
    };
    batch->dst = [this](int64_t i) {
      return reinterpret_cast<CUdeviceptr>(outputs[i].data());
    };
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
// (TransformMatrix, same key), every pixel decoded (no DCT scaling: the GPU
// decodes at full size), accurate IDCT, smooth chroma upsampling.
std::vector<float> CpuFused(const std::string& jpeg, int64_t clip) {
  jpeg::ImageInfo info;
  EXPECT_TRUE(jpeg::ReadHeader(BytesOf(jpeg), jpeg.size(), &info).ok());
  double m[9];
  warp::TransformMatrix(RandomCrops(), ClipKey(clip), info.height, info.width, kOutH, kOutW, m);
  jpeg::WarpTarget target;
  target.out_height = kOutH;
  target.out_width = kOutW;
  target.dct_scaling = false;
  target.bias = kZero;
  target.norm = kOne;
  target.oob_color = kOob;
  jpeg::DecodeOptions options;
  options.fast_dct = false;
  std::vector<float> out(kOutH * kOutW * 3);
  const Status s = jpeg::DecodeWarped(BytesOf(jpeg), jpeg.size(), options, info, m, target,
                                      out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
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
