// decode_hevc_warped's GPU body (DecodeWarpedBatch) against the fake CUDA
// driver + NVDEC, driven as the op drives it: a batch handed over on the
// caller's thread, done called back from the body's threads.
#include "cc/gpu/decode_hevc_warped_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "cc/gpu/color_plan.h"
#include "cc/gpu/testing/fake_kernels.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::kStream;

struct Body : testing::FakeDecoderRig {
  explicit Body(int sessions = 1, int surfaces = 2)
      : FakeDecoderRig(sessions, surfaces,
                       {{"tfg_color_levels", [this](CUstream, void** args, const LaunchDims&) {
                          // The plan's first factor, by output slot (the colour kernel itself:
                          // color_kernel_test).
                          std::lock_guard<std::mutex> lock(mu);
                          colored[*static_cast<CUdeviceptr*>(args[1])] =
                              static_cast<ColorPlan*>(args[0])->factors[0];
                        }}}) {}

  std::mutex mu;
  std::map<CUdeviceptr, float> colored;

  std::shared_ptr<WarpedBatch> Batch(const std::vector<std::pair<int, int>>& sizes) {
    auto batch = std::make_shared<WarpedBatch>();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::vector<uint8_t>& sample = Sample(sizes[i].first, sizes[i].second);
      batch->pictures.push_back({sample.data(), sample.size(), "picture " + std::to_string(i)});
    }
    batch->stream = kStream;
    batch->plan = [](int64_t i, int width, int height, RegionWarp* w, CUdeviceptr* dst) {
      w->width = width;
      w->height = height;
      w->out_height = w->out_width = 8;
      w->matrix[0] = w->matrix[4] = 1;
      *dst = 0x10000 + 0x1000 * i;
      return Status::Ok();
    };
    return batch;
  }

  // Runs the batch on `threads` as the op does; returns the statuses `done` got.
  std::vector<Status> RunAndWait(TaskThreads* threads, std::shared_ptr<WarpedBatch> batch) {
    std::promise<std::vector<Status>> result;
    DecodeWarpedBatch(decoder.get(), threads, std::move(batch),
                      [&](std::vector<Status> s) { result.set_value(std::move(s)); });
    return result.get_future().get();
  }
};

// Issue 44 item 3: the decoders are sized from the batch's largest coded
// picture (read from the SPS) before any picture is decoded, so a larger
// picture later in the batch only reconfigures.
TEST(DecodeHevcWarpedBodyTest, DecodersAreSizedForTheBatchsLargestCodedPictureFirst) {
  Body body(/*sessions=*/1);
  TaskThreads one(1);  // pictures in batch order: the small ones come first
  const auto statuses =
      body.RunAndWait(&one, body.Batch({{64, 48}, {60, 45}, {200, 150}, {64, 48}}));
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.fake.Count("cuvidCreateDecoder"), 1);
  EXPECT_GE(body.fake.Find("cuvidCreateDecoder(size=64x48, max=208x160"), 0)
      << "created at the batch's largest coded size (200x152, in whole macroblocks)";
  EXPECT_EQ(body.fake.Count("cuvidDestroyDecoder"), 0) << "no decoder re-created mid-batch";
  EXPECT_EQ(body.fake.Count("cuvidReconfigureDecoder"), 2);
  EXPECT_EQ(body.warp_launches.load(), 4);
  body.ExpectCleanEnd();
  EXPECT_EQ(body.fake.Count("cuvidDestroyDecoder"), 1) << "destroyed once, at the end";
}

TEST(DecodeHevcWarpedBodyTest, LargestCodedSizeIsTheSpssAndAnUnreadableSpsIsThePicturesError) {
  Body body;
  auto batch = body.Batch({{64, 48}, {100, 75}});
  const uint8_t no_sps[] = {0, 0, 1, 0x40, 0x01, 0x0c};
  batch->pictures.push_back({no_sps, sizeof(no_sps), "picture 2"});
  std::vector<Status> statuses;
  int w = 0, h = 0;
  LargestCodedSize(batch->pictures, &statuses, &w, &h);
  EXPECT_EQ(w, 104);
  EXPECT_EQ(h, 80);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[2].code(), StatusCode::kDataLoss);
  EXPECT_THAT(statuses[2].message(), HasSubstr("picture 2: no HEVC sequence parameter set"));
  TaskThreads two(2);
  const auto got = body.RunAndWait(&two, batch);
  EXPECT_TRUE(got[0].ok() && got[1].ok());
  EXPECT_EQ(got[2].code(), StatusCode::kDataLoss);
  EXPECT_EQ(body.warp_launches.load(), 2) << "the picture without an SPS is never decoded";
  body.ExpectCleanEnd();
}

