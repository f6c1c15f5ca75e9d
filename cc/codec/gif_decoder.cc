#include "cc/codec/gif_decoder.h"

#include <cstring>
#include <vector>

#include "cc/codec/jpeg_decoder.h"

namespace tfg {
namespace gif {
namespace {

uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// A bounded reader over the file: every read is checked.
struct Cursor {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  bool Has(size_t n) const { return n <= size - pos; }
};

Status Truncated(const Cursor& c, const char* what) {
  return DataLossError("truncated GIF: ", what, " at offset ", c.pos, " of ", c.size, " bytes");
}

// Skips data sub-blocks (each a length byte, then that many bytes) to the
// terminator; or appends them to `out`.
Status SubBlocks(Cursor* c, std::vector<uint8_t>* out) {
  while (true) {
    if (!c->Has(1)) return Truncated(*c, "data sub-block");
    const size_t n = c->data[c->pos++];
    if (n == 0) return Status::Ok();
    if (!c->Has(n)) return Truncated(*c, "data sub-block");
    if (out != nullptr) out->insert(out->end(), c->data + c->pos, c->data + c->pos + n);
    c->pos += n;
  }
}

// GIF's LZW: variable-width codes, LSB first, from `min_bits + 1` bits up to
// 12; a clear code resets the table. Writes at most `count` indices.
Status Lzw(const std::vector<uint8_t>& in, int min_bits, size_t count, std::vector<uint8_t>* out) {
  if (min_bits < 2 || min_bits > 8) return DataLossError("corrupt GIF: LZW code size ", min_bits);
  const int clear = 1 << min_bits, end = clear + 1;
  std::vector<uint16_t> prefix(4096);
  std::vector<uint8_t> suffix(4096), stack(4097);
  for (int i = 0; i < clear; ++i) suffix[i] = static_cast<uint8_t>(i);
  int bits = min_bits + 1, next = end + 1, previous = -1;
  uint8_t first = 0;
  uint32_t buffer = 0;
  int buffered = 0;
  size_t at = 0;
  out->clear();
  out->reserve(count);
  while (out->size() < count) {
    while (buffered < bits && at < in.size()) {
      buffer |= uint32_t{in[at++]} << buffered;
      buffered += 8;
    }
    if (buffered < bits) break;  // the data ended: the rest of the frame stays black
    const int code = static_cast<int>(buffer & ((1u << bits) - 1));
    buffer >>= bits;
    buffered -= bits;
    if (code == clear) {
      bits = min_bits + 1;
      next = end + 1;
      previous = -1;
      continue;
    }
    if (code == end) break;
    if (previous < 0) {
      if (code >= clear) return DataLossError("corrupt GIF: LZW code ", code, " after a clear");
      out->push_back(static_cast<uint8_t>(code));
      first = static_cast<uint8_t>(code);
      previous = code;
      continue;
    }
    int walk = code;
    size_t depth = 0;
    if (code > next || (code == next && next >= 4096)) {
      return DataLossError("corrupt GIF: LZW code ", code, " past the table (", next, ")");
    }
    if (code == next) {  // the KwKwK case: the previous string plus its first byte
      stack[depth++] = first;
      walk = previous;
    }
    while (walk >= clear) {
      stack[depth++] = suffix[walk];
      walk = prefix[walk];
    }
    stack[depth++] = static_cast<uint8_t>(walk);
    first = static_cast<uint8_t>(walk);
    while (depth > 0 && out->size() < count) out->push_back(stack[--depth]);
    if (next < 4096) {
      prefix[next] = static_cast<uint16_t>(previous);
      suffix[next] = first;
      ++next;
      if (next == (1 << bits) && bits < 12) ++bits;
    }
    previous = code;
  }
  return Status::Ok();
}

}  // namespace

bool IsGif(const uint8_t* data, size_t size) {
  return size >= 6 && (std::memcmp(data, "GIF87a", 6) == 0 || std::memcmp(data, "GIF89a", 6) == 0);
}

Status ReadHeader(const uint8_t* data, size_t size, Header* header) {
  if (size < 13 || !IsGif(data, size)) return DataLossError("not a GIF: truncated header");
  header->width = Le16(data + 6);
  header->height = Le16(data + 8);
  if (header->width == 0 || header->height == 0) {
    return DataLossError("corrupt GIF header: screen size ", header->width, "x", header->height);
  }
  // 65535 x 65535 passes kMaxFramePixels' 2^27 check only when it is smaller.
  if (uint64_t{static_cast<uint32_t>(header->width)} * header->height > jpeg::kMaxFramePixels) {
    return InvalidArgumentError("GIF header claims ", header->width, "x", header->height,
                                " pixels, over the limit of ", jpeg::kMaxFramePixels);
  }
  return Status::Ok();
}

Status Decode(const uint8_t* data, size_t size, int channels, uint8_t* dst) {
  Header header;
  TFG_RETURN_IF_ERROR(ReadHeader(data, size, &header));
  const int sw = header.width, sh = header.height;
  std::memset(dst, 0, static_cast<size_t>(sw) * sh * channels);
  Cursor c{data, size, 13};
  const uint8_t flags = data[10];
  const uint8_t* global = nullptr;
  int global_size = 0;
  if (flags & 0x80) {
    global_size = 2 << (flags & 7);
    if (!c.Has(3 * static_cast<size_t>(global_size))) return Truncated(c, "global colour table");
    global = data + c.pos;
    c.pos += 3 * global_size;
  }
  int transparent = -1;
  while (true) {
    if (!c.Has(1)) return Truncated(c, "block");
    const uint8_t block = data[c.pos++];
    if (block == 0x3B) return DataLossError("corrupt GIF: no image before the trailer");
    if (block == 0x21) {  // an extension: a graphic control one says the transparent index
      if (!c.Has(1)) return Truncated(c, "extension");
      const uint8_t label = data[c.pos++];
      if (label == 0xF9 && c.Has(6) && data[c.pos] == 4) {
        if (data[c.pos + 1] & 1) transparent = data[c.pos + 4];
      }
      TFG_RETURN_IF_ERROR(SubBlocks(&c, nullptr));
      continue;
    }
    if (block != 0x2C) return DataLossError("corrupt GIF: block 0x", std::to_string(block),
                                            " at offset ", c.pos - 1);
    break;
  }
  if (!c.Has(9)) return Truncated(c, "image descriptor");
  const int left = Le16(data + c.pos), top = Le16(data + c.pos + 2);
  const int fw = Le16(data + c.pos + 4), fh = Le16(data + c.pos + 6);
  const uint8_t image_flags = data[c.pos + 8];
  c.pos += 9;
  const uint8_t* table = global;
  int table_size = global_size;
  if (image_flags & 0x80) {
    table_size = 2 << (image_flags & 7);
    if (!c.Has(3 * static_cast<size_t>(table_size))) return Truncated(c, "local colour table");
    table = data + c.pos;
    c.pos += 3 * table_size;
  }
  if (table == nullptr) return DataLossError("corrupt GIF: an image without a colour table");
  if (!c.Has(1)) return Truncated(c, "LZW code size");
  const int min_bits = data[c.pos++];
  std::vector<uint8_t> lzw, indices;
  TFG_RETURN_IF_ERROR(SubBlocks(&c, &lzw));
  const size_t count = static_cast<size_t>(fw) * fh;
  if (count > jpeg::kMaxFramePixels) return DataLossError("corrupt GIF: frame ", fw, "x", fh);
  TFG_RETURN_IF_ERROR(Lzw(lzw, min_bits, count, &indices));
  // Interlaced frames store rows 0, 8, 16..., then 4, 12..., then 2, 6..., then 1, 3...
  std::vector<int> rows;
  if (image_flags & 0x40) {
    const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
    for (int p = 0; p < 4; ++p) {
      for (int y = starts[p]; y < fh; y += steps[p]) rows.push_back(y);
    }
  } else {
    for (int y = 0; y < fh; ++y) rows.push_back(y);
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    const int y = top + rows[i / fw], x = left + static_cast<int>(i % fw);
    const int index = indices[i];
    if (index == transparent || x >= sw || y >= sh) continue;  // black, or off the screen
    if (index >= table_size) {
      return DataLossError("corrupt GIF: colour index ", index, " outside its table of ",
                           table_size);
    }
    const uint8_t* rgb = table + 3 * index;
    uint8_t* out = dst + (static_cast<size_t>(y) * sw + x) * channels;
    if (channels == 3) {
      std::memcpy(out, rgb, 3);
    } else {
      out[0] = static_cast<uint8_t>((19595 * rgb[0] + 38470 * rgb[1] + 7471 * rgb[2] + 32768) >> 16);
    }
  }
  return Status::Ok();
}

}  // namespace gif
}  // namespace tfg
