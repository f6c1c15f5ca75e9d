#include "cc/codec/jpeg_markers.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace tfg {
namespace jpeg {
namespace {

// SOI, an APP0 segment of 4 payload bytes, then a baseline frame header whose
// payload (precision, height, width, one component) is 9 bytes.
std::vector<uint8_t> Jpeg() {
  return {0xFF, 0xD8,                                            //
          0xFF, 0xE0, 0x00, 0x06, 'J',  'F',  'I',  'F',         //
          0xFF, 0xC0, 0x00, 0x0B, 8,    0x00, 0x30, 0x00, 0x40,  //
          1,    1,    0x11, 0};
}
constexpr size_t kSofAt = 10;

bool Find(const std::vector<uint8_t>& data, FrameSegment* frame) {
  return FindFrameHeader(data.data(), data.size(), frame);
}

TEST(JpegMarkersTest, FindsTheFrameHeaderPastOtherSegments) {
  const std::vector<uint8_t> jpeg = Jpeg();
  FrameSegment frame;
  ASSERT_TRUE(Find(jpeg, &frame));
  EXPECT_EQ(frame.marker, 0xC0);
  EXPECT_EQ(frame.payload, jpeg.data() + kSofAt + 4);
  EXPECT_EQ(frame.length, 9u);
  EXPECT_TRUE(frame.complete);
}

TEST(JpegMarkersTest, StepsOverFillBytesAndMarkersWithoutALength) {
  std::vector<uint8_t> jpeg = Jpeg();
  // Fill bytes before the APP0 marker, then an RST0 and a TEM before the frame header.
  jpeg.insert(jpeg.begin() + kSofAt, {0xFF, 0xD0, 0xFF, 0x01});
  jpeg.insert(jpeg.begin() + 2, {0xFF, 0xFF});
  FrameSegment frame;
  ASSERT_TRUE(Find(jpeg, &frame));
  EXPECT_EQ(frame.marker, 0xC0);
  EXPECT_EQ(frame.payload, jpeg.data() + kSofAt + 6 + 4);
}

TEST(JpegMarkersTest, AScanOrTheEndBeforeTheFrameHeaderIsNone) {
  // A frame header after an SOS segment or after EOI (here followed by bytes
  // that would read as a length field) is not the JPEG's.
  for (uint8_t marker : {0xDA, 0xD9}) {
    std::vector<uint8_t> jpeg = Jpeg();
    jpeg.insert(jpeg.begin() + kSofAt, {0xFF, marker, 0x00, 0x02});
    FrameSegment frame;
    EXPECT_FALSE(Find(jpeg, &frame)) << std::hex << int{marker};
  }
}

TEST(JpegMarkersTest, TruncatedOrDamagedInputIsNone) {
  const std::vector<uint8_t> jpeg = Jpeg();
  FrameSegment frame;
  // Cut inside the APP0 segment, or inside the frame header's length field.
  for (size_t size : {size_t{0}, size_t{3}, size_t{8}, kSofAt + 3}) {
    EXPECT_FALSE(FindFrameHeader(jpeg.data(), size, &frame)) << size;
  }
  std::vector<uint8_t> bad = Jpeg();
  bad[0] = 0x00;  // no SOI
  EXPECT_FALSE(Find(bad, &frame));
  bad = Jpeg();
  bad[kSofAt] = 0x00;  // no marker where the frame header should start
  EXPECT_FALSE(Find(bad, &frame));
  bad = Jpeg();
  bad[kSofAt + 3] = 0x01;  // the frame header's length under 2 (its own field's)
  EXPECT_FALSE(Find(bad, &frame));
}

TEST(JpegMarkersTest, AFrameHeaderCutShortIsFoundButNotComplete) {
  const std::vector<uint8_t> jpeg = Jpeg();
  FrameSegment frame;
  ASSERT_TRUE(FindFrameHeader(jpeg.data(), kSofAt + 6, &frame));
  EXPECT_EQ(frame.marker, 0xC0);
  EXPECT_EQ(frame.length, 9u);
  EXPECT_FALSE(frame.complete);
}

TEST(JpegMarkersTest, FrameMarkersAreC0ToCFButDhtJpgAndDac) {
  const std::set<int> sof = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7,
                             0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF};
  for (int m = 0; m <= 0xFF; ++m) {
    EXPECT_EQ(IsFrameMarker(static_cast<uint8_t>(m)), sof.count(m) == 1) << std::hex << m;
  }
}

}  // namespace
}  // namespace jpeg
}  // namespace tfg
