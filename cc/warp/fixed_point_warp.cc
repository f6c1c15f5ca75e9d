#include "cc/warp/fixed_point_warp.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace tfg {
namespace warp {
namespace {

constexpr int kBits = 11;  // weights in 1/2048: 255 * 2048 * 2048 fits an int32
constexpr int32_t kOne = 1 << kBits;
// Coordinates are offset by 1 so they are positive (X >= -0.5) before the
// conversion to fixed point truncates.
constexpr double kOffset = 1.0;
constexpr int kCoordBits = 16;
// Pictures up to this size: (X + 1) * 2^16 stays well inside an int64 and
// the integer part inside an int32.
constexpr double kMaxCoordinate = 1 << 24;

// Where one output coordinate samples along one input axis: the two input
// indices (times `stride`) and the weight of the second, in fixed point.
struct Tap {
  int32_t first = 0, second = 0;
  int32_t weight = 0;
  bool inside = false;
};

// The taps of output coordinates 0..n-1 mapping to X = scale * i + offset on
// an input axis of `size` pixels: what Rows computes per pixel, computed once
// per column (or row) when the matrix has no rotation.
std::vector<Tap> Taps(double scale, double offset, int64_t n, int64_t size, int64_t stride) {
  constexpr double kUnit = 1 << kCoordBits;
  const int64_t lo = static_cast<int64_t>(std::ceil((kOffset - 0.5) * kUnit));
  const int64_t hi = static_cast<int64_t>(std::floor((size - 0.5 + kOffset) * kUnit));
  const int64_t step = std::llround(scale * kUnit);
  int64_t f = std::llround((offset + kOffset) * kUnit);
  const int32_t last = static_cast<int32_t>(size - 1);
  std::vector<Tap> taps(n);
  for (int64_t i = 0; i < n; ++i, f += step) {
    Tap& t = taps[i];
    t.inside = f >= lo && f <= hi;
    if (!t.inside) continue;
    const int32_t k = static_cast<int32_t>(f >> kCoordBits) - 1;
    t.weight = static_cast<int32_t>(f >> (kCoordBits - kBits)) & (kOne - 1);
    t.first = static_cast<int32_t>((k < 0 ? 0 : k) * stride);
    t.second = static_cast<int32_t>((k + 1 > last ? last : k + 1) * stride);
  }
  return taps;
}

// No rotation (flips and translations allowed): X depends on the output
// column only and Y on the row. Each output row blends its two input rows
// over the columns it samples (contiguous: vectorized), then each output
// pixel interpolates that blended row at its column's taps, computed once.
// About a third of the general loop's instructions per pixel.
template <int C, typename Out>
void SeparableRows(const WarpGeometry& g, const uint8_t* src, const double* m,
                   const float* scale, const float* shift, const Out* oob, Out* dst) {
  const std::vector<Tap> cols = Taps(m[0], m[2], g.out_width, g.in_width, C);
  const std::vector<Tap> rows = Taps(m[4], m[5], g.out_height, g.in_height, g.in_width * C);
  int32_t lo = INT32_MAX, hi = -1;  // the sampled values of a row, [lo, hi)
  for (const Tap& t : cols) {
    if (!t.inside) continue;
    lo = std::min(lo, std::min(t.first, t.second));
    hi = std::max(hi, std::max(t.first, t.second) + C);
  }
  float scale4[4] = {}, shift4[4] = {};
  for (int c = 0; c < C && c < 4; ++c) {
    scale4[c] = scale[c];
    shift4[c] = shift[c];
  }
  std::vector<float> wx(cols.size());
  for (size_t x = 0; x < cols.size(); ++x) wx[x] = cols[x].weight * (1.0f / kOne);
  // One float of padding: the vector path reads 4 values from a pixel's 3.
  std::vector<float> blended(hi > lo ? hi + 1 : 0);
  for (int64_t y = 0; y < g.out_height; ++y) {
    Out* px = dst + y * g.out_width * C;
    const Tap& r = rows[y];
    if (!r.inside || hi <= lo) {
      for (int64_t i = 0; i < g.out_width * C; ++i) px[i] = oob[i % C];
      continue;
    }
    const uint8_t* r0 = src + r.first;
    const uint8_t* r1 = src + r.second;
    const float wy = r.weight * (1.0f / kOne);
    float* b = blended.data();
    for (int32_t i = lo; i < hi; ++i) {
      const float top = r0[i];
      b[i] = top + wy * (static_cast<float>(r1[i]) - top);
    }
    for (int64_t x = 0; x < g.out_width; ++x, px += C) {
      const Tap& t = cols[x];
      if (!t.inside) {
        for (int c = 0; c < C; ++c) px[c] = oob[c];
        continue;
      }
      const float w = wx[x];
#ifdef __SSE2__
      if constexpr (C == 3) {
        // The pixel's 3 channels (and a 4th value, unused) at once.
        const __m128 left = _mm_loadu_ps(b + t.first);
        const __m128 right = _mm_loadu_ps(b + t.second);
        const __m128 v = _mm_add_ps(
            _mm_add_ps(left, _mm_mul_ps(_mm_set1_ps(w), _mm_sub_ps(right, left))),
            _mm_set1_ps(0.5f));
        const __m128i q = _mm_min_epi16(_mm_cvttps_epi32(v), _mm_set1_epi32(255));
        if constexpr (std::is_same<Out, float>::value) {
          alignas(16) float out[4];
          _mm_store_ps(out, _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(q), _mm_loadu_ps(scale4)),
                                       _mm_loadu_ps(shift4)));
          px[0] = out[0];
          px[1] = out[1];
          px[2] = out[2];
        } else {
          const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(q, q), q);
          const uint32_t packed = static_cast<uint32_t>(_mm_cvtsi128_si32(bytes));
          px[0] = static_cast<uint8_t>(packed);
          px[1] = static_cast<uint8_t>(packed >> 8);
          px[2] = static_cast<uint8_t>(packed >> 16);
        }
        continue;
      }
#endif
      for (int c = 0; c < C; ++c) {
        const float left = b[t.first + c];
        // In [0, 255] up to rounding: truncating v + 0.5 rounds half up.
        const int32_t v = static_cast<int32_t>(left + w * (b[t.second + c] - left) + 0.5f);
        if constexpr (std::is_same<Out, float>::value) {
          px[c] = static_cast<float>(v > 255 ? 255 : v) * scale[c] + shift[c];
        } else {
          px[c] = static_cast<uint8_t>(v > 255 ? 255 : v);
        }
      }
    }
  }
}

