// NvdecRgbDecoder (decode_hevc's GPU path, TensorFlow-free) against the fake
// CUDA driver + NVDEC (testing/fake_nvdec.h), with the conversion kernel's
// launch recorded by a fake cuLaunchKernel that tells the fake which picture
// the kernel reads: decode -> allocate -> kernel -> event -> unmap after the
// event, one pool per GPU context, the picture released on every error path.
#include "cc/gpu/nvdec_rgb.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cc/gpu/testing/fake_kernels.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using testing::kOtherDeviceStream;
using testing::kStream;

// One launch of the conversion kernel, as the launcher packed it.
struct Launch {
  CUstream stream;
  codec::YcbcrPicture picture;
  int x0, y0, width, height, bilinear;
  CUdeviceptr dst;
  unsigned grid_x, grid_y, grid_z;
};

class NvdecRgbTest : public ::testing::Test {
 protected:
  NvdecRgbTest() {
    cuda_ = kernels_.cuda();
    NvdecPoolOptions options;
    options.sessions = 1;
    options.surfaces = 2;
    decoder_ = std::make_unique<NvdecRgbDecoder>(cuda_, fake_.nvdec(), testing::kFakeFatbin,
                                                 sizeof(testing::kFakeFatbin), options);
  }

  void Record(CUstream stream, void** args, const LaunchDims& d) {
    Launch l;
    l.stream = stream;
    l.picture = *static_cast<codec::YcbcrPicture*>(args[0]);
    l.x0 = *static_cast<int*>(args[1]);
    l.y0 = *static_cast<int*>(args[2]);
    l.width = *static_cast<int*>(args[3]);
    l.height = *static_cast<int*>(args[4]);
    l.bilinear = *static_cast<int*>(args[5]);
    l.dst = *static_cast<CUdeviceptr*>(args[6]);
    l.grid_x = d.grid_x;
    l.grid_y = d.grid_y;
    l.grid_z = d.grid_z;
    launches_.push_back(l);
  }

  Status Decode(int width, int height, const RgbAllocator& allocate, CUstream stream = kStream) {
    testing::FakeSample s;
    s.width = width;
    s.height = height;
    const std::vector<uint8_t> bytes = testing::FakeSampleBytes(s);
    return decoder_->Decode(bytes.data(), bytes.size(), /*bilinear_chroma=*/true, stream,
                            "sample 3", allocate);
  }

  void ExpectCleanEnd() {
    decoder_.reset();
    EXPECT_THAT(fake_.problems(), ::testing::IsEmpty());
  }

  int Count(const std::string& prefix) const { return fake_.Count(prefix); }

  testing::FakeNvdec fake_;
  std::vector<Launch> launches_;
  testing::FakeKernels kernels_{&fake_,
                       {{"tfg_ycbcr_to_rgb_u8",
                         [this](CUstream s, void** args, const LaunchDims& d) {
                           Record(s, args, d);
                         }}}};
  CudaApi cuda_;
  std::unique_ptr<NvdecRgbDecoder> decoder_;
};

RgbAllocator Crop(int x, int y, int w, int h, CUdeviceptr dst, std::vector<int>* seen = nullptr) {
  return [=](int width, int height, RgbRegion* region, CUdeviceptr* out) {
    if (seen != nullptr) *seen = {width, height};
    *region = {x, y, w, h};
    *out = dst;
    return Status::Ok();
  };
}

TEST_F(NvdecRgbTest, ConvertsOnTheStreamAndUnmapsOnlyAfterTheKernelsEvent) {
  std::vector<int> seen;
  ASSERT_TRUE(Decode(60, 45, Crop(2, 1, 50, 40, 0xABC000, &seen)).ok());
  EXPECT_EQ(seen, (std::vector<int>{60, 45})) << "the allocator gets the display size";
  ASSERT_EQ(launches_.size(), 1u);
  const auto& l = launches_[0];
  EXPECT_EQ(l.stream, kStream);
  EXPECT_EQ(l.dst, 0xABC000u);
  EXPECT_EQ(l.x0, 2);
  EXPECT_EQ(l.y0, 1);
  EXPECT_EQ(l.width, 50);
  EXPECT_EQ(l.height, 40);
  EXPECT_EQ(l.bilinear, 1);
  EXPECT_EQ(l.grid_x, 2u);  // 50 / 32 rounded up
  EXPECT_EQ(l.grid_y, 5u);  // 40 / 8
  EXPECT_EQ(l.grid_z, 1u);
  // NV12 as NVDEC maps it: chroma after the coded rows, Cb Cr interleaved.
  EXPECT_EQ(l.picture.width, 60);
  EXPECT_EQ(l.picture.height, 45);
  EXPECT_EQ(l.picture.y_stride, 256);
  EXPECT_EQ(l.picture.cb, l.picture.y + 256 * 48);
  EXPECT_EQ(l.picture.cr, l.picture.cb + 1);
  EXPECT_EQ(l.picture.chroma_step, 2);
  EXPECT_EQ(l.picture.chroma_width, 30);
  EXPECT_EQ(l.picture.chroma_height, 23);

  int record = -1;
  ASSERT_EQ(testing::KernelOrderProblem(fake_, &record), "");

  fake_.CompleteStream(kStream);
  ASSERT_TRUE(Decode(60, 45, Crop(0, 0, 60, 45, 0xABD000)).ok());
  EXPECT_GT(fake_.Find("cuvidUnmapVideoFrame"), record);
  EXPECT_EQ(kernels_.loads, 1) << "one module per context";
  EXPECT_EQ(Count("cuCtxPushCurrent"), Count("cuCtxPopCurrent"));
  fake_.CompleteStream(kStream);
  ExpectCleanEnd();
}

