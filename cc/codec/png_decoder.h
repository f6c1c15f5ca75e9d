// PNG decoding with libpng (Debian: libpng-dev), into a caller's buffer: the
// pictures tf.io.decode_image reads that are PNG (image datasets hold them,
// sometimes named .jpg). Every PNG colour type and bit depth decodes to 8-bit
// RGB or gray the way tf.io.decode_png(channels=3 or 1) does: a palette is
// expanded, alpha is dropped (not composited), 16-bit samples keep their high
// byte, gray is replicated to RGB. Thread-safe (a decoder per call).
#ifndef TF_GULP_CC_CODEC_PNG_DECODER_H_
#define TF_GULP_CC_CODEC_PNG_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "cc/util/status.h"

namespace tfg {
namespace png {

// True when `data` starts with the PNG signature.
bool IsPng(const uint8_t* data, size_t size);

struct Header {
  int width = 0;
  int height = 0;
  bool gray = false;  // gray or gray + alpha: readers keeping a frame's own colour space decode it as gray
};

// Reads the IHDR chunk, and refuses a header over jpeg_decoder.h's
// kMaxFramePixels (InvalidArgument) or claiming more pixels than deflate can
// expand the file's bytes into (DataLoss): checked before anything the size
// of the picture is allocated.
Status ReadHeader(const uint8_t* data, size_t size, Header* header);

// Decodes the whole picture into `dst`: height * width * channels bytes,
// channels 3 (RGB) or 1 (gray), rows packed. Any libpng error or warning about
// damaged data (a bad CRC, a truncated stream) is a DataLoss error.
Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst);

}  // namespace png
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_PNG_DECODER_H_
