// BMP decoding, for the BMP pictures tf.io.decode_image reads: uncompressed
// (BI_RGB, or BI_BITFIELDS with the standard masks) 8-bit palette, 24-bit BGR
// and 32-bit BGRA, bottom-up or top-down, with the pixels PIL and image
// viewers show (alpha dropped). An 8-bit BMP's indices are looked up in its
// palette: tf.io.decode_bmp returns the indices themselves as gray, which is
// the picture only when the palette is the gray ramp PIL writes for "L"
// pictures. Other BMPs (RLE, 1/4/16-bit) are refused by name.
#ifndef TF_GULP_CC_CODEC_BMP_DECODER_H_
#define TF_GULP_CC_CODEC_BMP_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "cc/util/status.h"

namespace tfg {
namespace bmp {

bool IsBmp(const uint8_t* data, size_t size);

struct Header {
  int width = 0;
  int height = 0;
  bool gray = false;  // 8-bit with a palette of grays only (r == g == b)
};

// The header, checked against the file's size (every row must be there) and
// jpeg_decoder.h's kMaxFramePixels before anything is allocated.
Status ReadHeader(const uint8_t* data, size_t size, Header* header);

// The whole picture into `dst`: height * width * channels (3 RGB or 1 gray).
Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst);

}  // namespace bmp
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_BMP_DECODER_H_
