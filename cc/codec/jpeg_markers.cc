#include "cc/codec/jpeg_markers.h"

namespace tfg {
namespace jpeg {

bool IsFrameMarker(uint8_t marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
         marker != 0xCC;
}

bool FindFrameHeader(const uint8_t* data, size_t size, FrameSegment* frame) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return false;
  size_t at = 2;
  while (at + 4 <= size) {
    if (data[at] != 0xFF) return false;
    const uint8_t marker = data[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
      at += 2;  // TEM, RSTn, SOI: no length field
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) return false;  // EOI, SOS
    const size_t length = (size_t{data[at + 2]} << 8) | data[at + 3];
    if (length < 2) return false;
    if (IsFrameMarker(marker)) {
      frame->marker = marker;
      frame->payload = data + at + 4;
      frame->length = length - 2;
      frame->complete = at + 2 + length <= size;
      return true;
    }
    at += 2 + length;
  }
  return false;
}

}  // namespace jpeg
}  // namespace tfg
