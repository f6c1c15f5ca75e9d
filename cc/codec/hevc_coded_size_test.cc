// HevcCodedSize against the test pictures' coded frames as FFmpeg decoded
// them (tests/data/hevc/EXPECTED.json's frame_hw), larger than the pictures
// kept (image_hw) for the padded ones.
#include "cc/codec/hevc_coded_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cc/codec/hevc_sample.h"

namespace tfg {
namespace codec {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

ParsedHevcSample Parse(const std::string& name) {
  const std::string bytes = Slurp("tests/data/hevc/" + name + ".mp4");
  ParsedHevcSample sample;
  const Status s = ParseHevcSample(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                   "", name, &sample);
  EXPECT_TRUE(s.ok()) << s.message();
  return sample;
}

TEST(HevcCodedSizeTest, TheCodedFrameNotTheSampleEntry) {
  struct Expected {
    const char* name;
    int width, height;  // EXPECTED.json's frame_hw
  };
  for (const Expected& e : {Expected{"square512", 512, 512}, Expected{"landscape300x200", 512, 512},
                            Expected{"tall600x700", 1024, 1024}}) {
    SCOPED_TRACE(e.name);
    const ParsedHevcSample sample = Parse(e.name);
    int w = 0, h = 0;
    const Status s = HevcCodedSize(reinterpret_cast<const uint8_t*>(sample.annex_b.data()),
                                   sample.annex_b.size(), e.name, &w, &h);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(w, e.width);
    EXPECT_EQ(h, e.height);
  }
}

TEST(HevcCodedSizeTest, NoOrATruncatedSpsIsDataLossNamingTheSample) {
  const ParsedHevcSample sample = Parse("square512");
  const std::string& annex_b = sample.annex_b;
  // The SPS's start: cut right after its NAL header and a few bytes.
  size_t sps = std::string::npos;
  for (size_t i = 0; i + 3 < annex_b.size(); ++i) {
    if (annex_b[i] == 0 && annex_b[i + 1] == 0 && annex_b[i + 2] == 1 &&
        ((static_cast<uint8_t>(annex_b[i + 3]) >> 1) & 0x3F) == 33) {
      sps = i + 3;
      break;
    }
  }
  ASSERT_NE(sps, std::string::npos);
  int w = 0, h = 0;
  Status s = HevcCodedSize(reinterpret_cast<const uint8_t*>(annex_b.data()), sps + 6, "sample 9",
                           &w, &h);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("sample 9: the HEVC sequence parameter set at byte " +
                                     std::to_string(sps)));
  const uint8_t no_sps[] = {0, 0, 1, 0x40, 0x01, 0x0c, 0, 0, 1, 0x44, 0x01, 0xc1};
  s = HevcCodedSize(no_sps, sizeof(no_sps), "sample 9", &w, &h);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("sample 9: no HEVC sequence parameter set"));
}

}  // namespace
}  // namespace codec
}  // namespace tfg
