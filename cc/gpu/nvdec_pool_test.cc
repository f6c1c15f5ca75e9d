// The NVDEC decoder pool against a fake CUDA driver + NVDEC that records every
// call and notes every rule broken (testing/fake_nvdec.h): the order of the
// calls is checked by the fake's model of streams, events and surfaces, so a
// pool that unmaps early, decodes into a surface in use or reconfigures with
// pictures mapped fails these tests.
#include "cc/gpu/nvdec_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "cc/gpu/testing/eventually.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::Eventually;
using testing::FakeNvdec;
using testing::FakeSample;
using testing::FakeSampleBytes;

const CUstream kStream = reinterpret_cast<CUstream>(0x5001);

FakeSample Sample(int width, int height) {
  FakeSample s;
  s.width = width;
  s.height = height;
  return s;
}

Status DecodeSample(NvdecPool& pool, const FakeSample& sample, NvdecPicture* picture,
                    CUstream stream = kStream) {
  const std::vector<uint8_t> bytes = FakeSampleBytes(sample);
  return pool.Decode(bytes.data(), bytes.size(), stream, "sample 7", picture);
}

// A pool over the fake, made once the test has set the fake up, its pictures
// decoded from the fake's samples and released on kStream.
class NvdecPoolTest : public ::testing::Test {
 protected:
  void MakePool(int sessions = 1, int surfaces = 2, int max_size = 128) {
    NvdecPoolOptions options;
    options.sessions = sessions;
    options.surfaces = surfaces;
    options.max_width = options.max_height = max_size;
    const Status s =
        NvdecPool::Create(&fake.cuda(), &fake.nvdec(), fake.context(), options, &pool);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  Status DecodeSample(const FakeSample& sample, NvdecPicture* picture,
                      CUstream stream = kStream) {
    return gpu::DecodeSample(*pool, sample, picture, stream);
  }
  Status Decode(int width, int height, NvdecPicture* picture, CUstream stream = kStream) {
    return DecodeSample(Sample(width, height), picture, stream);
  }
  Status Release(const NvdecPicture& picture) { return pool->Release(picture, kStream); }
  // A picture decoded and handed back at once (no kernel reads it).
  Status DecodeAndRelease(int width, int height) {
    NvdecPicture picture;
    TFG_RETURN_IF_ERROR(Decode(width, height, &picture));
    return Release(picture);
  }
  // The pool destroyed (what a test ends with), then nothing left behind.
  void ExpectCleanEnd() {
    pool.reset();
    EXPECT_THAT(fake.problems(), ::testing::IsEmpty());
  }

  // A picture cuvidGetDecodeStatus reports as `status`: DataLoss naming the
  // sample, checked after mapping, unmapped at once, and the session goes on.
  void ExpectCorruptPictureIsDataLoss(int status) {
    MakePool();
    fake.corrupt_pictures = 1;
    fake.corrupt_status = status;
    NvdecPicture p;
    Status s = Decode(64, 48, &p);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.message();
    EXPECT_THAT(s.message(), HasSubstr("sample 7: NVDEC could not decode this picture"));
    const int map = fake.Find("cuvidMapVideoFrame");
    EXPECT_GT(fake.Find("cuvidGetDecodeStatus", map), map) << "checked after mapping";
    EXPECT_EQ(fake.live()["mapped"], 0);
    s = Decode(64, 48, &p);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(Release(p).ok());
    ExpectCleanEnd();
  }

  FakeNvdec fake;
  std::unique_ptr<NvdecPool> pool;
};

TEST_F(NvdecPoolTest, MapsOnTheCallersStreamAndUnmapsOnlyAfterTheKernelsEvent) {
  MakePool(1, 4);
  NvdecPicture a;
  ASSERT_TRUE(Decode(60, 45, &a).ok());
  EXPECT_EQ(a.width, 60);
  EXPECT_EQ(a.height, 45);
  EXPECT_EQ(a.pitch, 256u);
  EXPECT_EQ(a.surface_height, 48);  // coded height: the chroma plane starts after it
  EXPECT_EQ(a.chroma, a.luma + 256u * 48);
  EXPECT_GE(fake.Find("cuvidMapVideoFrame(decoder=1, surface=0, stream=20481)"), 0)
      << "mapped on the caller's stream";

  fake.LaunchKernel(kStream, a.luma);
  ASSERT_TRUE(Release(a).ok());
  // The kernel is still running: decoding the next picture must not unmap a.
  NvdecPicture b;
  ASSERT_TRUE(Decode(60, 45, &b).ok());
  EXPECT_EQ(fake.Count("cuvidUnmapVideoFrame"), 0);
  EXPECT_GE(fake.Find("cuEventQuery"), 0) << "completed pictures are looked for";

  fake.CompleteStream(kStream);  // the GPU got past the kernel
  NvdecPicture c;
  ASSERT_TRUE(Decode(60, 45, &c).ok());
  const int unmap = fake.Find("cuvidUnmapVideoFrame(decoder=1, surface=0)");
  EXPECT_GT(unmap, fake.Find("cuEventRecord")) << "unmapped once its event completed";
  EXPECT_EQ(fake.Count("cuvidCreateDecoder"), 1);
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 0);
  ExpectCleanEnd();
}

