#include "cc/codec/jpeg_decoder.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "cc/testing/gulp_testing.h"

namespace tfg {
namespace jpeg {
namespace {

using testing::MakeJpeg;

std::vector<uint8_t> DecodeOrDie(const std::string& data, DecodeOptions options,
                                 int* width, int* height) {
  ImageInfo info;
  EXPECT_TRUE(ReadHeader(reinterpret_cast<const uint8_t*>(data.data()),
                         data.size(), &info).ok());
  ScaledSize(info, options, width, height);
  std::vector<uint8_t> out(static_cast<size_t>(*width) * *height *
                           Channels(options.color_space));
  Status s = Decode(reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                    options, *width, *height, out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(JpegDecoderTest, DecodesEverySubsamplingAndProgressive) {
  for (int channels : {1, 3}) {
    for (bool s444 : {false, true}) {
      for (bool progressive : {false, true}) {
        std::string jpeg = MakeJpeg(40, 24, 1, channels, s444, progressive);
        for (ColorSpace cs : {ColorSpace::kRgb, ColorSpace::kGray}) {
          DecodeOptions options;
          options.color_space = cs;
          int w, h;
          auto pixels = DecodeOrDie(jpeg, options, &w, &h);
          EXPECT_EQ(w, 40);
          EXPECT_EQ(h, 24);
          EXPECT_EQ(pixels.size(), 40u * 24u * Channels(cs));
        }
      }
    }
  }
}

TEST(JpegDecoderTest, PixelsAreCloseToTheSource) {
  // Gray source: x*4 + y*2 + seed*17 (mod 256); quality 90 keeps it close.
  std::string jpeg = MakeJpeg(32, 16, 0, 1);
  DecodeOptions options;
  options.color_space = ColorSpace::kGray;
  options.fast_dct = false;
  int w, h;
  auto pixels = DecodeOrDie(jpeg, options, &w, &h);
  double total_error = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      total_error += std::abs(int(pixels[y * w + x]) - ((x * 4 + y * 2) & 0xff));
    }
  }
  EXPECT_LT(total_error / (w * h), 3.0);
}

TEST(JpegDecoderTest, ScalesInTheIdct) {
  std::string jpeg = MakeJpeg(64, 48, 2);
  for (int denominator : {2, 4, 8}) {
    DecodeOptions options;
    options.scale_denominator = denominator;
    int w, h;
    DecodeOrDie(jpeg, options, &w, &h);
    EXPECT_EQ(w, 64 / denominator);
    EXPECT_EQ(h, 48 / denominator);
  }
  EXPECT_FALSE(IsValidScaleDenominator(3));
}

TEST(JpegDecoderTest, CorruptAndTruncatedDataAreErrors) {
  std::string jpeg = MakeJpeg(64, 48, 3);
  ImageInfo info;
  std::string garbage = "this is not a jpeg";
  EXPECT_EQ(ReadHeader(reinterpret_cast<const uint8_t*>(garbage.data()),
                       garbage.size(), &info).code(),
            StatusCode::kDataLoss);
  // A truncated JPEG decodes with a libjpeg warning: must be an error, not a
  // half-grey frame.
  std::string truncated = jpeg.substr(0, jpeg.size() / 2);
  std::vector<uint8_t> out(64 * 48 * 3);
  EXPECT_EQ(Decode(reinterpret_cast<const uint8_t*>(truncated.data()),
                   truncated.size(), DecodeOptions(), 64, 48, out.data())
                .code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace jpeg
}  // namespace tfg
