// What decode_jpeg_warped's GPU kernel gives the body (cc/gpu/jpeg_warp_gpu.h):
// each picture's warp planned by PlanElementWarp from its own (seed, epoch,
// element), run through the body against the fake nvJPEG with the fused
// kernel's source on the host, against the CPU kernel's draw (fused_warp_args.cc:
// TransformMatrix keyed HashKey({seed, epoch, element})) and the CPU fused
// path's pixels; uint8 and float outputs; where nvJPEG is looked for.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels need the stand-in

#include "cc/gpu/jpeg_warp_gpu.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cc/gpu/testing/cpu_fused_jpeg.h"
#include "cc/gpu/testing/fake_nvjpeg.h"
#include "cc/gpu/testing/jpeg_reference.h"
#include "cc/gpu/testing/jpeg_samples.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace gpu {
namespace {

using testing::BytesOf;
using testing::EncodeJpeg;
using testing::JpegKind;
using testing::ReferenceSpec;

constexpr int kOutH = 20, kOutW = 28;
constexpr uint64_t kSeed = 5, kEpoch = 2;
const float kBias[3] = {10, 20, 30}, kNorm[3] = {0.5f, 0.25f, 2}, kOob[3] = {1, 2, 3};

JpegWarpOutput Output(bool u8) {
  JpegWarpOutput out;
  out.out_height = kOutH;
  out.out_width = kOutW;
  out.u8_output = u8;
  out.bias = kBias;
  out.norm = kNorm;
  out.oob_color = kOob;
  return out;
}

// The CPU kernel's draw for `element` (WarpTransformAttrs::Matrix).
void CpuMatrix(int64_t element, int width, int height, double m[9]) {
  warp::TransformMatrix(ReferenceSpec(), HashKey({kSeed, kEpoch, static_cast<uint64_t>(element)}),
                        height, width, kOutH, kOutW, m);
}

TEST(PlanElementWarpTest, IsTheCpuKernelsDrawForTheElement) {
  for (int64_t element : {0, 3, 12345}) {
    RegionWarp w;
    PlanElementWarp(ReferenceSpec(), kSeed, kEpoch, element, 97, 61, Output(false), &w);
    double m[9];
    CpuMatrix(element, 97, 61, m);
    for (int k = 0; k < 9; ++k) EXPECT_FLOAT_EQ(w.matrix[k], static_cast<float>(m[k])) << k;
    EXPECT_EQ(w.width, 97);
    EXPECT_EQ(w.height, 61);
    EXPECT_EQ(w.out_height, kOutH);
    EXPECT_EQ(w.out_width, kOutW);
    EXPECT_EQ(w.u8_output, 0);
    EXPECT_EQ(w.bias[1], kBias[1]);
    EXPECT_EQ(w.norm[2], kNorm[2]);
    EXPECT_EQ(w.oob_color[0], kOob[0]);
  }
  // uint8 output: levels, whatever bias and norm the attrs hold.
  RegionWarp u8;
  PlanElementWarp(ReferenceSpec(), kSeed, kEpoch, 3, 97, 61, Output(true), &u8);
  EXPECT_EQ(u8.u8_output, 1);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(u8.bias[c], 0.f);
    EXPECT_EQ(u8.norm[c], 1.f);
  }
}