TEST_F(NvdecPoolTest, EveryNvdecCallHasTheContextPushed) {
  MakePool();
  ASSERT_TRUE(DecodeAndRelease(64, 64).ok());
  ExpectCleanEnd();  // the fake notes any NVDEC call made without a current context
  EXPECT_GT(fake.Count("cuCtxPushCurrent"), 0);
  EXPECT_EQ(fake.Count("cuCtxPushCurrent"), fake.Count("cuCtxPopCurrent"));
}

TEST_F(NvdecPoolTest, SizeChangesReconfigureAndLargerPicturesRecreate) {
  MakePool(1, 2, /*max_size=*/128);
  NvdecPicture p;
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  EXPECT_GE(fake.Find("cuvidCreateDecoder(size=64x48, max=128x128"), 0)
      << "created at the dataset's largest size";
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 0) << "same size: nothing to do";

  ASSERT_TRUE(Decode(100, 75, &p).ok());
  EXPECT_GE(fake.Find("cuvidReconfigureDecoder(decoder=1, size=104x80)"), 0);
  EXPECT_EQ(p.width, 100);
  EXPECT_EQ(p.surface_height, 80);
  ASSERT_TRUE(Release(p).ok());

  ASSERT_TRUE(Decode(200, 160, &p).ok());  // beyond the promised maximum
  EXPECT_GE(fake.Find("cuvidDestroyDecoder(decoder=1)"), 0);
  EXPECT_GE(fake.Find("cuvidCreateDecoder(size=200x160, max=200x160"), 0);
  EXPECT_EQ(fake.Count("cuvidCreateDecoder"), 2);
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 1);
  ASSERT_TRUE(Release(p).ok());
  ExpectCleanEnd();
}

