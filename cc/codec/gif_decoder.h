// GIF decoding, for the GIF pictures tf.io.decode_image(expand_animations=
// False) reads: the first frame, on the logical screen, as TensorFlow decodes
// it (RGB from the frame's local colour table or the global one; the screen
// outside the frame and the frame's transparent pixels black; interlaced rows
// put back in order). An LZW decoder of its own (no library): a GIF is a few
// hundred lines of format, and every size and code is checked against the
// bytes before it is used.
#ifndef TF_GULP_CC_CODEC_GIF_DECODER_H_
#define TF_GULP_CC_CODEC_GIF_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "cc/util/status.h"

namespace tfg {
namespace gif {

bool IsGif(const uint8_t* data, size_t size);

struct Header {
  int width = 0;   // the logical screen
  int height = 0;
};

// The logical screen's size, within jpeg_decoder.h's kMaxFramePixels.
Status ReadHeader(const uint8_t* data, size_t size, Header* header);

// The first frame into `dst`: height * width * channels (3 RGB, or 1 gray:
// libjpeg's luma of the RGB).
Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst);

}  // namespace gif
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_GIF_DECODER_H_
