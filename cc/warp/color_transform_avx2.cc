// The colour steps (color_pixels.h) compiled for AVX2: 8 pixels a vector,
// with byte / float shuffles that split interleaved pixels into channels in
// registers. color_transform.cc calls these where the CPU has AVX2 (checked at
// run time: the build targets baseline x86-64). Not for FMA too: the compiler
// would fuse a * b + c there (one rounding instead of two), and the pixels
// would differ from the portable build's by a bit, now and then by a level.
#include "cc/warp/color_transform_avx2.h"

#ifdef TFG_HAVE_AVX2_COLOR

// Everything this file includes with external linkage comes before the target
// switch, so that no inline function another file also instantiates is
// compiled here for AVX2 (the linker keeps one copy of each).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cc/warp/color_transform.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif

#include "cc/warp/color_pixels.h"

namespace tfg {
namespace warp {
namespace {

template <>
TFG_INLINE Float8 Max<Float8, Int8>(Float8 a, Float8 b) {
  return (Float8)_mm256_max_ps((__m256)a, (__m256)b);  // a > b ? a : b
}
template <>
TFG_INLINE Float8 Min<Float8, Int8>(Float8 a, Float8 b) {
  return (Float8)_mm256_min_ps((__m256)a, (__m256)b);  // a < b ? a : b
}
template <>
TFG_INLINE Float8 Trunc<Float8, Int8>(Float8 x) {
  return (Float8)_mm256_round_ps((__m256)x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

// Eight uint8 pixels (24 bytes): byte shuffles gather each channel's eight
// bytes, widened to float.
struct Avx2U8 {
  TFG_INLINE static __m128i Pick(__m128i lo, __m128i hi, __m128i from_lo, __m128i from_hi) {
    return _mm_or_si128(_mm_shuffle_epi8(lo, from_lo), _mm_shuffle_epi8(hi, from_hi));
  }
  TFG_INLINE static Float8 Widen(__m128i bytes) {
    return (Float8)_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  }
  TFG_INLINE static void Load(const uint8_t* src, Float8& r, Float8& g, Float8& b) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));       // 0..15
    const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 16));  // 16..23
    const char z = -1;  // pshufb: a negative index gives 0
    r = Widen(Pick(lo, hi, _mm_setr_epi8(0, 3, 6, 9, 12, 15, z, z, z, z, z, z, z, z, z, z),
                   _mm_setr_epi8(z, z, z, z, z, z, 2, 5, z, z, z, z, z, z, z, z)));
    g = Widen(Pick(lo, hi, _mm_setr_epi8(1, 4, 7, 10, 13, z, z, z, z, z, z, z, z, z, z, z),
                   _mm_setr_epi8(z, z, z, z, z, 0, 3, 6, z, z, z, z, z, z, z, z)));
    b = Widen(Pick(lo, hi, _mm_setr_epi8(2, 5, 8, 11, 14, z, z, z, z, z, z, z, z, z, z, z),
                   _mm_setr_epi8(z, z, z, z, z, 1, 4, 7, z, z, z, z, z, z, z, z)));
  }
  TFG_INLINE static __m256i Round(Float8 v) {  // RoundLevel's v + 0.5, truncated
    return _mm256_cvttps_epi32(_mm256_add_ps((__m256)v, _mm256_set1_ps(0.5f)));
  }
  TFG_INLINE void Store(Float8 r, Float8 g, Float8 b, uint8_t* dst) const {
    const __m256i ri = Round(r), gi = Round(g), bi = Round(b);
    // Per 128-bit lane (pixels 0-3 | 4-7): r r r r g g g g b b b b b b b b.
    __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(ri, gi), _mm256_packus_epi32(bi, bi));
    const char z = -1;
    bytes = _mm256_shuffle_epi8(bytes, _mm256_setr_epi8(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, z, z,
                                                        z, z, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11,
                                                        z, z, z, z));
    // Each lane's 12 bytes, side by side.
    bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(bytes));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 16), _mm256_extracti128_si256(bytes, 1));
  }
};

