#include "cc/codec/hevc_decoder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "cc/mp4/mp4_reader.h"

namespace tfg {
namespace codec {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The Annex-B stream of a fixture's only sample.
std::string FixtureAnnexB(const std::string& name) {
  const std::string bytes = Slurp("tests/data/hevc/" + name + ".mp4");
  mp4::Movie movie;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  EXPECT_TRUE(mp4::ParseMovie(data, bytes.size(), name, &movie).ok());
  const mp4::Track& t = movie.tracks.at(0);
  std::string annexb;
  EXPECT_TRUE(mp4::HevcSampleToAnnexB(t.hevc, data + t.sample_offsets[0], t.sample_sizes[0],
                                      name, &annexb).ok());
  return annexb;
}

Status DecodeString(HevcDecoder* d, const std::string& s) {
  return d->Decode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), "sample 3 of test");
}

TEST(HevcDecoderTest, DecodesFixturesOfDifferentSizesWithOneDecoder) {
  std::unique_ptr<HevcDecoder> d;
  ASSERT_TRUE(HevcDecoder::Create(1, &d).ok());
  for (auto [name, side] : std::vector<std::pair<std::string, int>>{
           {"square512", 512}, {"tall600x700", 1024}, {"landscape300x200", 512}}) {
    Status s = DecodeString(d.get(), FixtureAnnexB(name));
    ASSERT_TRUE(s.ok()) << name << ": " << s.message();
    EXPECT_EQ(d->width(), side);
    EXPECT_EQ(d->height(), side);
    std::vector<uint8_t> full(side * side * 3), part(10 * 20 * 3);
    ASSERT_TRUE(d->ToRgb(0, 0, side, side, ChromaUpsampling::kBilinear, full.data()).ok());
    ASSERT_TRUE(d->ToRgb(7, 5, 20, 10, ChromaUpsampling::kBilinear, part.data()).ok());
    for (int r = 0; r < 10; ++r) {
      for (int c = 0; c < 60; ++c) {
        ASSERT_EQ(part[r * 60 + c], full[((5 + r) * side + 7) * 3 + c]);
      }
    }
    EXPECT_FALSE(d->ToRgb(side - 3, 0, 4, 1, ChromaUpsampling::kNearest, part.data()).ok());
  }
}

TEST(HevcDecoderTest, NearestAndBilinearDifferOnlyInChroma) {
  std::unique_ptr<HevcDecoder> d;
  ASSERT_TRUE(HevcDecoder::Create(0, &d).ok());
  ASSERT_TRUE(DecodeString(d.get(), FixtureAnnexB("landscape300x200")).ok());
  std::vector<uint8_t> a(512 * 512 * 3), b(a.size());
  ASSERT_TRUE(d->ToRgb(0, 0, 512, 512, ChromaUpsampling::kBilinear, a.data()).ok());
  ASSERT_TRUE(d->ToRgb(0, 0, 512, 512, ChromaUpsampling::kNearest, b.data()).ok());
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff += std::abs(int{a[i]} - int{b[i]});
  EXPECT_GT(diff / a.size(), 0.01);
  EXPECT_LT(diff / a.size(), 5.0);
}

TEST(HevcDecoderTest, BadBitstreamsAreDataLoss) {
  std::unique_ptr<HevcDecoder> d;
  ASSERT_TRUE(HevcDecoder::Create(1, &d).ok());
  const std::string good = FixtureAnnexB("square512");
  // Not HEVC at all.
  Status s = DecodeString(d.get(), std::string(1000, '\x55'));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.message();
  EXPECT_NE(s.message().find("sample 3 of test"), std::string::npos);
  // Parameter sets only (the picture is missing).
  s = DecodeString(d.get(), good.substr(0, 120));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.message();
  // Truncated picture.
  s = DecodeString(d.get(), good.substr(0, good.size() / 2));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.message();
  // The decoder still works afterwards.
  ASSERT_TRUE(DecodeString(d.get(), good).ok());
  EXPECT_EQ(d->width(), 512);
}

TEST(HevcDecoderTest, ThreadLocalDecoderAndOptions) {
  HevcDecoder* a = nullptr;
  HevcDecoder* b = nullptr;
  ASSERT_TRUE(HevcDecoder::ForThisThread(1, &a).ok());
  ASSERT_TRUE(HevcDecoder::ForThisThread(1, &b).ok());
  EXPECT_EQ(a, b);
  ChromaUpsampling mode;
  EXPECT_TRUE(ParseChromaUpsampling("nearest", &mode).ok());
  EXPECT_EQ(mode, ChromaUpsampling::kNearest);
  EXPECT_FALSE(ParseChromaUpsampling("cubic", &mode).ok());
}

}  // namespace
}  // namespace codec
}  // namespace tfg