// NVIDIA's sample rule: decode surfaces = max(requested, the stream's
// min_num_decode_surfaces), returned from the sequence callback; never a refusal.
TEST_F(NvdecPoolTest, DecodeSurfacesFollowTheStreamsMinimum) {
  fake.min_decode_surfaces = 5;  // more than the pool's 2
  MakePool();
  NvdecPicture first;
  ASSERT_TRUE(Decode(64, 48, &first).ok());
  ASSERT_GE(fake.Find("cuvidCreateDecoder(size=64x48, max=128x128, surfaces=5)"), 0)
      << "the decoder has the stream's 5 surfaces, not the pool's 2";
  ASSERT_TRUE(Release(first).ok());
  // Five pictures mapped at once, each in its own surface.
  std::vector<NvdecPicture> held(5);
  for (NvdecPicture& p : held) {
    const Status s = Decode(64, 48, &p);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  EXPECT_EQ(fake.Count("cuvidCreateDecoder"), 1);
  for (const NvdecPicture& p : held) ASSERT_TRUE(Release(p).ok());
  ExpectCleanEnd();  // "fewer surfaces than the stream needs" would be noted
}

// TensorFlow leaves little GPU memory beside its own; NVDEC's surfaces are the
// driver's: a decoder that does not fit is ResourceExhausted saying what to
// set and how much the pool needs, and the stated amount is enough.
TEST_F(NvdecPoolTest, ADecoderThatDoesNotFitIsResourceExhaustedSayingWhatToSet) {
  // (4 decode + 4 output surfaces) x 1024 x 1024 x 1.5 bytes = 12 MiB a session.
  ASSERT_EQ(NvdecSessionBytes(1024, 1024, 4), 12u << 20);
  NvdecPicture first, second;
  fake.device_memory = 12u << 20;  // one session's decoder fits, not two
  MakePool(2, 4, /*max_size=*/1024);
  ASSERT_TRUE(Decode(64, 48, &first).ok());
  const Status s = Decode(64, 48, &second);  // the second session
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("sample 7: cuvidCreateDecoder failed: "
                                     "CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_THAT(s.message(), HasSubstr("1024x1024 with 4 surfaces (about 12 MiB per decode "
                                     "session, 24 MiB for this GPU's 2 sessions"));
  EXPECT_THAT(s.message(), HasSubstr("tf.config.experimental.set_memory_growth(gpu, True)"));
  EXPECT_THAT(s.message(), HasSubstr("LogicalDeviceConfiguration(memory_limit="));
  ASSERT_TRUE(Release(first).ok());
  ExpectCleanEnd();
  // With the amount the message names left free (the first pool's decoders
  // gone), a new pool's two sessions' decoders fit.
  fake.device_memory = 24u << 20;
  const int created = fake.Count("cuvidCreateDecoder");
  MakePool(2, 4, /*max_size=*/1024);
  ASSERT_TRUE(Decode(64, 48, &first).ok());
  ASSERT_TRUE(Decode(64, 48, &second).ok());
  EXPECT_EQ(fake.Count("cuvidCreateDecoder") - created, 2);
  ASSERT_TRUE(Release(first).ok());
  ASSERT_TRUE(Release(second).ok());
  ExpectCleanEnd();
}

// A reconfigure the driver refuses falls back to destroy + create.
TEST_F(NvdecPoolTest, AFailedReconfigureFallsBackToDestroyAndCreate) {
  MakePool(1, 2, /*max_size=*/128);
  NvdecPicture p;
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  fake.FailCall("cuvidReconfigureDecoder", 1);
  const Status s = Decode(100, 75, &p);
  ASSERT_TRUE(s.ok()) << s.message();
  const int refused = fake.Find("cuvidReconfigureDecoder(decoder=1, size=104x80) -> failed");
  ASSERT_GE(refused, 0);
  EXPECT_GT(fake.Find("cuvidDestroyDecoder(decoder=1)", refused), refused);
  EXPECT_GT(fake.Find("cuvidCreateDecoder(size=104x80", refused), refused);
  EXPECT_EQ(p.width, 100);
  EXPECT_EQ(p.surface_height, 80);
  ASSERT_TRUE(Release(p).ok());
  ExpectCleanEnd();
}

TEST_F(NvdecPoolTest, ACorruptPictureIsDataLossNamingTheSample) {
  ExpectCorruptPictureIsDataLoss(cuvidDecodeStatus_Error);
}

// A picture whose errors the driver concealed is still wrong (NVIDIA's
// cuvidDecodeStatus_Error_Concealed): DataLoss as well, never warped.
TEST_F(NvdecPoolTest, AConcealedErrorIsDataLossToo) {
  ExpectCorruptPictureIsDataLoss(cuvidDecodeStatus_Error_Concealed);
}

// A later stream needing more decode surfaces than the decoder has: a new
// decoder with them (a reconfigure cannot add surfaces; the fake refuses and
// notes it, as the driver refuses).
TEST_F(NvdecPoolTest, MoreSurfacesThanTheDecoderHasRecreateIt) {
  MakePool(1, 2, /*max_size=*/128);
  NvdecPicture p;
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  ASSERT_GE(fake.Find("cuvidCreateDecoder(size=64x48, max=128x128, surfaces=2)"), 0);
  fake.min_decode_surfaces = 5;  // the next sequence's DPB needs 5
  const Status s = Decode(100, 75, &p);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GE(fake.Find("cuvidDestroyDecoder(decoder=1)"), 0);
  EXPECT_GE(fake.Find("cuvidCreateDecoder(size=104x80, max=128x128, surfaces=5)"), 0);
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 0) << "surfaces come only with a new decoder";
  // All five surfaces usable at once.
  std::vector<NvdecPicture> held(5);
  held[0] = p;
  for (size_t i = 1; i < held.size(); ++i) {
    const Status d = Decode(100, 75, &held[i]);
    ASSERT_TRUE(d.ok()) << d.message();
  }
  for (const NvdecPicture& h : held) ASSERT_TRUE(Release(h).ok());
  ExpectCleanEnd();
}

