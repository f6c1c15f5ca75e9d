// GIF decoding, for the GIF pictures tf.io.decode_image(expand_animations=
// False) reads: the first frame, composited at its left/top offset on the
// logical screen, which sizes the picture (RGB from the frame's local colour
// table or the global one; interlaced rows put back in order). The screen
// size is the one PIL (Image.open(f).size, so Keras's load_img) and viewers
// give; TensorFlow 2.21 instead returns a frame-sized picture holding the
// frame's top-left part shifted by its offset, which nothing else shows. The
// screen outside the frame and the frame's transparent pixels are black, as
// TensorFlow writes transparent pixels (RGB has no alpha; PIL's "RGB" fills
// them with palette entry 0 or the transparent entry's colour instead). A
// frame reaching past the screen is cut at its edge (PIL grows the picture).
// An LZW decoder of its own (no library): a GIF is a few hundred lines of
// format, and every size and code is checked against the bytes before it is
// used.
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
