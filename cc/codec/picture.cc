#include "cc/codec/picture.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cc/codec/bmp_decoder.h"
#include "cc/codec/gif_decoder.h"
#include "cc/codec/png_decoder.h"
#include "cc/warp/color_transform.h"
#include "cc/warp/fixed_point_warp.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace picture {
namespace {

Status Unsupported(Kind kind) {
  if (kind == Kind::kUnknown) {
    return DataLossError("not a JPEG, PNG, BMP or GIF picture (its first bytes match no picture format)");
  }
  return InvalidArgumentError(
      "a ", KindName(kind),
      " picture: not supported (tf_gulp's decoders read JPEG, PNG, BMP and GIF); convert it "
      "first, e.g. with PIL: Image.open(f).convert(\"RGB\").save(g, \"PNG\"), or ingest the "
      "folder with tf-gulp ingest image-folder, which converts it");
}

// Named so that they are refused by name, not read as damaged JPEGs.
bool IsTiff(const uint8_t* data, size_t size) {
  return size >= 4 && ((data[0] == 'I' && data[1] == 'I' && data[2] == 42 && data[3] == 0) ||
                       (data[0] == 'M' && data[1] == 'M' && data[2] == 0 && data[3] == 42));
}

bool IsWebp(const uint8_t* data, size_t size) {
  return size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0;
}

// Averages each s x s box of `src` (h x w x c) into `dst` (the ceil-divided size).
void BoxDownscale(const uint8_t* src, int h, int w, int c, int s, uint8_t* dst) {
  const int oh = (h + s - 1) / s, ow = (w + s - 1) / s;
  for (int oy = 0; oy < oh; ++oy) {
    const int y0 = oy * s, y1 = std::min(h, y0 + s);
    for (int ox = 0; ox < ow; ++ox) {
      const int x0 = ox * s, x1 = std::min(w, x0 + s);
      const int n = (y1 - y0) * (x1 - x0);
      for (int ch = 0; ch < c; ++ch) {
        int sum = 0;
        for (int y = y0; y < y1; ++y) {
          for (int x = x0; x < x1; ++x) sum += src[(static_cast<size_t>(y) * w + x) * c + ch];
        }
        dst[(static_cast<size_t>(oy) * ow + ox) * c + ch] = static_cast<uint8_t>((sum + n / 2) / n);
      }
    }
  }
}

// The header of a picture decoded whole (PNG, BMP, GIF).
Status WholeHeader(Kind kind, const uint8_t* data, size_t size, int* width, int* height,
                   bool* gray) {
  if (kind == Kind::kPng) {
    png::Header h;
    TFG_RETURN_IF_ERROR(png::ReadHeader(data, size, &h));
    *width = h.width, *height = h.height, *gray = h.gray;
    return Status::Ok();
  }
  if (kind == Kind::kGif) {
    gif::Header h;
    TFG_RETURN_IF_ERROR(gif::ReadHeader(data, size, &h));
    *width = h.width, *height = h.height, *gray = false;
    return Status::Ok();
  }
  bmp::Header h;
  TFG_RETURN_IF_ERROR(bmp::ReadHeader(data, size, &h));
  *width = h.width, *height = h.height, *gray = h.gray;
  return Status::Ok();
}

Status WholeDecode(Kind kind, const uint8_t* data, size_t size, int channels, uint8_t* dst) {
  if (kind == Kind::kPng) return png::Decode(data, size, channels, dst);
  if (kind == Kind::kGif) return gif::Decode(data, size, channels, dst);
  return bmp::Decode(data, size, channels, dst);
}

bool DecodedWhole(Kind kind) {
  return kind == Kind::kPng || kind == Kind::kBmp || kind == Kind::kGif;
}

// The whole PNG, BMP or GIF (its first frame), decoded into a per-thread buffer that is reused.
Status DecodeWholeBuffer(Kind kind, const uint8_t* data, size_t size, int channels, int* width,
                         int* height, std::vector<uint8_t>** pixels) {
  thread_local std::vector<uint8_t> buffer;
  bool gray = false;
  TFG_RETURN_IF_ERROR(WholeHeader(kind, data, size, width, height, &gray));
  buffer.resize(static_cast<size_t>(*width) * *height * channels);
  TFG_RETURN_IF_ERROR(WholeDecode(kind, data, size, channels, buffer.data()));
  *pixels = &buffer;
  return Status::Ok();
}

template <typename Out>
Status DecodeWarpedImpl(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options,
                        const jpeg::ImageInfo& info, const double matrix[9],
                        const jpeg::WarpTarget& target, Out* dst) {
  const Kind kind = Sniff(data, size);
  if (kind == Kind::kJpeg) {
    return jpeg::DecodeWarped(data, size, options, info, matrix, target, dst);
  }
  if (!DecodedWhole(kind)) return Unsupported(kind);
  const int channels = jpeg::Channels(options.color_space);
  int width = 0, height = 0;
  std::vector<uint8_t>* pixels = nullptr;
  TFG_RETURN_IF_ERROR(DecodeWholeBuffer(kind, data, size, channels, &width, &height, &pixels));
  warp::WarpGeometry g{height, width, channels, target.out_height, target.out_width};
  // The same output stage as the JPEG path's, colour included (WarpWithColor).
  auto warp_into = [&](const float* bias, const float* norm, Out* out) {
    if (warp::CanWarpAffine(g, matrix)) {
      if constexpr (std::is_same<Out, float>::value) {
        warp::WarpAffine(g, pixels->data(), matrix, bias, norm, target.oob_color, out);
      } else {
        warp::WarpAffine(g, pixels->data(), matrix, target.oob_color, out);
      }
      return Status::Ok();
    }
    float mf[9];
    for (int i = 0; i < 9; ++i) mf[i] = static_cast<float>(matrix[i]);
    if constexpr (std::is_same<Out, float>::value) {
      warp::WarpRows(g, pixels->data(), mf, bias, norm, target.oob_color, 0, g.out_height, out);
    } else {
      warp::WarpRows(g, pixels->data(), mf, target.oob_color, 0, g.out_height, out);
    }
    return Status::Ok();
  };
  return warp::WarpWithColor(target.color, g.out_height * g.out_width, channels, target.bias,
                             target.norm, dst, warp_into);
}

}  // namespace

