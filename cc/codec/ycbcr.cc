#include "cc/codec/ycbcr.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tfg {
namespace codec {
namespace {

// RoundClamp255 for the CPU loops, without floorf (a call on baseline x86-64)
// or float compares (not if-converted under -ftrapping-math), so the loop
// vectorizes: truncating v + 0.5 and clamping the integer. Same result for
// every v the conversion can make (|v| < 2^31): truncation differs from floor
// only below 0, where both clamp to 0.
inline uint8_t ClampRound255(float v) {
  const int q = static_cast<int>(v + 0.5f);
  return static_cast<uint8_t>(std::min(std::max(q, 0), 255));
}

// Chroma of one plane interpolated horizontally at the region's columns, for
// one chroma row: (1 - ax) * row[c0] + ax * row[c1], the first half of
// PixelToRgb's bilinear expression, in its order of operations.
void HorizontalRow(const uint8_t* row, const std::vector<ChromaTap>& taps, float* out) {
  const size_t n = taps.size();
  for (size_t c = 0; c < n; ++c) {
    const ChromaTap& t = taps[c];
    out[c] = (1 - t.a) * row[t.i0] + t.a * row[t.i1];
  }
}

// The horizontally interpolated Cb and Cr of the two chroma rows the current
// luma row needs. Luma rows walk down, so each chroma row is interpolated once
// (not once per luma row and tap, as per-pixel PixelToRgb does).
class ChromaRows {
 public:
  ChromaRows(const YcbcrPicture& p, const std::vector<ChromaTap>& taps)
      : p_(p), taps_(taps) {
    for (int s = 0; s < 2; ++s) {
      cb_[s].resize(taps.size());
      cr_[s].resize(taps.size());
    }
  }

  // Slot holding chroma row `i`, filled if needed without evicting `keep`.
  int SlotFor(int i, int keep) {
    for (int s = 0; s < 2; ++s) {
      if (index_[s] == i) return s;
    }
    const int s = index_[0] == keep ? 1 : 0;
    HorizontalRow(p_.cb + i * p_.cb_stride, taps_, cb_[s].data());
    HorizontalRow(p_.cr + i * p_.cr_stride, taps_, cr_[s].data());
    index_[s] = i;
    return s;
  }

  const float* cb(int s) const { return cb_[s].data(); }
  const float* cr(int s) const { return cr_[s].data(); }

 private:
  const YcbcrPicture& p_;
  const std::vector<ChromaTap>& taps_;
  int index_[2] = {-1, -1};
  std::vector<float> cb_[2], cr_[2];
};

// One row: the vertical chroma blend, the matrix and the rounding of
// PixelToRgb, in its order of operations (bit-identical results). A function
// of its own so that __restrict (honoured on parameters) tells the compiler
// the uint8 outputs alias no input, and the loop vectorizes.
void ConvertRow(const float* __restrict cb0, const float* __restrict cb1,
                const float* __restrict cr0, const float* __restrict cr1,
                const uint8_t* __restrict luma, float ay, const YcbcrMatrix m, int w,
                uint8_t* __restrict red, uint8_t* __restrict green, uint8_t* __restrict blue) {
  for (int c = 0; c < w; ++c) {
    const float b = (1 - ay) * cb0[c] + ay * cb1[c];
    const float r = (1 - ay) * cr0[c] + ay * cr1[c];
    const float yy = (static_cast<float>(luma[c]) - m.y_offset) * m.y_scale;
    const float u = (b - 128.f) * m.c_scale, v = (r - 128.f) * m.c_scale;
    red[c] = ClampRound255(yy + m.r_cr * v);
    green[c] = ClampRound255(yy - m.g_cb * u - m.g_cr * v);
    blue[c] = ClampRound255(yy + m.b_cb * u);
  }
}

}  // namespace

// Row by row, bit-identical to PixelToRgb at every pixel (tests/ycbcr_test
// compares them): the taps of each column are computed once per call and of
// each row once per row, chroma rows are interpolated horizontally once, and
// the per-pixel work (vertical blend, matrix, rounding) runs over float arrays
// the compiler vectorizes.
void RegionToRgb(const YcbcrPicture& p, int x, int y, int w, int h, bool bilinear,
                 uint8_t* dst) {
  if (p.cb == nullptr) {  // gray: a table of the 256 luma values
    uint8_t table[256];
    for (int v = 0; v < 256; ++v) {
      table[v] = RoundClamp255((static_cast<float>(v) - p.matrix.y_offset) * p.matrix.y_scale);
    }
    for (int r = 0; r < h; ++r) {
      const uint8_t* luma = p.y + (y + r) * p.y_stride + x;
      uint8_t* out = dst + static_cast<size_t>(r) * w * 3;
      for (int c = 0; c < w; ++c) out[3 * c] = out[3 * c + 1] = out[3 * c + 2] = table[luma[c]];
    }
    return;
  }
  std::vector<ChromaTap> taps(w);
  for (int c = 0; c < w; ++c) {
    taps[c] = ChromaTapFor(x + c, p.shift_x, p.chroma_width, bilinear);
    taps[c].i0 *= p.chroma_step;
    taps[c].i1 *= p.chroma_step;
  }
  ChromaRows rows(p, taps);
  std::vector<uint8_t> red(w), green(w), blue(w);
  for (int r = 0; r < h; ++r) {
    const ChromaTap ty = ChromaTapFor(y + r, p.shift_y, p.chroma_height, bilinear);
    const int s0 = rows.SlotFor(ty.i0, ty.i1);
    const int s1 = rows.SlotFor(ty.i1, ty.i0);
    ConvertRow(rows.cb(s0), rows.cb(s1), rows.cr(s0), rows.cr(s1),
               p.y + (y + r) * p.y_stride + x, ty.a, p.matrix, w, red.data(), green.data(),
               blue.data());
    uint8_t* out = dst + static_cast<size_t>(r) * w * 3;
    for (int c = 0; c < w; ++c) {
      out[3 * c] = red[c];
      out[3 * c + 1] = green[c];
      out[3 * c + 2] = blue[c];
    }
  }
}

}  // namespace codec
}  // namespace tfg
