#include "cc/warp/similarity_warp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "cc/util/parse_choice.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tfg {
namespace warp {
namespace {

// Output pictures larger than this many values per picture are refused (a
// guard against a typo allocating terabytes, not a format limit).
constexpr int64_t kMaxOutputValues = int64_t{1} << 34;
constexpr int64_t kMaxSide = int64_t{1} << 20;

struct Strides {
  int64_t x, y, c;
};

Strides StridesOf(Layout layout, int64_t height, int64_t width,
                  int64_t channels) {
  if (layout == Layout::kNHWC) return {channels, width * channels, 1};
  return {1, width, height * width};
}

}  // namespace

Status ParseLayout(const std::string& name, Layout* layout) {
  return ParseChoice<Layout>("layout", name, {{"NHWC", Layout::kNHWC}, {"NCHW", Layout::kNCHW}},
                             layout);
}

Status ValidateGeometry(const WarpGeometry& g, int64_t bias_size,
                        int64_t norm_size, int64_t oob_size) {
  if (g.in_height <= 0 || g.in_width <= 0 || g.channels <= 0) {
    return InvalidArgumentError("similarity_warp: input pictures must be non-empty, got ",
                                g.in_height, "x", g.in_width, "x", g.channels);
  }
  if (g.out_height <= 0 || g.out_width <= 0 || g.out_height > kMaxSide ||
      g.out_width > kMaxSide ||
      g.out_height * g.out_width * g.channels > kMaxOutputValues) {
    return InvalidArgumentError("similarity_warp: output_shape must be positive (and sane), got ",
                                g.out_height, "x", g.out_width);
  }
  const char* names[3] = {"bias", "norm", "oob_color"};
  const int64_t sizes[3] = {bias_size, norm_size, oob_size};
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] != g.channels) {
      return InvalidArgumentError("similarity_warp: ", names[i], " must hold one value per channel (",
                                  g.channels, "), got ", sizes[i]);
    }
  }
  return Status::Ok();
}

Status ValidateMatrix(const float* matrix, int64_t index) {
  for (int i = 0; i < 9; ++i) {
    if (!std::isfinite(matrix[i])) {
      return InvalidArgumentError("similarity_warp: matrix ", index,
                                  " has a non-finite value at [", i / 3, ", ",
                                  i % 3, "]");
    }
  }
  return Status::Ok();
}

namespace {

// The value written for a sample q in [0, 255]: (q - bias) * norm as float,
// or q itself as uint8 (no bias or norm).
inline void Store(float q, const float* bias, const float* norm, int64_t c, float* out) {
  *out = (q - bias[c]) * norm[c];
}
inline void Store(float q, const float*, const float*, int64_t, uint8_t* out) {
  *out = static_cast<uint8_t>(q);
}
inline void StoreOob(float v, float* out) { *out = v; }
inline void StoreOob(float v, uint8_t* out) {
  *out = static_cast<uint8_t>(v < 0.f ? 0.f : v > 255.f ? 255.f : v + 0.5f);
}

#if defined(__SSE2__)
// The three bytes of an RGB pixel as floats in lanes 0-2 (lane 3 is 0);
// reads exactly three bytes.
inline __m128 Rgb(const uint8_t* p) {
  const int32_t v = p[0] | (p[1] << 8) | (p[2] << 16);
  const __m128i zero = _mm_setzero_si128();
  const __m128i b = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(v), zero), zero);
  return _mm_cvtepi32_ps(b);
}
#endif