// Waits on the pool's events block the waiting thread rather than spin it
// (CU_EVENT_BLOCKING_SYNC): the fake notes a wait on any other event.
TEST_F(NvdecPoolTest, EventsAreCreatedForBlockingWaits) {
  MakePool(1, 1);
  NvdecPicture a, b;
  ASSERT_TRUE(Decode(64, 48, &a).ok());
  fake.LaunchKernel(kStream, a.luma);
  ASSERT_TRUE(Release(a).ok());
  ASSERT_TRUE(Decode(64, 48, &b).ok());  // waits on a's event
  EXPECT_GE(fake.Find("cuEventSynchronize"), 0);
  EXPECT_EQ(fake.Count("cuEventCreate(flags=" + std::to_string(CU_EVENT_DISABLE_TIMING |
                                                                CU_EVENT_BLOCKING_SYNC) + ")"),
            fake.Count("cuEventCreate("));
  ASSERT_TRUE(Release(b).ok());
  ExpectCleanEnd();  // "created without CU_EVENT_BLOCKING_SYNC" would be noted
}

// The decoders' maximum from the largest picture the caller knows of.
TEST_F(NvdecPoolTest, RaiseMaxSizeSizesTheDecodersSoSmallerPicturesReconfigure) {
  MakePool(1, 2, /*max_size=*/0);
  pool->RaiseMaxSize(300, 200);
  pool->RaiseMaxSize(100, 100);  // never lowers
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  EXPECT_GE(fake.Find("cuvidCreateDecoder(size=64x48, max=304x208"), 0)
      << "the hint in whole macroblocks";
  ASSERT_TRUE(DecodeAndRelease(300, 200).ok());
  EXPECT_EQ(fake.Count("cuvidCreateDecoder"), 1) << "within the maximum: reconfigured";
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 1);
  ExpectCleanEnd();
}

