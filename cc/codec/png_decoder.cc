#include "cc/codec/png_decoder.h"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <string>
#include <vector>

#include "cc/codec/jpeg_decoder.h"

namespace tfg {
namespace png {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

// Deflate expands a byte into at most 1032 bytes; a pixel is at least one bit
// (1-bit gray), so a file cannot describe more than 8 * 1032 pixels per byte.
constexpr uint64_t kMaxPixelsPerByte = 8 * 1032;

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  std::string error;
};

void ReadBytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->size - r->pos) {
    r->error = "truncated PNG: needs " + std::to_string(n) + " more bytes at offset " +
               std::to_string(r->pos) + " of " + std::to_string(r->size);
    png_longjmp(png, 1);
  }
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

void OnError(png_structp png, png_const_charp message) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  if (r->error.empty()) r->error = message;
  png_longjmp(png, 1);
}

// Warnings are about ancillary chunks (an iCCP profile libpng dislikes, a bad
// CRC in a text chunk), which it skips: the pixels are intact, and
// tf.io.decode_png ignores them too. Damage to pixel data is an error.
void OnWarning(png_structp, png_const_charp) {}

// One libpng read struct, destroyed however the decode ends.
class Session {
 public:
  Session(const uint8_t* data, size_t size) : reader_{data, size} {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader_, OnError, OnWarning);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
    if (png_ != nullptr) png_set_read_fn(png_, &reader_, ReadBytes);
  }
  ~Session() { png_destroy_read_struct(&png_, info_ != nullptr ? &info_ : nullptr, nullptr); }
  bool ok() const { return png_ != nullptr && info_ != nullptr; }
  png_structp png() const { return png_; }
  png_infop info() const { return info_; }
  Status Error() const { return DataLossError("corrupt PNG: ", reader_.error); }

 private:
  Reader reader_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

}  // namespace

bool IsPng(const uint8_t* data, size_t size) {
  return size >= sizeof(kSignature) && std::memcmp(data, kSignature, sizeof(kSignature)) == 0;
}

Status ReadHeader(const uint8_t* data, size_t size, Header* header) {
  if (!IsPng(data, size)) return DataLossError("not a PNG: no PNG signature");
  Session s(data, size);
  if (!s.ok()) return InternalError("cannot create a PNG decoder");
  if (setjmp(png_jmpbuf(s.png()))) return s.Error();
  png_read_info(s.png(), s.info());
  const uint64_t width = png_get_image_width(s.png(), s.info());
  const uint64_t height = png_get_image_height(s.png(), s.info());
  const uint64_t pixels = width * height;
  if (pixels > jpeg::kMaxFramePixels) {
    return InvalidArgumentError("PNG header claims ", width, "x", height, " = ", pixels,
                                " pixels, over the limit of ", jpeg::kMaxFramePixels,
                                " pixels per picture (a damaged header or a decompression bomb)");
  }
  if (pixels > kMaxPixelsPerByte * size) {
    return DataLossError("PNG header claims ", width, "x", height, " = ", pixels,
                         " pixels, more than its ", size,
                         " bytes can encode: the header is damaged or the file truncated");
  }
  header->width = static_cast<int>(width);
  header->height = static_cast<int>(height);
  header->gray = (png_get_color_type(s.png(), s.info()) & PNG_COLOR_MASK_COLOR) == 0;
  return Status::Ok();
}

Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst) {
  Header header;
  TFG_RETURN_IF_ERROR(ReadHeader(data, size, &header));
  Session s(data, size);
  if (!s.ok()) return InternalError("cannot create a PNG decoder");
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(s.png()))) return s.Error();
  png_read_info(s.png(), s.info());
  png_structp png = s.png();
  const int color_type = png_get_color_type(png, s.info());
  // What tf.io.decode_png does: 8 bits per sample, no alpha, the asked channels.
  png_set_expand(png);  // palette -> RGB, gray < 8 bits -> 8 bits, tRNS -> alpha
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  if (channels == 3 && (color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
  if (channels == 1 && (color_type & PNG_COLOR_MASK_COLOR) != 0) {
    png_set_rgb_to_gray_fixed(png, 1, -1, -1);
  }
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, s.info());
  if (static_cast<int>(png_get_channels(png, s.info())) != channels ||
      png_get_rowbytes(png, s.info()) != static_cast<size_t>(header.width) * channels) {
    return DataLossError("PNG decodes to ", png_get_channels(png, s.info()),
                         " channels, expected ", channels);
  }
  rows.resize(header.height);
  for (int y = 0; y < header.height; ++y) {
    rows[y] = dst + static_cast<size_t>(y) * header.width * channels;
  }
  for (int pass = 0; pass < passes; ++pass) png_read_rows(png, rows.data(), nullptr, header.height);
  png_read_end(png, nullptr);
  return Status::Ok();
}

}  // namespace png
}  // namespace tfg