// One output row; C > 0 fixes the channel count at compile time (the common
// RGB case), C == 0 reads it from the geometry.
template <int C, typename Out>
void WarpRow(const WarpGeometry& g, const Strides& in, const Strides& out,
             const uint8_t* src, const double* m, bool affine, const float* bias,
             const float* norm, const float* oob_color, int64_t y, Out* row) {
  const int64_t channels = C > 0 ? C : g.channels;
  const double x_hi = static_cast<double>(g.in_width) - 0.5;
  const double y_hi = static_cast<double>(g.in_height) - 0.5;
  const int64_t last_x = g.in_width - 1, last_y = g.in_height - 1;
  const double row_x = m[1] * y + m[2], row_y = m[4] * y + m[5], row_w = m[7] * y + m[8];
#if defined(__SSE2__)
  // Float RGB pixels next to each other (NHWC): the channel loop in SSE2.
  constexpr bool kFloatRgb = std::is_same<Out, float>::value && C == 3;
  const bool rgb_nhwc = kFloatRgb && in.x == 3 && in.c == 1 && out.x == 3 && out.c == 1;
  const __m128 bias_v = rgb_nhwc ? _mm_setr_ps(bias[0], bias[1], bias[2], 0.f) : _mm_setzero_ps();
  const __m128 norm_v = rgb_nhwc ? _mm_setr_ps(norm[0], norm[1], norm[2], 0.f) : _mm_setzero_ps();
#endif
  for (int64_t x = 0; x < g.out_width; ++x) {
    Out* px = row + x * out.x;
    double X = m[0] * x + row_x;
    double Y = m[3] * x + row_y;
    bool inside = true;
    if (!affine) {
      const double W = m[6] * x + row_w;
      if (W > 0) {
        X /= W;
        Y /= W;
      } else {
        inside = false;
      }
    }
    // Written so that NaN coordinates count as outside.
    inside = inside && X >= -0.5 && X <= x_hi && Y >= -0.5 && Y <= y_hi;
    if (!inside) {
      for (int64_t c = 0; c < channels; ++c) StoreOob(oob_color[c], &px[c * out.c]);
      continue;
    }
    // X, Y >= -0.5, so truncating X + 1 is floor(X) + 1.
    const int64_t ix = static_cast<int64_t>(X + 1.0) - 1;
    const int64_t iy = static_cast<int64_t>(Y + 1.0) - 1;
    const float ax = static_cast<float>(X - static_cast<double>(ix));
    const float ay = static_cast<float>(Y - static_cast<double>(iy));
    const int64_t x0 = ix < 0 ? 0 : ix;
    const int64_t x1 = ix + 1 > last_x ? last_x : ix + 1;
    const int64_t y0 = iy < 0 ? 0 : iy;
    const int64_t y1 = iy + 1 > last_y ? last_y : iy + 1;
    const uint8_t* p00 = src + y0 * in.y + x0 * in.x;
    const uint8_t* p01 = src + y0 * in.y + x1 * in.x;
    const uint8_t* p10 = src + y1 * in.y + x0 * in.x;
    const uint8_t* p11 = src + y1 * in.y + x1 * in.x;
    const float w00 = (1.f - ax) * (1.f - ay), w01 = ax * (1.f - ay);
    const float w10 = (1.f - ax) * ay, w11 = ax * ay;
#if defined(__SSE2__)
    if constexpr (kFloatRgb) {
      if (rgb_nhwc) {
        // The three channels at once, lane by lane the same float operations
        // in the same order as the loop below (so the same values): blend,
        // + 0.5, truncate, clamp to 255, (q - bias) * norm.
        const __m128 v = _mm_add_ps(
            _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(w00), Rgb(p00)),
                                  _mm_mul_ps(_mm_set1_ps(w01), Rgb(p01))),
                       _mm_mul_ps(_mm_set1_ps(w10), Rgb(p10))),
            _mm_mul_ps(_mm_set1_ps(w11), Rgb(p11)));
        __m128i q = _mm_cvttps_epi32(_mm_add_ps(v, _mm_set1_ps(0.5f)));
        // q is in [0, 256]: a 16-bit minimum on 32-bit lanes is exact.
        q = _mm_min_epi16(q, _mm_set1_epi32(255));
        float out3[4];
        _mm_storeu_ps(out3, _mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(q), bias_v), norm_v));
        std::memcpy(px, out3, 3 * sizeof(float));
        continue;
      }
    }
#endif
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t o = c * in.c;
      // The weights sum to 1, so v is in [0, 255] up to rounding: truncating
      // v + 0.5 (>= 0) rounds half up, and the clamp catches 255.5.
      const float v = w00 * p00[o] + w01 * p01[o] + w10 * p10[o] + w11 * p11[o];
      int q = static_cast<int>(v + 0.5f);
      q = q > 255 ? 255 : q;
      Store(static_cast<float>(q), bias, norm, c, &px[c * out.c]);
    }
  }
}

template <typename Out>
void WarpRowsOf(const WarpGeometry& g, const uint8_t* src, const float* matrix,
                const float* bias, const float* norm, const float* oob_color,
                int64_t row_begin, int64_t row_end, Out* dst) {
  const Strides in = StridesOf(g.layout, g.in_height, g.in_width, g.channels);
  const Strides out = StridesOf(g.layout, g.out_height, g.out_width, g.channels);
  const double m[9] = {matrix[0], matrix[1], matrix[2], matrix[3], matrix[4],
                       matrix[5], matrix[6], matrix[7], matrix[8]};
  const bool affine = m[6] == 0.0 && m[7] == 0.0 && m[8] == 1.0;
  for (int64_t y = row_begin; y < row_end; ++y) {
    Out* row = dst + y * out.y;
    if (g.channels == 3) {
      WarpRow<3>(g, in, out, src, m, affine, bias, norm, oob_color, y, row);
    } else {
      WarpRow<0>(g, in, out, src, m, affine, bias, norm, oob_color, y, row);
    }
  }
}

}  // namespace

void WarpRows(const WarpGeometry& g, const uint8_t* src, const float* matrix,
              const float* bias, const float* norm, const float* oob_color,
              int64_t row_begin, int64_t row_end, float* dst) {
  WarpRowsOf(g, src, matrix, bias, norm, oob_color, row_begin, row_end, dst);
}

void WarpRows(const WarpGeometry& g, const uint8_t* src, const float* matrix,
              const float* oob_color, int64_t row_begin, int64_t row_end,
              uint8_t* dst) {
  WarpRowsOf(g, src, matrix, nullptr, nullptr, oob_color, row_begin, row_end, dst);
}

}  // namespace warp
}  // namespace tfg
