// Any picture a frame or a record may hold, by its bytes: JPEG (jpeg_decoder.h,
// jpeg_warp.h), PNG (png_decoder.h), BMP (bmp_decoder.h) or GIF (its first
// frame, gif_decoder.h), sniffed from the first bytes as
// tf.io.decode_image sniffs them, so a PNG named .jpg (ImageNet has one) or a
// CMYK JPEG decodes wherever a JPEG does. The same entry points as
// jpeg_decoder.h / jpeg_warp.h: the gulp readers and the fused-decode op call
// these, never a codec directly.
//
// A PNG, BMP or GIF has no DCT to scale: decoded at 1/s it is the whole
// picture averaged over s x s boxes (the last row and column over what is
// left), the size jpeg::ScaledSize gives; warped, it is decoded whole and then
// warped (the crop saves nothing but the warp). A TIFF or WebP picture is
// refused by its name, with what to do (InvalidArgument, as
// tf.io.decode_image refuses them); bytes that start like no picture are read
// as a damaged JPEG (DataLoss, libjpeg's message).
#ifndef TF_GULP_CC_CODEC_PICTURE_H_
#define TF_GULP_CC_CODEC_PICTURE_H_

#include <cstddef>
#include <cstdint>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
#include "cc/util/status.h"

namespace tfg {
namespace picture {

// kTiff and kWebp are only recognized, to be refused by name.
enum class Kind { kJpeg, kPng, kGif, kBmp, kTiff, kWebp, kUnknown };

// The picture format `data` starts with.
Kind Sniff(const uint8_t* data, size_t size);
const char* KindName(Kind kind);

// The header of a JPEG, PNG, BMP or GIF (size, gray), with each codec's size
// limits.
Status ReadHeader(const uint8_t* data, size_t size, jpeg::ImageInfo* info);

// jpeg::Decode for any picture ReadHeader reads.
Status Decode(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options, int width,
              int height, uint8_t* dst);

// jpeg::DecodeWarped for any picture ReadHeader reads.
Status DecodeWarped(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options,
                    const jpeg::ImageInfo& info, const double matrix[9],
                    const jpeg::WarpTarget& target, float* dst);
Status DecodeWarped(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options,
                    const jpeg::ImageInfo& info, const double matrix[9],
                    const jpeg::WarpTarget& target, uint8_t* dst);

}  // namespace picture
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_PICTURE_H_