// Issue 44 item 4: a decode that waits (here in the driver, for a kernel's
// event before its surface can be reused) holds one of the body's threads,
// never the caller's: the call returns at once and `done` comes from the body.
TEST(DecodeHevcWarpedBodyTest, DecodesWaitOnTheBodysThreadsNeverTheCallers) {
  Body body(/*sessions=*/1, /*surfaces=*/1);
  body.fake.blocking_waits = true;
  TaskThreads threads(2);
  std::promise<std::vector<Status>> result;
  // The second picture needs the first's surface, whose kernel has not run.
  auto batch = body.Batch({{64, 48}, {64, 48}});
  body.ExpectWaitsOffTheCallersThread([&](std::function<void()> on_done) {
    DecodeWarpedBatch(body.decoder.get(), &threads, batch,
                      [&result, on_done](std::vector<Status> s) {
                        on_done();
                        result.set_value(std::move(s));
                      });
  });
  const auto statuses = result.get_future().get();
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.message();
  body.ExpectCleanEnd();
}

// The op's error paths: a picture NVDEC cannot take goes to `on_host` (the
// op's CPU fallback) with the reason; a plan's error is the picture's; the
// others still decode; `done` once, statuses in batch order.
TEST(DecodeHevcWarpedBodyTest, PicturesNvdecCannotTakeGoToTheHostAndErrorsStayPerPicture) {
  Body body(/*sessions=*/2);
  body.fake.max_size = 128;
  auto batch = body.Batch({{64, 48}, {200, 100}, {64, 48}, {32, 32}});
  const auto plan = batch->plan;
  batch->plan = [plan](int64_t i, int w, int h, RegionWarp* warp, CUdeviceptr* dst) {
    if (i == 2) return InternalError("out of GPU memory for picture 2");
    return plan(i, w, h, warp, dst);
  };
  std::mutex mu;
  std::vector<int64_t> on_host;
  batch->on_host = [&](int64_t i, const Status& why) {
    EXPECT_EQ(why.code(), StatusCode::kOutOfRange) << why.message();
    std::lock_guard<std::mutex> lock(mu);
    on_host.push_back(i);
    return Status::Ok();
  };
  TaskThreads threads(4);
  std::atomic<int> calls{0};
  std::promise<std::vector<Status>> result;
  DecodeWarpedBatch(body.decoder.get(), &threads, batch, [&](std::vector<Status> s) {
    ++calls;
    result.set_value(std::move(s));
  });
  const auto statuses = result.get_future().get();
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_TRUE(statuses[1].ok()) << "decoded on the host";
  EXPECT_THAT(statuses[2].message(), HasSubstr("out of GPU memory for picture 2"));
  EXPECT_TRUE(statuses[3].ok());
  EXPECT_EQ(on_host, (std::vector<int64_t>{1}));
  EXPECT_EQ(body.warp_launches.load(), 2);
  EXPECT_EQ(calls.load(), 1);
  body.ExpectCleanEnd();
}

// Each picture's colour draw (the op draws them from the pictures' keys)
// reaches the colour kernel behind that picture's warp, in its slot.
TEST(DecodeHevcWarpedBodyTest, EachPicturesColourDrawIsLaunchedOnItsSlot) {
  Body body(/*sessions=*/2);
  auto batch = body.Batch({{64, 48}, {60, 45}, {64, 48}});
  for (int i = 0; i < 3; ++i) {
    warp::ColorDraw d;
    d.steps[d.count++] = {warp::ColorStep::Op::kBrightness, 1.f + 0.25f * i};
    batch->colors.push_back(d);
  }
  TaskThreads threads(3);
  for (const Status& s : body.RunAndWait(&threads, batch)) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(body.warp_launches.load(), 3);
  EXPECT_EQ(body.colored, (std::map<CUdeviceptr, float>{
                              {0x10000, 1.f}, {0x11000, 1.25f}, {0x12000, 1.5f}}));
  body.ExpectCleanEnd();
}

TEST(DecodeHevcWarpedBodyTest, ColourDrawsNotOnePerPictureAreInvalidArgument) {
  Body body;
  auto batch = body.Batch({{64, 48}, {64, 48}});
  batch->colors.resize(1);
  TaskThreads threads(1);
  for (const Status& s : body.RunAndWait(&threads, batch)) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("1 colour draws for 2 pictures"));
  }
  EXPECT_EQ(body.warp_launches.load(), 0);
  body.ExpectCleanEnd();
}

TEST(DecodeHevcWarpedBodyTest, AnEmptyBatchIsDoneAtOnce) {
  Body body;
  TaskThreads threads(1);
  const auto statuses = body.RunAndWait(&threads, body.Batch({}));
  EXPECT_TRUE(statuses.empty());
  body.ExpectCleanEnd();
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