TEST_F(NvdecPoolTest, ReconfigureWaitsForThePicturesStillMapped) {
  MakePool();
  NvdecPicture held;
  ASSERT_TRUE(Decode(64, 48, &held).ok());
  fake.LaunchKernel(kStream, held.luma);
  auto other = std::async(std::launch::async, [&] {
    NvdecPicture p;
    Status s = Decode(32, 32, &p);
    if (s.ok()) s = Release(p);
    return s;
  });
  EXPECT_EQ(other.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(fake.Count("cuvidReconfigureDecoder"), 0);
  ASSERT_TRUE(Release(held).ok());
  const Status s = other.get();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(fake.Find("cuvidReconfigureDecoder"), fake.Find("cuvidUnmapVideoFrame"));
  ExpectCleanEnd();  // "decoder reconfigured with pictures mapped" would be noted
}

TEST_F(NvdecPoolTest, MorePicturesThanSurfacesWaitAndNeverOverwrite) {
  MakePool();
  NvdecPicture a, b;
  ASSERT_TRUE(Decode(64, 48, &a).ok());
  ASSERT_TRUE(Decode(64, 48, &b).ok());
  EXPECT_NE(a.surface, b.surface);
  fake.LaunchKernel(kStream, a.luma);
  fake.LaunchKernel(kStream, b.luma);
  NvdecPicture c;
  auto third = std::async(std::launch::async, [&] { return Decode(64, 48, &c); });
  EXPECT_EQ(third.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "both surfaces are the caller's: the third picture must wait";
  EXPECT_EQ(fake.Count("cuvidDecodePicture"), 2);
  ASSERT_TRUE(Release(a).ok());  // the kernel still runs: the event is waited for
  const Status s = third.get();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.surface, a.surface);
  const int unmap = fake.Find("cuvidUnmapVideoFrame(decoder=1, surface=" +
                              std::to_string(a.surface) + ")");
  ASSERT_GE(unmap, 0);
  EXPECT_GT(unmap, fake.Find("cuEventSynchronize")) << "after the kernel's event";
  EXPECT_GT(fake.Find("cuvidDecodePicture(decoder=1, surface=" + std::to_string(a.surface), unmap),
            unmap) << "the third picture is decoded into the surface only once it is unmapped";
  ASSERT_TRUE(Release(b).ok());
  ASSERT_TRUE(Release(c).ok());
  ExpectCleanEnd();  // "decoded into surface N while it is mapped" would be noted
}

TEST_F(NvdecPoolTest, SessionsDefaultToOnePerEngineAndShareTheWork) {
  fake.engines = 3;
  MakePool(/*sessions=*/0, 2);
  EXPECT_EQ(pool->sessions(), 3);
  std::vector<NvdecPicture> pictures(3);
  for (auto& p : pictures) ASSERT_TRUE(Decode(64, 48, &p).ok());
  EXPECT_EQ(pictures[0].session, 0);
  EXPECT_EQ(pictures[1].session, 1);
  EXPECT_EQ(pictures[2].session, 2);
  EXPECT_EQ(fake.Count("cuvidCreateDecoder"), 3);
  for (auto& p : pictures) ASSERT_TRUE(Release(p).ok());
  ExpectCleanEnd();
}

TEST_F(NvdecPoolTest, APictureHeldBackForDisplayIsFlushed) {
  MakePool();
  FakeSample sample = Sample(64, 48);
  sample.defer_display = true;
  NvdecPicture p;
  const Status s = DecodeSample(sample, &p);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GE(fake.Find("cuvidParseVideoData(parser="), 0);
  EXPECT_EQ(fake.Count("cuvidParseVideoData"), 2) << "the picture plus an end of stream";
  EXPECT_NE(fake.calls()[fake.Find("cuvidParseVideoData", fake.Find("cuvidParseVideoData") + 1)]
                .find("flags=1)"),
            std::string::npos)
      << "the second packet is CUVID_PKT_ENDOFSTREAM";
  ASSERT_TRUE(Release(p).ok());
  ExpectCleanEnd();
}

TEST_F(NvdecPoolTest, SamplesNvdecCannotTakeGiveClearErrorsAndTheSessionGoesOn) {
  fake.max_size = 1024;
  MakePool();
  NvdecPicture p;
  FakeSample ten_bit = Sample(64, 48);
  ten_bit.bit_depth_minus8 = 2;
  Status s = DecodeSample(ten_bit, &p);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("sample 7: NVDEC path decodes 8-bit 4:2:0 HEVC only"));
  EXPECT_THAT(s.message(), HasSubstr("decode it on the CPU"));

  s = Decode(2048, 64, &p);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("2048x64 picture is outside this GPU's NVDEC limits"));

  FakeSample two = Sample(64, 48);
  two.pictures = 2;
  s = DecodeSample(two, &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("found 2 pictures"));

  const uint8_t garbage[5] = {1, 2, 3, 4, 5};
  s = pool->Decode(garbage, sizeof(garbage), kStream, "sample 9", &p);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("sample 9: the NVDEC parser found 0 pictures"));

  s = Decode(64, 48, &p);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(Release(p).ok());
  EXPECT_EQ(Release(p).code(), StatusCode::kInvalidArgument) << "released twice";
  ExpectCleanEnd();
}

