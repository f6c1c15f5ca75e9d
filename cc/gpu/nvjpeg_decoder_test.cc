// NvjpegDecoder and the nvJPEG loader against the fake nvJPEG
// (testing/fake_nvjpeg.h): routing per picture (hardware, CUDA backend, CPU),
// nvJPEG's batched-API rules, error codes and the reasons logged once.
#include "cc/gpu/nvjpeg_decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cc/gpu/nvjpeg_loader.h"
#include "cc/gpu/testing/fake_nvjpeg.h"
#include "cc/gpu/testing/jpeg_samples.h"

namespace tfg {
namespace gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::EncodeJpeg;
using testing::JpegKind;
using testing::kJpegStream;

struct JpegRun {
  testing::FakeNvjpeg fake;
  std::vector<std::string> logged;
  std::unique_ptr<NvjpegDecoder> decoder;
  std::vector<std::string> jpegs;
  std::vector<std::vector<unsigned char>> memory;  // the planes' "device" memory
  std::vector<DecodedJpeg> out;
  std::vector<Status> statuses;

  explicit JpegRun(bool hardware = true) {
    fake.hardware = hardware;
    decoder = std::make_unique<NvjpegDecoder>(
        fake.api(), [this](const std::string& line) { logged.push_back(line); });
  }
  void Decode(const std::vector<std::string>& batch) {
    jpegs = batch;
    std::vector<JpegInput> inputs;
    for (size_t i = 0; i < jpegs.size(); ++i) {
      inputs.push_back({testing::BytesOf(jpegs[i]), jpegs[i].size(),
                        "item " + std::to_string(i) + " frame 0"});
    }
    decoder->DecodeBatch(inputs, kJpegStream,
                         [this](size_t bytes, CUdeviceptr* p) {
                           memory.emplace_back(bytes);
                           *p = reinterpret_cast<CUdeviceptr>(memory.back().data());
                           return Status::Ok();
                         },
                         &out, &statuses);
  }
  std::vector<std::string> Routes() const {
    std::vector<std::string> r;
    for (const auto& d : out) r.push_back(JpegRouteName(d.route));
    return r;
  }
};

TEST(NvjpegDecoderTest, BaselinePicturesGoToTheHardwareInOneBatchedCall) {
  JpegRun run;
  ASSERT_TRUE(run.decoder->Init().ok());
  EXPECT_TRUE(run.decoder->has_hardware());
  run.Decode({EncodeJpeg(64, 48, JpegKind::k420), EncodeJpeg(33, 17, JpegKind::k422),
              EncodeJpeg(40, 40, JpegKind::k444), EncodeJpeg(31, 29, JpegKind::kGray)});
  for (const Status& s : run.statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(run.Routes(), ElementsAre("hardware", "hardware", "hardware", "hardware"));
  EXPECT_EQ(run.fake.Count("nvjpegDecodeBatched("), 1);
  EXPECT_EQ(run.fake.Count("nvjpegDecode("), 0);
  EXPECT_THAT(run.fake.calls()[run.fake.Find("nvjpegDecodeBatchedInitialize")],
              HasSubstr("batch=4"));
  // The planes as the kernels read them.
  const codec::YcbcrPicture& p420 = run.out[0].planes;
  EXPECT_EQ(p420.shift_x, 1);
  EXPECT_EQ(p420.shift_y, 1);
  EXPECT_EQ(p420.chroma_width, 32);
  EXPECT_EQ(p420.chroma_height, 24);
  EXPECT_EQ(p420.cb, p420.y + 64 * 48);
  EXPECT_EQ(p420.cr, p420.cb + 32 * 24);
  const codec::YcbcrPicture& p422 = run.out[1].planes;
  EXPECT_EQ(p422.shift_x, 1);
  EXPECT_EQ(p422.shift_y, 0);
  EXPECT_EQ(p422.chroma_width, 17);  // ceil(33 / 2)
  EXPECT_EQ(run.out[2].planes.shift_x, 0);
  EXPECT_EQ(run.out[3].planes.cb, nullptr);  // gray
  EXPECT_EQ(run.out[3].width, 31);
  EXPECT_TRUE(run.logged.empty());
  run.decoder.reset();
  EXPECT_TRUE(run.fake.problems().empty()) << ::testing::PrintToString(run.fake.problems());
}

TEST(NvjpegDecoderTest, WhatTheHardwareRefusesGoesToTheCudaBackendOrTheCpuLoggedOnce) {
  JpegRun run;
  ASSERT_TRUE(run.decoder->Init().ok());
  run.Decode({EncodeJpeg(64, 48, JpegKind::kProgressive420), EncodeJpeg(64, 48, JpegKind::kCmyk),
              EncodeJpeg(64, 48, JpegKind::k12Bit), EncodeJpeg(64, 48, JpegKind::kArithmetic),
              EncodeJpeg(64, 48, JpegKind::kProgressive420, 3),
              EncodeJpeg(64, 48, JpegKind::k420)});
  EXPECT_THAT(run.Routes(), ElementsAre("cuda", "cpu", "cpu", "cpu", "cuda", "hardware"));
  EXPECT_TRUE(run.statuses[0].ok()) << run.statuses[0].message();
  EXPECT_TRUE(run.statuses[4].ok()) << run.statuses[4].message();
  EXPECT_TRUE(run.statuses[5].ok()) << run.statuses[5].message();
  for (int i : {1, 2, 3}) {
    EXPECT_EQ(run.statuses[i].code(), StatusCode::kOutOfRange) << i;
    EXPECT_THAT(run.statuses[i].message(), HasSubstr("item " + std::to_string(i)));
  }
  EXPECT_THAT(run.statuses[1].message(), HasSubstr("CMYK"));
  EXPECT_THAT(run.statuses[2].message(), HasSubstr("12-bit"));
  EXPECT_EQ(run.fake.Count("nvjpegDecode("), 2);  // the progressive ones
  EXPECT_THAT(run.fake.calls()[run.fake.Find("nvjpegDecodeBatchedInitialize")],
              HasSubstr("batch=1"));
  // One line per reason, however many pictures had it.
  EXPECT_EQ(run.logged.size(), 4u) << ::testing::PrintToString(run.logged);
  EXPECT_THAT(run.logged[0], HasSubstr("progressive"));
  run.Decode({EncodeJpeg(64, 48, JpegKind::kProgressive420)});
  EXPECT_EQ(run.logged.size(), 4u);
  run.decoder.reset();
  EXPECT_TRUE(run.fake.problems().empty()) << ::testing::PrintToString(run.fake.problems());
}

TEST(NvjpegDecoderTest, NotAJpegIsDataLossNamingThePictureAndTheBatchGoesOn) {
  JpegRun run;
  ASSERT_TRUE(run.decoder->Init().ok());
  run.Decode({EncodeJpeg(64, 48, JpegKind::k420), "not a jpeg at all",
              EncodeJpeg(64, 48, JpegKind::k420, 1)});
  EXPECT_TRUE(run.statuses[0].ok());
  EXPECT_EQ(run.statuses[1].code(), StatusCode::kDataLoss);
  EXPECT_THAT(run.statuses[1].message(), HasSubstr("item 1 frame 0"));
  EXPECT_THAT(run.statuses[1].message(), HasSubstr("NVJPEG_STATUS_BAD_JPEG"));
  EXPECT_TRUE(run.statuses[2].ok());
  EXPECT_THAT(run.fake.calls()[run.fake.Find("nvjpegDecodeBatched(")], HasSubstr("batch=2"));
}

TEST(NvjpegDecoderTest, AFailedHardwareBatchIsRetriedPerPictureAndNamesTheDamagedOne) {
  JpegRun run;
  ASSERT_TRUE(run.decoder->Init().ok());
  std::string damaged = EncodeJpeg(64, 48, JpegKind::k420);
  damaged.resize(damaged.size() / 2);  // the header reads, the scan ends early
  run.Decode({EncodeJpeg(64, 48, JpegKind::k420), damaged, EncodeJpeg(64, 48, JpegKind::k420)});
  EXPECT_TRUE(run.statuses[0].ok()) << run.statuses[0].message();
  EXPECT_EQ(run.statuses[1].code(), StatusCode::kDataLoss);
  EXPECT_THAT(run.statuses[1].message(), HasSubstr("item 1 frame 0"));
  EXPECT_TRUE(run.statuses[2].ok()) << run.statuses[2].message();
  EXPECT_EQ(run.fake.Count("nvjpegDecode("), 3);
  ASSERT_EQ(run.logged.size(), 1u);
  EXPECT_THAT(run.logged[0], HasSubstr("a hardware batch failed (NVJPEG_STATUS_BAD_JPEG)"));
  // The same batch size again: the failed batch reset the state, so the
  // decoder must initialize it again (the fake notes it otherwise).
  run.Decode({EncodeJpeg(64, 48, JpegKind::k420), EncodeJpeg(64, 48, JpegKind::k420, 1),
              EncodeJpeg(64, 48, JpegKind::k420, 2)});
  for (const Status& s : run.statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(run.fake.violations().empty())
      << ::testing::PrintToString(run.fake.violations());
}

TEST(NvjpegDecoderTest, TheBatchIsInitializedOnlyWhenItsSizeChanges) {
  JpegRun run;
  ASSERT_TRUE(run.decoder->Init().ok());
  const std::string a = EncodeJpeg(64, 48, JpegKind::k420);
  run.Decode({a, a});
  run.Decode({a, a});
  EXPECT_EQ(run.fake.Count("nvjpegDecodeBatchedInitialize"), 1);
  run.Decode({a, a, a});
  EXPECT_EQ(run.fake.Count("nvjpegDecodeBatchedInitialize"), 2);
  for (const Status& s : run.statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(run.fake.violations().empty())
      << ::testing::PrintToString(run.fake.violations());
}

TEST(NvjpegDecoderTest, AGpuWithoutJpegEnginesDecodesEverythingOnTheCudaBackend) {
  JpegRun run(/*hardware=*/false);
  ASSERT_TRUE(run.decoder->Init().ok());
  EXPECT_FALSE(run.decoder->has_hardware());
  run.Decode({EncodeJpeg(64, 48, JpegKind::k420), EncodeJpeg(64, 48, JpegKind::kGray)});
  EXPECT_THAT(run.Routes(), ElementsAre("cuda", "cuda"));
  for (const Status& s : run.statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(run.fake.Count("nvjpegDecodeBatched("), 0);
  ASSERT_EQ(run.logged.size(), 1u);
  EXPECT_THAT(run.logged[0], HasSubstr("NVJPEG_STATUS_ARCH_MISMATCH"));
  run.decoder.reset();
  EXPECT_TRUE(run.fake.problems().empty()) << ::testing::PrintToString(run.fake.problems());
}

TEST(NvjpegDecoderTest, EveryFailingCallIsAStatusAndLeaksNothing) {
  for (const char* call : {"nvjpegCreateEx", "nvjpegJpegStateCreate", "nvjpegJpegStreamCreate",
                           "nvjpegJpegStreamParse", "nvjpegJpegStreamGetComponentsNum",
                           "nvjpegDecodeBatchedSupported", "nvjpegDecodeBatchedInitialize",
                           "nvjpegDecodeBatched", "nvjpegDecode"}) {
    SCOPED_TRACE(call);
    JpegRun run;
    run.fake.FailCall(call, 1, NVJPEG_STATUS_INTERNAL_ERROR);
    const Status init = run.decoder->Init();
    if (init.ok()) {
      run.Decode({EncodeJpeg(64, 48, JpegKind::k420),
                  EncodeJpeg(64, 48, JpegKind::kProgressive420)});
      ASSERT_EQ(run.statuses.size(), 2u);
    } else {
      EXPECT_EQ(init.code(), StatusCode::kUnavailable);
      EXPECT_THAT(init.message(), HasSubstr("NVJPEG_STATUS_INTERNAL_ERROR"));
    }
    run.decoder.reset();
    EXPECT_TRUE(run.fake.problems().empty()) << ::testing::PrintToString(run.fake.problems());
  }
}

TEST(NvjpegLoaderTest, SearchesTheCallersDirectoriesFirstThenTheLibraryPath) {
  EXPECT_THAT(NvjpegCandidates({"/sp/nvidia/nvjpeg/lib"}),
              ElementsAre("/sp/nvidia/nvjpeg/lib/libnvjpeg.so.12", "libnvjpeg.so.12",
                          "libnvjpeg.so"));
}

TEST(NvjpegLoaderTest, TakesTheFirstLibraryWithEveryEntryPointAndNamesWhatFailed) {
  int fake_symbol = 0;
  std::map<std::string, bool> complete = {{"a/libnvjpeg.so.12", false},
                                          {"libnvjpeg.so.12", true}};
  LibraryOps ops;
  ops.open = [&](const std::string& name) -> void* {
    auto it = complete.find(name);
    return it == complete.end() ? nullptr : const_cast<bool*>(&it->second);
  };
  ops.symbol = [&](void* library, const char* name) -> void* {
    const bool all = *static_cast<bool*>(library);
    if (!all && std::string(name) == "nvjpegDecodeBatched") return nullptr;
    return &fake_symbol;
  };
  NvjpegApi api;
  std::string from;
  ASSERT_TRUE(LoadNvjpegFrom(NvjpegCandidates({"a"}), ops, &api, &from).ok());
  EXPECT_EQ(from, "libnvjpeg.so.12");
  EXPECT_NE(api.nvjpegDecodeBatched, nullptr);

  complete.clear();
  const Status none = LoadNvjpegFrom(NvjpegCandidates({"a"}), ops, &api, &from);
  EXPECT_EQ(none.code(), StatusCode::kUnavailable);
  EXPECT_THAT(none.message(), HasSubstr("a/libnvjpeg.so.12: not found"));
  EXPECT_THAT(none.message(), HasSubstr("nvidia-nvjpeg-cu12"));
  complete = {{"libnvjpeg.so", false}};
  const Status partial = LoadNvjpegFrom(NvjpegCandidates({}), ops, &api, &from);
  EXPECT_THAT(partial.message(), HasSubstr("libnvjpeg.so: lacks nvjpegDecodeBatched"));
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
