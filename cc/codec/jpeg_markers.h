// The walk over a JPEG's marker segments from SOI to its frame header (SOFn):
// what the arithmetic-coding check (jpeg_decoder.cc) and the fake nvJPEG's
// header reader (cc/gpu/testing/fake_nvjpeg.cc) both need.
#ifndef TF_GULP_CC_CODEC_JPEG_MARKERS_H_
#define TF_GULP_CC_CODEC_JPEG_MARKERS_H_

#include <cstddef>
#include <cstdint>

namespace tfg {
namespace jpeg {

// The SOFn markers: 0xC0-0xCF except DHT (C4), JPG (C8) and DAC (CC).
bool IsFrameMarker(uint8_t marker);

// A frame header segment, as FindFrameHeader finds it.
struct FrameSegment {
  uint8_t marker = 0;                // 0xC0 baseline, 0xC2 progressive, 0xC9-0xCF arithmetic...
  const uint8_t* payload = nullptr;  // the segment's bytes after its length field
  size_t length = 0;                 // how many the length field declares
  bool complete = false;             // the input holds all `length` of them
};

// Walks `data`'s marker segments from SOI to the first frame header and
// describes it in `frame`. Fill bytes (0xFF runs) and the markers that have no
// length field (TEM, RSTn, SOI) are stepped over. False, rather than a guess,
// when there is no SOI, a byte that is no marker stands where one should, a
// length field is under 2, a scan (SOS) or EOI comes first, or the input ends
// before the frame header's length field.
bool FindFrameHeader(const uint8_t* data, size_t size, FrameSegment* frame);

}  // namespace jpeg
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_JPEG_MARKERS_H_