Kind Sniff(const uint8_t* data, size_t size) {
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return Kind::kJpeg;
  if (png::IsPng(data, size)) return Kind::kPng;
  if (gif::IsGif(data, size)) return Kind::kGif;
  if (bmp::IsBmp(data, size)) return Kind::kBmp;
  if (IsTiff(data, size)) return Kind::kTiff;
  if (IsWebp(data, size)) return Kind::kWebp;
  return Kind::kUnknown;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kJpeg: return "JPEG";
    case Kind::kPng: return "PNG";
    case Kind::kGif: return "GIF";
    case Kind::kBmp: return "BMP";
    case Kind::kTiff: return "TIFF";
    case Kind::kWebp: return "WebP";
    case Kind::kUnknown: break;
  }
  return "unknown";
}

Status ReadHeader(const uint8_t* data, size_t size, jpeg::ImageInfo* info) {
  const Kind kind = Sniff(data, size);
  // A damaged JPEG whose SOI survived is still read as a JPEG (its error is
  // libjpeg's); bytes that start like nothing are too, for the same message.
  if (kind == Kind::kJpeg || kind == Kind::kUnknown) return jpeg::ReadHeader(data, size, info);
  if (!DecodedWhole(kind)) return Unsupported(kind);
  info->cmyk = false;
  return WholeHeader(kind, data, size, &info->width, &info->height, &info->gray);
}

Status Decode(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options, int width,
              int height, uint8_t* dst) {
  const Kind kind = Sniff(data, size);
  if (kind == Kind::kJpeg || kind == Kind::kUnknown) {
    return jpeg::Decode(data, size, options, width, height, dst);
  }
  if (!DecodedWhole(kind)) return Unsupported(kind);
  const int channels = jpeg::Channels(options.color_space);
  const int s = options.scale_denominator;
  int w = 0, h = 0;
  bool gray = false;
  TFG_RETURN_IF_ERROR(WholeHeader(kind, data, size, &w, &h, &gray));
  if ((w + s - 1) / s != width || (h + s - 1) / s != height) {
    return InvalidArgumentError(KindName(kind), " of ", w, "x", h, " at 1/", s, " is not the ",
                                width, "x", height, " asked for");
  }
  if (s == 1) return WholeDecode(kind, data, size, channels, dst);
  std::vector<uint8_t>* pixels = nullptr;
  TFG_RETURN_IF_ERROR(DecodeWholeBuffer(kind, data, size, channels, &w, &h, &pixels));
  BoxDownscale(pixels->data(), h, w, channels, s, dst);
  return Status::Ok();
}

Status DecodeWarped(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options,
                    const jpeg::ImageInfo& info, const double matrix[9],
                    const jpeg::WarpTarget& target, float* dst) {
  return DecodeWarpedImpl(data, size, options, info, matrix, target, dst);
}

Status DecodeWarped(const uint8_t* data, size_t size, const jpeg::DecodeOptions& options,
                    const jpeg::ImageInfo& info, const double matrix[9],
                    const jpeg::WarpTarget& target, uint8_t* dst) {
  return DecodeWarpedImpl(data, size, options, info, matrix, target, dst);
}

}  // namespace picture
}  // namespace tfg