template <int C, typename Out>
void Rows(const WarpGeometry& g, const uint8_t* src, const double* m, const float* bias,
          const float* norm, const float* oob_color, Out* dst) {
  const int64_t in_row = g.in_width * C;
  const double x_hi = static_cast<double>(g.in_width) - 0.5;
  const double y_hi = static_cast<double>(g.in_height) - 0.5;
  const int32_t last_x = static_cast<int32_t>(g.in_width - 1);
  const int32_t last_y = static_cast<int32_t>(g.in_height - 1);
  float scale[C] = {}, shift[C] = {};
  Out oob[C];
  for (int c = 0; c < C; ++c) {
    if constexpr (std::is_same<Out, float>::value) {
      scale[c] = norm[c];
      shift[c] = -bias[c] * norm[c];
      oob[c] = oob_color[c];
    } else {
      const float v = oob_color[c];
      oob[c] = static_cast<uint8_t>(v < 0.f ? 0.f : v > 255.f ? 255.f : v + 0.5f);
    }
  }
  if (m[1] == 0.0 && m[3] == 0.0) {
    SeparableRows<C>(g, src, m, scale, shift, oob, dst);
    return;
  }
  // Coordinates (X + 1, Y + 1) in 16.16 fixed point, stepped along a row by
  // integer additions: the rounding of a step drifts by at most
  // out_width * 2^-17 pixels along a row.
  constexpr double kUnit = 1 << kCoordBits;
  const int64_t lo = static_cast<int64_t>(std::ceil((kOffset - 0.5) * kUnit));
  const int64_t hi_x = static_cast<int64_t>(std::floor((x_hi + kOffset) * kUnit));
  const int64_t hi_y = static_cast<int64_t>(std::floor((y_hi + kOffset) * kUnit));
  const int64_t step_x = std::llround(m[0] * kUnit), step_y = std::llround(m[3] * kUnit);
  for (int64_t y = 0; y < g.out_height; ++y) {
    Out* px = dst + y * g.out_width * C;
    int64_t fx = std::llround((m[1] * y + m[2] + kOffset) * kUnit);
    int64_t fy = std::llround((m[4] * y + m[5] + kOffset) * kUnit);
    for (int64_t x = 0; x < g.out_width; ++x, px += C, fx += step_x, fy += step_y) {
      if (!(fx >= lo && fx <= hi_x && fy >= lo && fy <= hi_y)) {
        for (int c = 0; c < C; ++c) px[c] = oob[c];
        continue;
      }
      const int32_t ix = static_cast<int32_t>(fx >> kCoordBits) - 1;
      const int32_t iy = static_cast<int32_t>(fy >> kCoordBits) - 1;
      const int32_t ax = static_cast<int32_t>(fx >> (kCoordBits - kBits)) & (kOne - 1);
      const int32_t ay = static_cast<int32_t>(fy >> (kCoordBits - kBits)) & (kOne - 1);
      const int32_t x0 = ix < 0 ? 0 : ix, x1 = ix + 1 > last_x ? last_x : ix + 1;
      const int32_t y0 = iy < 0 ? 0 : iy, y1 = iy + 1 > last_y ? last_y : iy + 1;
      const uint8_t* r0 = src + y0 * in_row;
      const uint8_t* r1 = src + y1 * in_row;
      const uint8_t* p00 = r0 + x0 * C;
      const uint8_t* p01 = r0 + x1 * C;
      const uint8_t* p10 = r1 + x0 * C;
      const uint8_t* p11 = r1 + x1 * C;
      for (int c = 0; c < C; ++c) {
        const int32_t top = p00[c] * (kOne - ax) + p01[c] * ax;
        const int32_t bottom = p10[c] * (kOne - ax) + p11[c] * ax;
        // In [0, 255 * 2^22]; rounded half up to [0, 255].
        const int32_t v = (top * (kOne - ay) + bottom * ay + (1 << (2 * kBits - 1))) >>
                          (2 * kBits);
        if constexpr (std::is_same<Out, float>::value) {
          px[c] = static_cast<float>(v) * scale[c] + shift[c];
        } else {
          px[c] = static_cast<uint8_t>(v);
        }
      }
    }
  }
}