// Eight float pixels (24 floats): the 128-bit halves of three vectors hold
// pixels 0-3 and 4-7; in-lane shuffles sort their channels.
struct Avx2Float {
  float bias[3], norm[3];
  TFG_INLINE static __m256 Halves(const float* lo, const float* hi) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
  }
  TFG_INLINE static void Load(const float* src, Float8& r, Float8& g, Float8& b) {
    // Per lane: a = r0 g0 b0 r1, c = g1 b1 r2 g2, e = b2 r3 g3 b3.
    const __m256 a = Halves(src, src + 12), c = Halves(src + 4, src + 16),
                 e = Halves(src + 8, src + 20);
    const __m256 rg = _mm256_shuffle_ps(c, e, _MM_SHUFFLE(2, 1, 3, 2));  // r2 g2 r3 g3
    const __m256 gb = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(1, 0, 2, 1));  // g0 b0 g1 b1
    r = (Float8)_mm256_shuffle_ps(a, rg, _MM_SHUFFLE(2, 0, 3, 0));       // r0 r1 r2 r3
    g = (Float8)_mm256_shuffle_ps(gb, rg, _MM_SHUFFLE(3, 1, 2, 0));      // g0 g1 g2 g3
    b = (Float8)_mm256_shuffle_ps(gb, e, _MM_SHUFFLE(3, 0, 3, 1));       // b0 b1 b2 b3
  }
  TFG_INLINE void Store(Float8 r8, Float8 g8, Float8 b8, float* dst) const {
    const __m256 r = (__m256)((r8 - bias[0]) * norm[0]);
    const __m256 g = (__m256)((g8 - bias[1]) * norm[1]);
    const __m256 b = (__m256)((b8 - bias[2]) * norm[2]);
    const __m256 rg = _mm256_shuffle_ps(r, g, _MM_SHUFFLE(2, 0, 2, 0));  // r0 r2 g0 g2
    const __m256 gb = _mm256_shuffle_ps(g, b, _MM_SHUFFLE(3, 1, 3, 1));  // g1 g3 b1 b3
    const __m256 br = _mm256_shuffle_ps(b, r, _MM_SHUFFLE(3, 1, 2, 0));  // b0 b2 r1 r3
    const __m256 a = _mm256_shuffle_ps(rg, br, _MM_SHUFFLE(2, 0, 2, 0));  // r0 g0 b0 r1
    const __m256 c = _mm256_shuffle_ps(gb, rg, _MM_SHUFFLE(3, 1, 2, 0));  // g1 b1 r2 g2
    const __m256 e = _mm256_shuffle_ps(br, gb, _MM_SHUFFLE(3, 1, 3, 1));  // b2 r3 g3 b3
    _mm_storeu_ps(dst, _mm256_castps256_ps128(a));
    _mm_storeu_ps(dst + 4, _mm256_castps256_ps128(c));
    _mm_storeu_ps(dst + 8, _mm256_castps256_ps128(e));
    _mm_storeu_ps(dst + 12, _mm256_extractf128_ps(a, 1));
    _mm_storeu_ps(dst + 16, _mm256_extractf128_ps(c, 1));
    _mm_storeu_ps(dst + 20, _mm256_extractf128_ps(e, 1));
  }
};

}  // namespace

void ColorRgbAvx2(const ColorDraw& draw, int64_t n, const uint8_t* src, uint8_t* dst) {
  RunDraw<Float8, Int8>(draw, Avx2U8{}, n, src, dst);
}

void ColorRgbAvx2(const ColorDraw& draw, int64_t n, const float* src, const float* bias,
                  const float* norm, float* dst) {
  const Avx2Float pixels{{bias[0], bias[1], bias[2]}, {norm[0], norm[1], norm[2]}};
  RunDraw<Float8, Int8>(draw, pixels, n, src, dst);
}

}  // namespace warp
}  // namespace tfg

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif  // TFG_HAVE_AVX2_COLOR