TEST_F(NvdecRgbTest, OnePoolPerGpuCreatedAtItsFirstPicture) {
  EXPECT_EQ(decoder_->pools(), 0);
  EXPECT_EQ(Count("cuvidGetDecoderCaps"), 0) << "nothing made before a picture";
  ASSERT_TRUE(Decode(64, 48, Crop(0, 0, 64, 48, 0x1000)).ok());
  ASSERT_TRUE(Decode(64, 48, Crop(0, 0, 64, 48, 0x2000)).ok());
  EXPECT_EQ(decoder_->pools(), 1);
  ASSERT_TRUE(Decode(64, 48, Crop(0, 0, 64, 48, 0x3000), kOtherDeviceStream).ok());
  EXPECT_EQ(decoder_->pools(), 2);
  EXPECT_EQ(kernels_.loads, 2) << "the kernels' module loaded in each context";
  fake_.CompleteStream(kStream);
  fake_.CompleteStream(kOtherDeviceStream);
  ExpectCleanEnd();
}

// decode_hevc_warped tells the decoder its batch's largest picture: pools made
// later and pools already made create their decoders at least that large.
TEST_F(NvdecRgbTest, RaiseMaxSizeReachesPoolsMadeBeforeAndAfter) {
  decoder_->RaiseMaxSize(300, 200);
  ASSERT_TRUE(Decode(64, 48, Crop(0, 0, 64, 48, 0x1000)).ok());
  EXPECT_GE(fake_.Find("cuvidCreateDecoder(size=64x48, max=304x208"), 0);
  fake_.CompleteStream(kStream);
  decoder_->RaiseMaxSize(600, 400);
  ASSERT_TRUE(Decode(500, 300, Crop(0, 0, 64, 48, 0x2000)).ok());  // past 304x208: a new decoder
  EXPECT_GE(fake_.Find("cuvidCreateDecoder(size=504x304, max=608x400"), 0);
  fake_.CompleteStream(kStream);
  ExpectCleanEnd();
}

// Both launchers over one loader (the op library's KernelModules::Embedded):
// one module per context for every kernel.
TEST_F(NvdecRgbTest, LaunchersSharingALoaderLoadTheFatbinOnce) {
  KernelModules modules(cuda_, testing::kFakeFatbin, sizeof(testing::kFakeFatbin));
  NvdecPoolOptions options;
  options.sessions = 1;
  NvdecRgbDecoder first(cuda_, fake_.nvdec(), &modules, options);
  NvdecRgbDecoder second(cuda_, fake_.nvdec(), &modules, options);
  CUfunction kernel = nullptr;
  ASSERT_TRUE(modules.Get(fake_.context(), "tfg_ycbcr_to_rgb_u8", &kernel).ok());
  for (NvdecRgbDecoder* d : {&first, &second}) {
    testing::FakeSample s;
    const std::vector<uint8_t> bytes = testing::FakeSampleBytes(s);
    ASSERT_TRUE(d->Decode(bytes.data(), bytes.size(), true, kStream, "sample 4",
                          Crop(0, 0, 64, 48, 0x3000)).ok());
    fake_.CompleteStream(kStream);
  }
  EXPECT_EQ(kernels_.loads, 1);
  EXPECT_EQ(modules.modules(), 1);
}

