#include "cc/codec/ycbcr.h"

#include <cstddef>
#include <vector>

namespace tfg {
namespace codec {
namespace {

// RoundClamp255 for the CPU loops: clamping first makes the rounding a
// truncation of a non-negative value, which the compiler vectorizes (floorf
// is a call on baseline x86-64). Same result for every float: below 0 both
// give 0, above 255 both give 255, in between floor(v + 0.5) == (int)(v + 0.5).
inline uint8_t ClampRound255(float v) {
  v = v < 0.f ? 0.f : (v > 255.f ? 255.f : v);
  return static_cast<uint8_t>(static_cast<int>(v + 0.5f));
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
  std::vector<float> cb(w), cr(w);
  std::vector<uint8_t> red(w), green(w), blue(w);
  const YcbcrMatrix m = p.matrix;
  for (int r = 0; r < h; ++r) {
    const ChromaTap ty = ChromaTapFor(y + r, p.shift_y, p.chroma_height, bilinear);
    const int s0 = rows.SlotFor(ty.i0, ty.i1);
    const int s1 = rows.SlotFor(ty.i1, ty.i0);
    const float ay = ty.a;
    const float* cb0 = rows.cb(s0);
    const float* cb1 = rows.cb(s1);
    const float* cr0 = rows.cr(s0);
    const float* cr1 = rows.cr(s1);
    const uint8_t* luma = p.y + (y + r) * p.y_stride + x;
    for (int c = 0; c < w; ++c) {
      // PixelToRgb's expressions, in the same order (bit-identical results).
      const float b = (1 - ay) * cb0[c] + ay * cb1[c];
      const float v_r = (1 - ay) * cr0[c] + ay * cr1[c];
      const float yy = (static_cast<float>(luma[c]) - m.y_offset) * m.y_scale;
      const float u = (b - 128.f) * m.c_scale, v = (v_r - 128.f) * m.c_scale;
      red[c] = ClampRound255(yy + m.r_cr * v);
      green[c] = ClampRound255(yy - m.g_cb * u - m.g_cr * v);
      blue[c] = ClampRound255(yy + m.b_cb * u);
    }
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