// The body run as the op runs it: picture i planned for elements[i].
template <typename T>
std::vector<std::vector<T>> RunAsTheOp(const std::vector<std::string>& jpegs,
                                       const std::vector<int64_t>& elements, bool u8) {
  testing::FakeNvjpeg fake{
      {{"tfg_decode_warp_ycbcr", [](CUstream, void** args, const LaunchDims& d) {
          const auto picture = *static_cast<codec::YcbcrPicture*>(args[0]);
          const auto warp = *static_cast<RegionWarp*>(args[1]);
          void* dst = reinterpret_cast<void*>(*static_cast<CUdeviceptr*>(args[2]));
          testing::LaunchOnHost(d, [&] { tfg_decode_warp_ycbcr(picture, warp, dst); });
        }}}};
  NvjpegDecoder decoder{fake.api(), [](const std::string&) {}};
  EXPECT_TRUE(decoder.Init().ok());
  KernelModules modules{fake.cuda(), testing::kFakeJpegFatbin, sizeof(testing::kFakeJpegFatbin)};
  JpegWarpGpu gpu;
  gpu.cuda = fake.cuda();
  gpu.modules = &modules;
  gpu.decoder = &decoder;
  TaskThreads threads{1};
  std::vector<std::vector<unsigned char>> planes;
  std::vector<std::vector<T>> outputs(jpegs.size(), std::vector<T>(kOutH * kOutW * 3));
  auto batch = std::make_shared<JpegClipBatch>();
  for (size_t i = 0; i < jpegs.size(); ++i) {
    batch->frames.push_back({BytesOf(jpegs[i]), jpegs[i].size(), "picture " + std::to_string(i)});
  }
  batch->stream = testing::kJpegStream;
  batch->allocate = [&](size_t bytes, CUdeviceptr* p) {
    planes.emplace_back(bytes);
    *p = reinterpret_cast<CUdeviceptr>(planes.back().data());
    return Status::Ok();
  };
  batch->plan = [&](int64_t i, int width, int height, RegionWarp* w) {
    PlanElementWarp(ReferenceSpec(), kSeed, kEpoch, elements[i], width, height, Output(u8), w);
    return Status::Ok();
  };
  batch->dst = [&](int64_t i) { return reinterpret_cast<CUdeviceptr>(outputs[i].data()); };
  std::promise<std::vector<Status>> done;
  DecodeJpegWarpedBatch(&gpu, &threads, batch,
                        [&](std::vector<Status> s) { done.set_value(std::move(s)); });
  for (const Status& s : done.get_future().get()) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(fake.violations().empty()) << ::testing::PrintToString(fake.violations());
  return outputs;
}

// The CPU fused path for `element`.
template <typename T>
std::vector<T> CpuFused(const std::string& jpeg, int64_t element, bool u8) {
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  auto draw = [element](int width, int height, double m[9]) {
    CpuMatrix(element, width, height, m);
  };
  return testing::CpuFusedJpeg<T>(jpeg, draw, kOutH, kOutW, u8 ? zero : kBias, u8 ? one : kNorm,
                                  kOob);
}

template <typename T>
double WorstLevels(const std::vector<T>& a, const std::vector<T>& b, const float* norm) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / (norm ? norm[i % 3] : 1.f));
  }
  return worst;
}

TEST(PlanElementWarpTest, EachPictureGetsItsElementsCropThroughTheBody) {
  // Elements out of batch order, one repeated: picture i is keyed by elements[i], not by i.
  const std::vector<int64_t> elements = {9, 2, 9};
  std::vector<std::string> jpegs;
  for (int i = 0; i < 3; ++i) jpegs.push_back(EncodeJpeg(120, 90, JpegKind::k420, i == 2 ? 0 : i));
  const auto floats = RunAsTheOp<float>(jpegs, elements, false);
  const auto levels = RunAsTheOp<uint8_t>(jpegs, elements, true);
  for (size_t i = 0; i < jpegs.size(); ++i) {
    EXPECT_LE(WorstLevels(floats[i], CpuFused<float>(jpegs[i], elements[i], false), kNorm), 2.0)
        << "picture " << i;
    EXPECT_LE(WorstLevels(levels[i], CpuFused<uint8_t>(jpegs[i], elements[i], true), nullptr),
              2.0)
        << "picture " << i;
    // Another element's crop is far from it (the check can fail).
    EXPECT_GT(WorstLevels(levels[i], CpuFused<uint8_t>(jpegs[i], elements[i] + 1, true), nullptr),
              20.0)
        << "picture " << i;
  }
  EXPECT_EQ(levels[0], levels[2]);  // same bytes, same element: same crop
}

TEST(NvjpegSearchDirsTest, TheEnvironmentsDirectoryThenSitePackagesBesideTheLibrary) {
  EXPECT_THAT(NvjpegSearchDirs("/opt/nvjpeg", "/venv/lib/site-packages/tf_gulp/ops/lib.so"),
              ::testing::ElementsAre("/opt/nvjpeg", "/venv/lib/site-packages/nvidia/nvjpeg/lib"));
  EXPECT_THAT(NvjpegSearchDirs(nullptr, "/sp/tf_gulp/ops/lib.so"),
              ::testing::ElementsAre("/sp/nvidia/nvjpeg/lib"));
  EXPECT_THAT(NvjpegSearchDirs("", ""), ::testing::IsEmpty());
  EXPECT_THAT(NvjpegSearchDirs(nullptr, "ops/lib.so"), ::testing::IsEmpty());
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
