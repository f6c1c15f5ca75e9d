// decode_hevc's GPU body (DecodeHevcRgb) against the fake CUDA driver +
// NVDEC, driven as the op drives it: one picture per call, handed over on the
// caller's thread, done called back from the body's threads.
#include "cc/gpu/decode_hevc_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "cc/gpu/testing/fake_kernels.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::kStream;

struct Body : testing::FakeDecoderRig {
  using FakeDecoderRig::FakeDecoderRig;

  std::shared_ptr<RgbPicture> Picture(int width, int height) {
    const std::vector<uint8_t>& sample = Sample(width, height);
    auto p = std::make_shared<RgbPicture>();
    p->data = sample.data();
    p->size = sample.size();
    p->what = "picture " + std::to_string(bytes.size() - 1);
    p->stream = kStream;
    p->allocate = [](int w, int h, RgbRegion* region, CUdeviceptr* dst) {
      *region = {0, 0, w, h};
      *dst = 0x10000;
      return Status::Ok();
    };
    return p;
  }

  Status RunAndWait(TaskThreads* threads, std::shared_ptr<RgbPicture> picture) {
    std::promise<Status> result;
    DecodeHevcRgb(decoder.get(), threads, std::move(picture),
                  [&](Status s) { result.set_value(std::move(s)); });
    return result.get_future().get();
  }
};

// Issue 44 item 3: decode_hevc sizes the decoders from each picture's coded
// size (its SPS) before decoding it, so a session whose decoder is created
// after a larger picture was seen reconfigures for that size later.
TEST(DecodeHevcBodyTest, DecodersCreatedLaterAreSizedForTheLargestPictureSeen) {
  Body body(/*sessions=*/2);
  TaskThreads threads(1);
  // Sessions in turn: large (0), small (1), large (0), large (1).
  for (const auto& [w, h] : {std::pair{200, 150}, {64, 48}, {200, 150}, {200, 150}}) {
    const Status s = body.RunAndWait(&threads, body.Picture(w, h));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(body.fake.Count("cuvidCreateDecoder"), 2);
  EXPECT_GE(body.fake.Find("cuvidCreateDecoder(size=64x48, max=208x160"), 0)
      << "session 1's decoder created at the largest coded size seen";
  EXPECT_EQ(body.fake.Count("cuvidDestroyDecoder"), 0) << "no decoder re-created";
  EXPECT_EQ(body.fake.Count("cuvidReconfigureDecoder"), 1);
  EXPECT_EQ(body.rgb_launches.load(), 4);
  body.ExpectCleanEnd();
}

// Issue 44 item 3: a caller that knows its batch's largest coded size sizes
// every decoder for it before the first picture: a larger picture later in
// the batch neither re-creates nor reconfigures a decoder.
TEST(DecodeHevcBodyTest, DecodersAreSizedForTheCallersBatchBeforeItsFirstPicture) {
  Body body(/*sessions=*/1);
  TaskThreads threads(1);
  for (const auto& [w, h] : {std::pair{64, 48}, {200, 150}}) {
    auto picture = body.Picture(w, h);
    picture->max_width = 208;  // the batch's largest coded size (200x150 coded 208x160)
    picture->max_height = 160;
    const Status s = body.RunAndWait(&threads, picture);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(body.fake.Count("cuvidCreateDecoder"), 1);
  EXPECT_GE(body.fake.Find("cuvidCreateDecoder(size=64x48, max=208x160"), 0)
      << "the decoder created for the batch's largest picture";
  EXPECT_EQ(body.fake.Count("cuvidDestroyDecoder"), 0) << "no decoder re-created";
  body.ExpectCleanEnd();
}

// Issue 44 item 4: the decode waits on the body's threads, never the caller's.
TEST(DecodeHevcBodyTest, TheDecodeWaitsOnTheBodysThreadsNeverTheCallers) {
  Body body(/*sessions=*/1, /*surfaces=*/1);
  body.fake.blocking_waits = true;
  TaskThreads threads(1);
  ASSERT_TRUE(body.RunAndWait(&threads, body.Picture(64, 48)).ok());  // its kernel never ran
  auto picture = body.Picture(64, 48);
  body.ExpectWaitsOffTheCallersThread([&](std::function<void()> on_done) {
    DecodeHevcRgb(body.decoder.get(), &threads, picture, [on_done](Status s) {
      EXPECT_TRUE(s.ok()) << s.message();
      on_done();
    });
  });
  body.ExpectCleanEnd();
}

TEST(DecodeHevcBodyTest, FallbackAndErrorsReachDoneOnce) {
  Body body;
  body.fake.max_size = 128;
  TaskThreads threads(1);
  auto large = body.Picture(200, 100);
  Status why;
  large->on_host = [&](const Status& s) {
    why = s;
    return Status::Ok();
  };
  EXPECT_TRUE(body.RunAndWait(&threads, large).ok()) << "decoded on the host";
  EXPECT_EQ(why.code(), StatusCode::kOutOfRange) << why.message();
  auto failing = body.Picture(64, 48);
  failing->allocate = [](int, int, RgbRegion*, CUdeviceptr*) {
    return InternalError("no memory for the output");
  };
  const Status s = body.RunAndWait(&threads, failing);
  EXPECT_THAT(s.message(), HasSubstr("no memory for the output"));
  auto no_sps = std::make_shared<RgbPicture>(*body.Picture(64, 48));
  no_sps->size = 3;  // cut inside the SPS's start code: no SPS, no picture
  const Status bad = body.RunAndWait(&threads, no_sps);
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss);
  EXPECT_THAT(bad.message(), HasSubstr("no HEVC sequence parameter set"));
  EXPECT_EQ(body.rgb_launches.load(), 0);
  body.ExpectCleanEnd();
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