// Shutdown while a decode is blocked in the driver on a released picture's
// event (its kernel still running) and another picture is still the
// caller's: Shutdown waits for the decode in progress, which finishes once the
// GPU gets past the kernel; then every picture is unmapped after the work
// reading it, and later decodes are refused. One outcome, reached by
// synchronising on the driver's wait, not on time.
TEST_F(NvdecPoolTest, ShutdownWithPicturesInFlightIsClean) {
  fake.blocking_waits = true;
  MakePool();
  NvdecPicture released, held;
  ASSERT_TRUE(Decode(64, 48, &released).ok());  // surface 0
  ASSERT_TRUE(Decode(64, 48, &held).ok());      // surface 1
  fake.LaunchKernel(kStream, released.luma);  // released, its kernel still running
  fake.LaunchKernel(kStream, held.luma);      // never released by the caller
  ASSERT_TRUE(Release(released).ok());
  // The next picture goes to surface 0: its decode waits in cuEventSynchronize.
  const CUstream other_stream = reinterpret_cast<CUstream>(0x5002);
  NvdecPicture p;
  auto decoding = std::async(std::launch::async, [&] {
    return Decode(64, 48, &p, other_stream);
  });
  ASSERT_TRUE(Eventually([&] { return fake.waiting() == 1; })) << "the decode never waited";
  ASSERT_GE(fake.Find("cuEventSynchronize"), 0);
  auto shutting = std::async(std::launch::async, [&] { return pool->Shutdown(); });
  // A decode asked for now waits for the busy session until the shutdown has
  // begun, then is refused: from then on the shutdown is under way.
  NvdecPicture refused;
  const Status late = Decode(64, 48, &refused);
  EXPECT_EQ(late.code(), StatusCode::kUnavailable);
  EXPECT_THAT(late.message(), HasSubstr("shut down"));
  EXPECT_EQ(shutting.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the shutdown waits for the decode in progress";
  fake.CompleteStream(kStream);  // the GPU gets past both kernels
  const Status decoded = decoding.get();
  ASSERT_TRUE(decoded.ok()) << decoded.message();
  EXPECT_EQ(p.surface, 0);
  // Both pictures are now the caller's and never released; the new one's map
  // is queued on the other stream, which has not run: the shutdown waits for
  // the whole context before unmapping them.
  ASSERT_TRUE(Eventually([&] { return fake.waiting() == 1; })) << "no wait for the context";
  EXPECT_GE(fake.Find("cuCtxSynchronize"), 0);
  EXPECT_EQ(fake.live()["mapped"], 2) << "nothing unmapped before the context finished";
  fake.CompleteStream(other_stream);
  const Status shut = shutting.get();
  EXPECT_TRUE(shut.ok()) << shut.message();
  EXPECT_EQ(Decode(64, 48, &p).code(), StatusCode::kUnavailable);
  ExpectCleanEnd();  // unmapping before the kernels finished would be noted
}

TEST_F(NvdecPoolTest, ADecodeWaitingForTheCallersPictureEndsAtShutdown) {
  MakePool(1, 1);
  NvdecPicture held;
  ASSERT_TRUE(Decode(64, 48, &held).ok());
  NvdecPicture p;
  const int parsed = fake.Count("cuvidParseVideoData");
  auto waiting = std::async(std::launch::async, [&] { return Decode(64, 48, &p); });
  // Shut down once the decode is parsing its picture (its surface is held, so it then waits):
  // waited for as a state, with a generous limit, not for a time.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (fake.Count("cuvidParseVideoData") == parsed &&
         std::chrono::steady_clock::now() < limit) {
    std::this_thread::yield();
  }
  ASSERT_GT(fake.Count("cuvidParseVideoData"), parsed) << "the second decode never started";
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_TRUE(pool->Shutdown().ok());
  const Status s = waiting.get();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("sample 7: the NVDEC decoder pool was shut down while "
                                     "waiting for a free surface"));
  ExpectCleanEnd();
}

// A caller's life: create, decode at three sizes (reconfigure, recreate),
// release, keep one picture, shut down. Returns the first error;
// `in_shutdown` says whether it came from Shutdown.
Status Scenario(FakeNvdec& fake, bool* in_shutdown = nullptr) {
  NvdecPoolOptions options;
  options.sessions = 2;
  options.surfaces = 2;
  options.max_width = options.max_height = 128;
  std::unique_ptr<NvdecPool> pool;
  TFG_RETURN_IF_ERROR(NvdecPool::Create(&fake.cuda(), &fake.nvdec(), fake.context(), options,
                                        &pool));
  Status first;
  auto run = [&]() -> Status {
    for (const FakeSample& sample : {Sample(64, 48), Sample(64, 48), Sample(100, 75),
                                     Sample(100, 75), Sample(200, 160)}) {
      NvdecPicture p;
      TFG_RETURN_IF_ERROR(DecodeSample(*pool, sample, &p));
      fake.LaunchKernel(kStream, p.luma);
      TFG_RETURN_IF_ERROR(pool->Release(p, kStream));
    }
    NvdecPicture kept;
    return DecodeSample(*pool, Sample(64, 48), &kept);  // still mapped at shutdown
  };
  first = run();
  const Status shut = pool->Shutdown();
  if (in_shutdown) *in_shutdown = first.ok() && !shut.ok();
  if (first.ok()) first = shut;
  return first;
}

