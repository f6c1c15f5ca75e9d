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
  // One component (a grayscale JPEG): readers that keep each frame's own
  // colour space (the Python readers) decode it as gray.
  bool gray = false;
  // Four components (CMYK or YCCK, as Adobe and print workflows write):
  // decoded through the libjpeg API, which says whether the Adobe marker
  // inverts the inks (TurboJPEG does not).
  bool cmyk = false;
};

// CMYK pixels to RGB (out_channels 3) or gray (1) as tf.io.decode_jpeg does:
// with an Adobe marker the samples are inverted (R = C * K / 255), else
// R = (255 - C) * (255 - K) / 255; gray is libjpeg's luma of that RGB.
// `out` may be `cmyk` (converted in place, front to back).
void CmykToRgb(const uint8_t* cmyk, size_t pixels, bool adobe_inverted, int out_channels,
               uint8_t* out);

// Decompression-bomb guards, checked from the header before anything the size
// of the image is allocated (the output buffer, libjpeg's whole-image
// coefficient buffer for progressive JPEGs).
//
// At most this many pixels per frame (16384 x 8192; about 400 MB as RGB).
// Gulp frames are video frames; anything bigger is a damaged header.
constexpr uint64_t kMaxFramePixels = uint64_t{1} << 27;
// A Huffman-coded JPEG cannot hold more pixels than this per byte of file:
// every scan codes each 8x8 block of at least one component with at least one
// bit (a DC code or, in sequential mode, a DC code plus an end-of-block code),
// and a component is subsampled at most 4x4, so a block stands for at most
// 8 * 8 * 16 = 1024 pixels, and a byte (8 blocks) for 8192. A header claiming
// more is a truncated or corrupted file that would fail to decode anyway; it
// is refused before its size is allocated. Arithmetic-coded JPEGs have no such
// bound and are held to kMaxFramePixels only.
constexpr uint64_t kMaxPixelsPerByte = 8192;

// Reads the header only, and refuses a header over the limits above: an
// InvalidArgument error past kMaxFramePixels, a DataLoss error when a
// Huffman-coded JPEG claims more pixels than its bytes can encode.
Status ReadHeader(const uint8_t* data, size_t size, ImageInfo* info);

// The limits ReadHeader applies, for a header of `width` x `height` that
// another decoder read (`tf-gulp check`).
Status CheckHeaderLimits(const uint8_t* data, size_t size, int width, int height);

// True when the JPEG's frame header (SOFn marker) says arithmetic coding;
// false for Huffman coding and when no frame header is found by walking the
// marker segments (so the Huffman bound, the stricter one, applies).
bool IsArithmeticCoded(const uint8_t* data, size_t size);

// Output dimensions of a decode of `info` with `options`.
void ScaledSize(const ImageInfo& info, const DecodeOptions& options, int* width,
                int* height);

// Decodes into `dst`, which holds height * width * channels bytes of the
// scaled size (rows packed). Any libjpeg warning (e.g. a truncated file) is an
// error: a half-grey frame is silently wrong data. A CMYK/YCCK JPEG is decoded
// by jpeg_warp.h's DecodeWhole.
Status Decode(const uint8_t* data, size_t size, const DecodeOptions& options,
              int width, int height, uint8_t* dst);

}  // namespace jpeg
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_JPEG_DECODER_H_
