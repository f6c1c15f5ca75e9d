#include "cc/codec/bmp_decoder.h"

#include <cstring>

#include "cc/codec/jpeg_decoder.h"

namespace tfg {
namespace bmp {
namespace {

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

struct Layout {
  Header header;
  int bits = 0;
  bool top_down = false;
  uint64_t pixels_at = 0;
  uint64_t row_bytes = 0;
  // 8-bit: the palette's BGRX entries (after the info header) and how many.
  uint64_t palette_at = 0;
  uint32_t colors = 0;
};

Status Parse(const uint8_t* data, size_t size, Layout* out) {
  // File header (14 bytes) and at least the BITMAPINFOHEADER (40).
  if (size < 54 || !IsBmp(data, size)) return DataLossError("not a BMP: truncated header");
  const uint32_t pixels_at = Le32(data + 10), info_size = Le32(data + 14);
  if (info_size < 40 || 14 + uint64_t{info_size} > size) {
    return DataLossError("BMP: info header of ", info_size, " bytes in a ", size, "-byte file");
  }
  const int32_t width = static_cast<int32_t>(Le32(data + 18));
  const int32_t height = static_cast<int32_t>(Le32(data + 22));
  const int bits = Le16(data + 28);
  const uint32_t compression = Le32(data + 30);
  if (bits != 8 && bits != 24 && bits != 32) {
    return InvalidArgumentError("a ", bits, "-bit BMP: tf_gulp reads 8-, 24- and 32-bit BMPs "
                                "(as tf.io.decode_bmp); convert it to PNG");
  }
  // BI_BITFIELDS only with 32 bits and the standard BGRA masks: what decode_bmp assumes.
  const bool bitfields = compression == 3 && bits == 32 && info_size >= 52 &&
                         Le32(data + 54) == 0x00FF0000u && Le32(data + 58) == 0x0000FF00u &&
                         Le32(data + 62) == 0x000000FFu;
  if (compression != 0 && !bitfields) {
    return InvalidArgumentError("a compressed BMP (compression ", compression,
                                "): tf_gulp reads uncompressed BMPs; convert it to PNG");
  }
  if (width <= 0 || height == 0 || height == INT32_MIN) {
    return DataLossError("corrupt BMP header: image size ", width, "x", height);
  }
  Layout l;
  if (bits == 8) {
    // biClrUsed: 0 means all 256.
    const uint32_t used = Le32(data + 46);
    if (used > 256) return DataLossError("corrupt BMP header: a palette of ", used, " colours");
    l.colors = used == 0 ? 256 : used;
    l.palette_at = 14 + uint64_t{info_size};
    if (l.palette_at + 4 * uint64_t{l.colors} > size) {
      return DataLossError("truncated BMP: a palette of ", l.colors, " colours at offset ",
                           l.palette_at, " does not fit in ", size, " bytes");
    }
    l.header.gray = true;
    for (uint32_t i = 0; i < l.colors; ++i) {
      const uint8_t* bgr = data + l.palette_at + 4 * i;
      l.header.gray = l.header.gray && bgr[0] == bgr[1] && bgr[1] == bgr[2];
    }
  }
  l.header.width = width;
  l.header.height = height < 0 ? -height : height;
  l.bits = bits;
  l.top_down = height < 0;
  l.pixels_at = pixels_at;
  l.row_bytes = (uint64_t{static_cast<uint32_t>(width)} * bits + 31) / 32 * 4;
  const uint64_t pixels = uint64_t{static_cast<uint32_t>(width)} * l.header.height;
  if (pixels > jpeg::kMaxFramePixels) {
    return InvalidArgumentError("BMP header claims ", width, "x", l.header.height,
                                " pixels, over the limit of ", jpeg::kMaxFramePixels);
  }
  if (pixels_at > size || l.row_bytes * l.header.height > size - pixels_at) {
    return DataLossError("truncated BMP: ", l.header.height, " rows of ", l.row_bytes,
                         " bytes from offset ", pixels_at, " do not fit in ", size, " bytes");
  }
  *out = l;
  return Status::Ok();
}

}  // namespace

bool IsBmp(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 'B' && data[1] == 'M';
}

Status ReadHeader(const uint8_t* data, size_t size, Header* header) {
  Layout l;
  TFG_RETURN_IF_ERROR(Parse(data, size, &l));
  *header = l.header;
  return Status::Ok();
}

Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst) {
  Layout l;
  TFG_RETURN_IF_ERROR(Parse(data, size, &l));
  const int w = l.header.width, h = l.header.height, in = l.bits / 8;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = data + l.pixels_at + l.row_bytes * (l.top_down ? y : h - 1 - y);
    uint8_t* out = dst + static_cast<size_t>(y) * w * channels;
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = row + static_cast<size_t>(x) * in;
      if (in == 1) {  // an index into the BGRX palette
        if (p[0] >= l.colors) {
          return DataLossError("corrupt BMP: colour index ", int{p[0]}, " at pixel (", x, ", ",
                               y, ") outside its palette of ", l.colors);
        }
        p = data + l.palette_at + 4 * p[0];
      }
      // BGR(A) -> RGB.
      const uint8_t r = p[2], g = p[1], b = p[0];
      if (channels == 3) {
        out[3 * x] = r;
        out[3 * x + 1] = g;
        out[3 * x + 2] = b;
      } else {  // libjpeg's luma weights, as the other codecs' gray
        out[x] = static_cast<uint8_t>((19595 * r + 38470 * g + 7471 * b + 32768) >> 16);
      }
    }
  }
  return Status::Ok();
}

}  // namespace bmp
}  // namespace tfg