TEST(NvdecPoolFailuresTest, EveryFailingCallIsAClearStatusAndLeaksNothing) {
  std::map<std::string, int> counts;
  {
    FakeNvdec fake;
    const Status s = Scenario(fake);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_THAT(fake.problems(), ::testing::IsEmpty());
    for (const std::string& name : fake.call_names()) counts[name] = fake.Count(name + "(");
  }
  // Every call the scenario makes, and at least these, each failed at each of its occurrences.
  for (const char* name : {"cuvidGetDecoderCaps", "cuEventCreate", "cuvidCreateVideoParser",
                           "cuvidParseVideoData", "cuvidCreateDecoder", "cuvidReconfigureDecoder",
                           "cuvidDecodePicture", "cuvidMapVideoFrame", "cuEventRecord",
                           "cuEventSynchronize", "cuvidUnmapVideoFrame", "cuvidDestroyDecoder",
                           "cuEventDestroy", "cuCtxPushCurrent", "cuCtxSynchronize",
                           "cuEventQuery", "cuvidGetDecodeStatus"}) {
    EXPECT_GT(counts[name], 0) << name << " is not exercised by the scenario";
  }
  int cases = 0;
  for (const auto& [name, count] : counts) {
    // Nothing can be done about these failing, and nothing is lost: popping a
    // context we pushed, destroying a parser (host memory only).
    if (name == "cuCtxPopCurrent" || name == "cuvidDestroyVideoParser") continue;
    // A refused reconfigure is no error: destroy + create (tested above).
    if (name == "cuvidReconfigureDecoder") continue;
    for (int nth = 1; nth <= count; ++nth) {
      SCOPED_TRACE(name + " failing at call " + std::to_string(nth));
      FakeNvdec fake;
      fake.FailCall(name, nth);
      bool in_shutdown = false;
      const Status s = Scenario(fake, &in_shutdown);
      ++cases;
      ASSERT_FALSE(s.ok());
      EXPECT_THAT(s.message(), HasSubstr(name + " failed"));
      EXPECT_THAT(s.message(), HasSubstr("CUDA_ERROR_UNKNOWN"));
      EXPECT_THAT(fake.violations(), ::testing::IsEmpty());
      auto live = fake.live();
      if (name == "cuCtxPushCurrent" && in_shutdown) {
        // The context could not be made current to clean up: a context that
        // cannot be pushed is gone, and with it what was created in it.
        continue;
      }
      for (const auto& [what, n] : live) EXPECT_EQ(n, 0) << what << " leaked";
    }
  }
  EXPECT_GT(cases, 40);
}

// The profile counters (NvdecPool::Stats) count each call where it happens:
// a create, accepted and refused reconfigures (a refused one followed by a
// destroy + create), the drains before them, an end-of-stream flush, the maps
// and the session waits.
TEST_F(NvdecPoolTest, StatsCountEveryCallWhereItHappens) {
  MakePool(1, 2, /*max_size=*/128);
  auto calls = [&](NvdecPoolCall c) { return pool->Stats()[c].calls; };
  NvdecPicture p;
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  EXPECT_EQ(calls(NvdecPoolCall::kCreate), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kMap), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kSessionWait), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kDrain), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kReconfigure), 0u);
  const NvdecPoolStats before = pool->Stats();
  ASSERT_TRUE(DecodeAndRelease(96, 64).ok());  // within 128: reconfigured
  ASSERT_TRUE(DecodeAndRelease(96, 64).ok());  // same size: nothing
  const NvdecPoolStats step = pool->Stats().Since(before);
  EXPECT_EQ(step[NvdecPoolCall::kReconfigure].calls, 1u);
  EXPECT_EQ(step[NvdecPoolCall::kDrain].calls, 1u);
  EXPECT_EQ(step[NvdecPoolCall::kCreate].calls, 0u);
  EXPECT_EQ(step[NvdecPoolCall::kDestroy].calls, 0u);
  EXPECT_EQ(step[NvdecPoolCall::kMap].calls, 2u);
  EXPECT_EQ(step[NvdecPoolCall::kEndOfStreamFlush].calls, 0u);
  fake.FailCall("cuvidReconfigureDecoder", 1);
  ASSERT_TRUE(DecodeAndRelease(64, 48).ok());
  EXPECT_EQ(calls(NvdecPoolCall::kReconfigureRefused), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kReconfigure), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kDestroy), 1u);
  EXPECT_EQ(calls(NvdecPoolCall::kCreate), 2u);
  FakeSample deferred = Sample(64, 48);
  deferred.defer_display = true;
  ASSERT_TRUE(DecodeSample(deferred, &p).ok());
  ASSERT_TRUE(Release(p).ok());
  EXPECT_EQ(calls(NvdecPoolCall::kEndOfStreamFlush), 1u);
  EXPECT_STREQ(NvdecPoolCallName(NvdecPoolCall::kSessionWait), "session_wait");
  ExpectCleanEnd();
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
