#include "cc/codec/jpeg_decoder.h"

#include <turbojpeg.h>

#include <string>

#include "cc/codec/jpeg_markers.h"
#include "cc/codec/jpeg_warp.h"

namespace tfg {
namespace jpeg {
namespace {

// One decompressor per thread: TurboJPEG handles are not thread-safe, and
// creating one per frame costs more than decoding a small frame.
class ThreadDecompressor {
 public:
  ThreadDecompressor() : handle_(tjInitDecompress()) {}
  ~ThreadDecompressor() {
    if (handle_ != nullptr) tjDestroy(handle_);
  }
  tjhandle get() const { return handle_; }

 private:
  tjhandle handle_;
};

tjhandle Decompressor() {
  thread_local ThreadDecompressor decompressor;
  return decompressor.get();
}

Status TurboJpegError(tjhandle handle, const char* what) {
  return DataLossError(what, ": ", tjGetErrorStr2(handle));
}

}  // namespace

bool IsArithmeticCoded(const uint8_t* data, size_t size) {
  FrameSegment frame;
  return FindFrameHeader(data, size, &frame) && frame.marker >= 0xC8;  // C9-CB, CD-CF
}

int Channels(ColorSpace color_space) {
  return color_space == ColorSpace::kGray ? 1 : 3;
}

bool IsValidScaleDenominator(int denominator) {
  return denominator == 1 || denominator == 2 || denominator == 4 ||
         denominator == 8;
}

Status CheckHeaderLimits(const uint8_t* data, size_t size, int width, int height) {
  const uint64_t pixels = static_cast<uint64_t>(width) * height;
  if (pixels > kMaxFramePixels) {
    return InvalidArgumentError(
        "JPEG header claims ", width, "x", height, " = ", pixels,
        " pixels, over the limit of ", kMaxFramePixels,
        " pixels per frame (a damaged header or a decompression bomb)");
  }
  if (pixels > kMaxPixelsPerByte * size && !IsArithmeticCoded(data, size)) {
    return DataLossError(
        "JPEG header claims ", width, "x", height, " = ", pixels,
        " pixels, more than its ", size, " bytes can encode (at most ",
        kMaxPixelsPerByte,
        " pixels per byte): the header is damaged or the file truncated");
  }
  return Status::Ok();
}

Status ReadHeader(const uint8_t* data, size_t size, ImageInfo* info) {
  tjhandle handle = Decompressor();
  if (handle == nullptr) return InternalError("cannot create a JPEG decoder");
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, data, static_cast<unsigned long>(size),
                          &width, &height, &subsampling, &colorspace) != 0) {
    return TurboJpegError(handle, "not a valid JPEG header");
  }
  if (width <= 0 || height <= 0) {
    // libjpeg-turbo can "succeed" on a damaged header with a 0x0 image.
    return DataLossError("corrupt JPEG header: image size ", width, "x",
                         height);
  }
  TFG_RETURN_IF_ERROR(CheckHeaderLimits(data, size, width, height));
  info->width = width;
  info->height = height;
  info->gray = colorspace == TJCS_GRAY;
  info->cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  return Status::Ok();
}

void ScaledSize(const ImageInfo& info, const DecodeOptions& options, int* width,
                int* height) {
  tjscalingfactor factor{1, options.scale_denominator};
  *width = TJSCALED(info.width, factor);
  *height = TJSCALED(info.height, factor);
}

void CmykToRgb(const uint8_t* cmyk, size_t pixels, bool adobe_inverted, int out_channels,
               uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i) {
    int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (!adobe_inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    const int r = c * k / 255, g = m * k / 255, b = y * k / 255;
    if (out_channels == 3) {
      out[3 * i] = static_cast<uint8_t>(r);
      out[3 * i + 1] = static_cast<uint8_t>(g);
      out[3 * i + 2] = static_cast<uint8_t>(b);
    } else {  // libjpeg's rgb_gray_convert weights, rounded
      out[i] = static_cast<uint8_t>((19595 * r + 38470 * g + 7471 * b + 32768) >> 16);
    }
  }
}

Status Decode(const uint8_t* data, size_t size, const DecodeOptions& options,
              int width, int height, uint8_t* dst) {
  ImageInfo info;
  TFG_RETURN_IF_ERROR(ReadHeader(data, size, &info));
  if (info.cmyk) return DecodeWhole(data, size, options, info, width, height, dst);
  tjhandle handle = Decompressor();
  if (handle == nullptr) return InternalError("cannot create a JPEG decoder");
  int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  flags |= options.fast_dct ? TJFLAG_FASTDCT : TJFLAG_ACCURATEDCT;
  if (options.fast_upsample) flags |= TJFLAG_FASTUPSAMPLE;
  const int pixel_format =
      options.color_space == ColorSpace::kGray ? TJPF_GRAY : TJPF_RGB;
  const int pitch = width * Channels(options.color_space);
  if (tjDecompress2(handle, data, static_cast<unsigned long>(size), dst, width,
                    pitch, height, pixel_format, flags) != 0) {
    return TurboJpegError(handle, "corrupt JPEG");
  }
  return Status::Ok();
}

}  // namespace jpeg
}  // namespace tfg