TEST_F(NvdecRgbTest, AllocationFailureReleasesThePictureAndLaunchesNothing) {
  const Status s = Decode(64, 48, [](int, int, RgbRegion*, CUdeviceptr*) {
    return InternalError("out of GPU memory");
  });
  EXPECT_THAT(s.message(), HasSubstr("out of GPU memory"));
  EXPECT_TRUE(launches_.empty());
  EXPECT_EQ(Count("cuvidMapVideoFrame"), 1);
  ExpectCleanEnd();  // unmapped by the pool's end at the latest, no leak
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

TEST_F(NvdecRgbTest, RegionOutsideThePictureIsAnErrorNamingTheSample) {
  const Status s = Decode(64, 48, Crop(10, 0, 60, 48, 0x1000));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("sample 3"));
  EXPECT_THAT(s.message(), HasSubstr("outside the decoded 64x48 picture"));
  EXPECT_TRUE(launches_.empty());
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

TEST_F(NvdecRgbTest, FailedLaunchIsAStatusAndReleasesThePicture) {
  kernels_.fail_launch = CUDA_ERROR_UNKNOWN;
  const Status s = Decode(64, 48, Crop(0, 0, 64, 48, 0x1000));
  EXPECT_THAT(s.message(), HasSubstr("cuLaunchKernel(tfg_ycbcr_to_rgb_u8) failed"));
  EXPECT_THAT(s.message(), HasSubstr("sample 3"));
  EXPECT_EQ(Count("cuCtxPushCurrent"), Count("cuCtxPopCurrent"));
  ExpectCleanEnd();
  EXPECT_EQ(Count("cuvidUnmapVideoFrame"), 1);
}

TEST_F(NvdecRgbTest, PictureOutsideNvdecLimitsIsOutOfRangeForTheCpuFallback) {
  fake_.max_size = 128;
  const Status s = Decode(200, 100, Crop(0, 0, 200, 100, 0x1000));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
  EXPECT_TRUE(launches_.empty());
  ExpectCleanEnd();
}

TEST_F(NvdecRgbTest, TenBitPictureIsOutOfRangeForTheCpuFallback) {
  testing::FakeSample s;
  s.bit_depth_minus8 = 2;
  const std::vector<uint8_t> bytes = testing::FakeSampleBytes(s);
  const Status status = decoder_->Decode(bytes.data(), bytes.size(), true, kStream, "sample 3",
                                         Crop(0, 0, 64, 48, 0x1000));
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange) << status.message();
  EXPECT_THAT(status.message(), HasSubstr("8-bit 4:2:0 HEVC only"));
  EXPECT_TRUE(launches_.empty());
  ExpectCleanEnd();
}

TEST_F(NvdecRgbTest, FailedStreamContextLookupIsAStatus) {
  const Status s = Decode(64, 48, Crop(0, 0, 64, 48, 0x1000),
                          reinterpret_cast<CUstream>(0x9999));
  EXPECT_THAT(s.message(), HasSubstr("cuStreamGetCtx failed"));
  EXPECT_EQ(decoder_->pools(), 0);
  ExpectCleanEnd();
}

// The colour the stream signals, read as the CPU decoder reads it
// (cc/codec/hevc_decoder.cc): BT.709 (1), BT.2020 (9, 10), else BT.601; the
// VUI's full-range flag.
TEST(YcbcrOfTest, MatrixAndRangeAsTheCpuDecoderReadsThem) {
  struct Case {
    int coefficients;
    bool full;
    codec::YcbcrStandard standard;
  };
  for (const Case c : {Case{1, true, codec::YcbcrStandard::kBt709},
                       Case{9, false, codec::YcbcrStandard::kBt2020},
                       Case{10, true, codec::YcbcrStandard::kBt2020},
                       Case{2, false, codec::YcbcrStandard::kBt601},
                       Case{6, true, codec::YcbcrStandard::kBt601}}) {
    NvdecPicture p;
    p.width = 5;
    p.height = 3;
    p.matrix_coefficients = c.coefficients;
    p.full_range = c.full;
    const codec::YcbcrMatrix got = YcbcrOf(p).matrix;
    const codec::YcbcrMatrix want = codec::MakeYcbcrMatrix(c.standard, c.full);
    EXPECT_EQ(got.y_offset, want.y_offset) << c.coefficients;
    EXPECT_EQ(got.y_scale, want.y_scale) << c.coefficients;
    EXPECT_EQ(got.r_cr, want.r_cr) << c.coefficients;
    EXPECT_EQ(got.b_cb, want.b_cb) << c.coefficients;
    EXPECT_EQ(YcbcrOf(p).chroma_width, 3);
    EXPECT_EQ(YcbcrOf(p).chroma_height, 2);
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
