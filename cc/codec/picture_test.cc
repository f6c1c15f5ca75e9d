#include "cc/codec/picture.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <cstdlib>
#include <jpeglib.h>
#include <string>
#include <vector>

#include "cc/codec/png_decoder.h"

namespace tfg {
namespace picture {
namespace {

constexpr int kW = 37, kH = 29;

std::vector<uint8_t> Pixels(int channels) {
  std::vector<uint8_t> p(static_cast<size_t>(kW) * kH * channels);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < channels; ++c) {
        p[(y * kW + x) * channels + c] = static_cast<uint8_t>(x * 2 + y * 3 + c * 30);  // no wrap
      }
    }
  }
  return p;
}

// A four-component JPEG (quality 100, no subsampling) stored as `stored` (JCS_CMYK or JCS_YCCK),
// with or without the Adobe marker.
std::string CmykJpeg(const std::vector<uint8_t>& cmyk, J_COLOR_SPACE stored, bool adobe) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = kW;
  c.image_height = kH;
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, stored);
  for (int i = 0; i < c.num_components; ++i) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  jpeg_set_quality(&c, 100, TRUE);
  c.write_Adobe_marker = adobe ? TRUE : FALSE;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(cmyk.data()) + c.next_scanline * kW * 4;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string s(reinterpret_cast<char*>(out), size);
  free(out);
  return s;
}

std::string Png(const std::vector<uint8_t>& pixels, png_uint_32 format) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = kW;
  image.height = kH;
  image.format = format;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr));
  std::string s(size, '\0');
  EXPECT_TRUE(png_image_write_to_memory(&image, &s[0], &size, 0, pixels.data(), 0, nullptr));
  s.resize(size);
  return s;
}

std::vector<uint8_t> DecodeRgb(const std::string& data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  jpeg::ImageInfo info;
  Status s = picture::ReadHeader(p, data.size(), &info);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(info.width, kW);
  EXPECT_EQ(info.height, kH);
  std::vector<uint8_t> out(static_cast<size_t>(kW) * kH * 3);
  s = picture::Decode(p, data.size(), jpeg::DecodeOptions(), kW, kH, out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

int MaxDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(PictureTest, CmykAndYcckJpegsDecodeToRgbWithAndWithoutAdobeInversion) {
  const std::vector<uint8_t> cmyk = Pixels(4);
  for (J_COLOR_SPACE stored : {JCS_CMYK, JCS_YCCK}) {
    for (bool adobe : {true, false}) {
      if (stored == JCS_YCCK && !adobe) continue;  // YCCK is only signalled by the Adobe marker
      // tf.io.decode_jpeg's conversion: Adobe's inverted inks R = C K / 255, else
      // R = (255 - C) (255 - K) / 255.
      std::vector<uint8_t> want;
      for (size_t i = 0; i < cmyk.size(); i += 4) {
        const int k = cmyk[i + 3];
        for (int c = 0; c < 3; ++c) {
          want.push_back(static_cast<uint8_t>(adobe ? cmyk[i + c] * k / 255
                                                    : (255 - cmyk[i + c]) * (255 - k) / 255));
        }
      }
      EXPECT_LE(MaxDiff(DecodeRgb(CmykJpeg(cmyk, stored, adobe)), want), 8)
          << "stored " << stored << " adobe " << adobe;
    }
  }
}

TEST(PictureTest, PngOfEveryLayoutDecodesToRgb) {
  const std::vector<uint8_t> rgb = Pixels(3), rgba = Pixels(4), gray = Pixels(1);
  EXPECT_EQ(DecodeRgb(Png(rgb, PNG_FORMAT_RGB)), rgb);
  std::vector<uint8_t> stripped;
  for (size_t i = 0; i < rgba.size(); i += 4) stripped.insert(stripped.end(), &rgba[i], &rgba[i + 3]);
  EXPECT_EQ(DecodeRgb(Png(rgba, PNG_FORMAT_RGBA)), stripped);  // alpha dropped, not composited
  std::vector<uint8_t> replicated;
  for (uint8_t v : gray) replicated.insert(replicated.end(), 3, v);
  EXPECT_EQ(DecodeRgb(Png(gray, PNG_FORMAT_GRAY)), replicated);
}

TEST(PictureTest, PngAtAQuarterIsBoxAveraged) {
  const std::vector<uint8_t> gray = Pixels(1);
  const std::string png = Png(gray, PNG_FORMAT_GRAY);
  jpeg::DecodeOptions options;
  options.color_space = jpeg::ColorSpace::kGray;
  options.scale_denominator = 4;
  const int w = (kW + 3) / 4, h = (kH + 3) / 4;
  std::vector<uint8_t> out(static_cast<size_t>(w) * h);
  ASSERT_TRUE(picture::Decode(reinterpret_cast<const uint8_t*>(png.data()), png.size(), options, w, h,
                     out.data()).ok());
  int sum = 0;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) sum += gray[y * kW + x];
  }
  EXPECT_EQ(out[0], (sum + 8) / 16);
}

TEST(PictureTest, DamagedAndUnsupportedPicturesAreNamed) {
  std::string png = Png(Pixels(3), PNG_FORMAT_RGB);
  png.resize(png.size() - 30);
  std::vector<uint8_t> out(static_cast<size_t>(kW) * kH * 3);
  Status s = picture::Decode(reinterpret_cast<const uint8_t*>(png.data()), png.size(),
                    jpeg::DecodeOptions(), kW, kH, out.data());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("corrupt PNG"), std::string::npos) << s.message();
  const std::string gif("GIF89a\x01\0\x01\0\0\0\0", 13);  // a 1x1 screen, then nothing
  jpeg::ImageInfo info;
  const auto* g = reinterpret_cast<const uint8_t*>(gif.data());
  ASSERT_TRUE(picture::ReadHeader(g, gif.size(), &info).ok());
  s = picture::Decode(g, gif.size(), jpeg::DecodeOptions(), 1, 1, out.data());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("truncated GIF"), std::string::npos) << s.message();
}

TEST(PictureTest, TiffAndWebpAreRefusedByNameNotReadAsJpegs) {
  for (const auto& [head, name] : std::vector<std::pair<std::string, std::string>>{
           {std::string("II*\0", 4), "TIFF"},
           {std::string("MM\0*", 4), "TIFF"},
           {std::string("RIFF\x10\0\0\0WEBPVP8 ", 16), "WebP"}}) {
    const std::string data = head + std::string(64, '\0');
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    EXPECT_STREQ(KindName(Sniff(p, data.size())), name.c_str());
    jpeg::ImageInfo info;
    const Status s = picture::ReadHeader(p, data.size(), &info);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(s.message().find("a " + name + " picture: not supported"), 0u) << s.message();
    EXPECT_NE(s.message().find("convert it first"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace picture
}  // namespace tfg
