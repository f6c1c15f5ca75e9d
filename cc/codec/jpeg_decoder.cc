#include "cc/codec/jpeg_decoder.h"

#include <turbojpeg.h>

#include <string>

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

int Channels(ColorSpace color_space) {
  return color_space == ColorSpace::kGray ? 1 : 3;
}

bool IsValidScaleDenominator(int denominator) {
  return denominator == 1 || denominator == 2 || denominator == 4 ||
         denominator == 8;
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
  info->width = width;
  info->height = height;
  return Status::Ok();
}

void ScaledSize(const ImageInfo& info, const DecodeOptions& options, int* width,
                int* height) {
  tjscalingfactor factor{1, options.scale_denominator};
  *width = TJSCALED(info.width, factor);
  *height = TJSCALED(info.height, factor);
}

Status Decode(const uint8_t* data, size_t size, const DecodeOptions& options,
              int width, int height, uint8_t* dst) {
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
