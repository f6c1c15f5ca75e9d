#include "cc/util/printable_text.h"

#include <cstdint>

namespace tfg {
namespace {

// Length of the well-formed UTF-8 sequence at `s[i]` (1..4), or 0 when the
// bytes there are not one (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF). Sets *code_point.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  size_t len;
  uint32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF where a sequence starts
  }
  if (s.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return len;
}

void AppendHex(uint8_t b, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->append("\\x");
  out->push_back(kHex[b >> 4]);
  out->push_back(kHex[b & 15]);
}

template <bool kEscapeControls>
std::string Escape(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    uint32_t cp = 0;
    const size_t len = Utf8SequenceAt(bytes, i, &cp);
    if (len == 0) {
      AppendHex(static_cast<uint8_t>(bytes[i]), &out);
      ++i;
      continue;
    }
    if (kEscapeControls && (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))) {
      if (cp == '\n') {
        out.append("\\n");
      } else if (cp == '\t') {
        out.append("\\t");
      } else if (cp == '\r') {
        out.append("\\r");
      } else {
        for (size_t k = 0; k < len; ++k) AppendHex(static_cast<uint8_t>(bytes[i + k]), &out);
      }
    } else {
      out.append(bytes.data() + i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace

std::string PrintableText(std::string_view bytes) { return Escape<true>(bytes); }

std::string ValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    const size_t len = Utf8SequenceAt(text, i, &cp);
    if (len == 0) return Escape<false>(text);
    i += len;
  }
  return std::string(text);
}

}  // namespace tfg