template <typename Out>
void Dispatch(const WarpGeometry& g, const uint8_t* src, const double* m, const float* bias,
              const float* norm, const float* oob_color, Out* dst) {
  if (g.channels == 3) {
    Rows<3>(g, src, m, bias, norm, oob_color, dst);
  } else {
    Rows<1>(g, src, m, bias, norm, oob_color, dst);
  }
}

}  // namespace

bool CanWarpAffine(const WarpGeometry& g, const double m[9]) {
  if (!(m[6] == 0.0 && m[7] == 0.0 && m[8] == 1.0)) return false;
  if (g.layout != Layout::kNHWC || (g.channels != 1 && g.channels != 3)) return false;
  if (g.in_width >= kMaxCoordinate || g.in_height >= kMaxCoordinate) return false;
  for (int i = 0; i < 6; ++i) {
    // Finite and small enough for the fixed point (larger means sampling
    // far outside any picture: WarpRows handles it).
    if (!(std::fabs(m[i]) < kMaxCoordinate)) return false;
  }
  if (std::fabs(m[0]) * g.out_width + std::fabs(m[1]) * g.out_height + std::fabs(m[2]) >=
          kMaxCoordinate ||
      std::fabs(m[3]) * g.out_width + std::fabs(m[4]) * g.out_height + std::fabs(m[5]) >=
          kMaxCoordinate) {
    return false;
  }
  return true;
}

void WarpAffine(const WarpGeometry& g, const uint8_t* src, const double matrix[9],
                const float* bias, const float* norm, const float* oob_color, float* dst) {
  Dispatch(g, src, matrix, bias, norm, oob_color, dst);
}

void WarpAffine(const WarpGeometry& g, const uint8_t* src, const double matrix[9],
                const float* oob_color, uint8_t* dst) {
  Dispatch<uint8_t>(g, src, matrix, nullptr, nullptr, oob_color, dst);
}

}  // namespace warp
}  // namespace tfg
