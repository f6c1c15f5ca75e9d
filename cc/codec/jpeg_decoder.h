// JPEG decoding with libjpeg-turbo's TurboJPEG API, straight into a caller's
// buffer (for tf_gulp, the output tensor).
//
// libjpeg-turbo handles every JPEG real gulps contain (baseline and
// progressive, 4:4:4 / 4:2:2 / 4:2:0, one-component gray) and can scale by
// 1/2, 1/4 or 1/8 inside the IDCT, which is far cheaper than decoding at full
// size and resizing. Decoding is thread-safe: each thread keeps its own
// decompressor handle.
#ifndef TF_GULP_CC_CODEC_JPEG_DECODER_H_
#define TF_GULP_CC_CODEC_JPEG_DECODER_H_

#include <cstddef>
#include <cstdint>

#include "cc/util/status.h"

namespace tfg {
namespace jpeg {

enum class ColorSpace { kRgb, kGray };

struct DecodeOptions {
  ColorSpace color_space = ColorSpace::kRgb;
  // Decode at 1/scale_denominator of the size: 1, 2, 4 or 8.
  int scale_denominator = 1;
  // The fast integer IDCT (what gulpio2 and tf.io.decode_jpeg use by default)
  // or the accurate one.
  bool fast_dct = true;
  // Fast (nearest-neighbour-like) chroma upsampling instead of the smooth one.
  bool fast_upsample = false;
};

int Channels(ColorSpace color_space);

// True for the supported scale denominators.
bool IsValidScaleDenominator(int denominator);

struct ImageInfo {
  int width = 0;   // full-size dimensions from the header
  int height = 0;
};

// Reads the header only.
Status ReadHeader(const uint8_t* data, size_t size, ImageInfo* info);

// Output dimensions of a decode of `info` with `options`.
void ScaledSize(const ImageInfo& info, const DecodeOptions& options, int* width,
                int* height);

// Decodes into `dst`, which holds height * width * channels bytes of the
// scaled size (rows packed). Any libjpeg warning (e.g. a truncated file) is an
// error: a half-grey frame is silently wrong data.
Status Decode(const uint8_t* data, size_t size, const DecodeOptions& options,
              int width, int height, uint8_t* dst);

}  // namespace jpeg
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_JPEG_DECODER_H_
