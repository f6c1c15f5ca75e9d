// The pixel math of the colour transforms (color_transform.h), included by
// color_transform.cc (the portable build: SSE2 on x86-64, NEON on ARM, 4
// lanes) and color_transform_avx2.cc (the same templates compiled for AVX2,
// 8 lanes, used where the CPU has it); the two give the same bits. Everything
// here has internal linkage (an unnamed namespace), so the two builds of these
// inline functions never merge at link time. Not a public header.
//
// Written with the compilers' vector extensions (GCC and Clang): the compiler
// does not vectorize plain loops' selects (compares may trap under the
// default -ftrapping-math). A picture is read as interleaved pixels, a vector
// of them at a time, split into one vector per channel in registers; every
// step runs on those registers; only the last pass writes (see RunDraw).
#ifndef TF_GULP_CC_WARP_COLOR_PIXELS_H_
#define TF_GULP_CC_WARP_COLOR_PIXELS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cc/warp/color_transform.h"

// The vectors below never cross a function boundary (every function that takes
// or returns one is always inlined), so GCC's note that passing them changes
// the ABI without AVX does not apply.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace tfg {
namespace warp {
namespace {

typedef float Float4 __attribute__((vector_size(16)));
typedef int32_t Int4 __attribute__((vector_size(16)));
typedef float Float8 __attribute__((vector_size(32)));
typedef int32_t Int8 __attribute__((vector_size(32)));

#define TFG_INLINE inline __attribute__((always_inline))

// ITU-R 601-2 luma, torchvision's rgb_to_grayscale weights.
constexpr float kGrayR = 0.2989f, kGrayG = 0.587f, kGrayB = 0.114f;

inline float Clamp255(float v) { return std::min(255.f, std::max(0.f, v)); }

// Every step leaves its values within [0, 255] (each clamps, or mixes values
// within it): rounding to uint8 needs no clamp.
inline uint8_t RoundLevel(float v) { return static_cast<uint8_t>(static_cast<int32_t>(v + 0.5f)); }

template <typename F>
constexpr int kLanesOf = sizeof(F) / sizeof(float);

// The vector primitives. Max, Min and Trunc are specialized with the ISA's
// own instructions where one exists (color_transform_avx2.cc): a > b ? a : b
// is exactly maxps' definition, but the compilers keep it a compare + blend.
template <typename F, typename I>
TFG_INLINE F Select(I mask, F a, F b) {
  return (F)(((I)a & mask) | ((I)b & ~mask));  // a vector cast reinterprets the bits
}
template <typename F, typename I>
TFG_INLINE F Max(F a, F b) { return Select<F, I>(a > b, a, b); }
template <typename F, typename I>
TFG_INLINE F Min(F a, F b) { return Select<F, I>(a < b, a, b); }
template <typename F, typename I>
TFG_INLINE F Trunc(F x) { return __builtin_convertvector(__builtin_convertvector(x, I), F); }
template <typename F, typename I>
TFG_INLINE F Abs(F x) { return (F)((I)x & 0x7fffffff); }
template <typename F>
TFG_INLINE F Load(const float* p) {
  F v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// torchvision's _rgb2hsv, hue shift by `shift` turns, _hsv2rgb, on a vector
// of pixels' levels. With c = max - min (= v s), the hue in sixths of a turn
// is h = (g - b) / c, 2 + (b - r) / c or 4 + (r - g) / c as max is r, g or b
// (in [-1, 5]); the six sectors of _hsv2rgb ((v, t, p), (q, v, p), ...;
// p = v (1 - s), q = v (1 - s frac), t = v (1 - s (1 - frac))) are one formula
// per channel: v - c clamp(min(k, 4 - k), 0, 1) = v - c clamp(2 - |k - 2|, 0, 1),
// k = (n + 6 h') mod 6, n = 5, 3, 1 for R, G, B, h' the shifted hue in turns.
// A gray pixel (c = 0) comes back unchanged, as in torchvision.
template <typename F, typename I>
TFG_INLINE void ShiftHueVector(float shift, F& r, F& g, F& b) {
  const F zero = F{}, one = zero + 1.f, two = zero + 2.f, four = zero + 4.f, six = zero + 6.f;
  const F maxc = Max<F, I>(r, Max<F, I>(g, b));
  const F c = maxc - Min<F, I>(r, Min<F, I>(g, b));
  const I max_r = maxc == r, max_g = maxc == g;
  const F num = Select<F, I>(max_r, g - b, Select<F, I>(max_g, b - r, r - g));
  const F base = Select<F, I>(max_r, zero, Select<F, I>(max_g, two, four));
  // x = 6 h' + 6 is in [2, 14] (h in [-1, 5], shift in [-1/2, 1/2]): positive,
  // so truncation floors and x - 6 trunc(x / 6) is x mod 6 (within rounding,
  // which the continuous formula below turns into as small an error).
  const F x = base + num / Select<F, I>(c == zero, one, c) + (6.f * shift + 6.f);
  const F h6 = x - six * Trunc<F, I>(x * (1.f / 6.f));
  auto channel = [&](float n) {
    F k = h6 + n;
    k = k - (F)((I)six & (k >= six));
    return maxc - c * Min<F, I>(one, Max<F, I>(zero, two - Abs<F, I>(k - two)));
  };
  r = channel(5.f);
  g = channel(3.f);
  b = channel(1.f);
}

// The steps of a draw as the passes run them: a contrast step carries its
// (1 - f) * mean, which the pass before it measured.
struct PassStep {
  ColorStep::Op op;
  float factor;
  float offset;  // kContrast: (1 - factor) * the mean gray of the picture before it
};

// The steps [0, count) on a block of kBlock vectors of RGB pixels: one step
// at a time over the block (the step's dispatch paid once a block, the
// vectors' work independent of each other for the CPU to overlap).
constexpr int kBlock = 8;

template <typename F, typename I>
TFG_INLINE void RunPixels(const PassStep* steps, int count, F* r, F* g, F* b) {
  const F zero = F{}, top = zero + 255.f;
  auto clamp = [&](F x) { return Min<F, I>(top, Max<F, I>(zero, x)); };
  for (int k = 0; k < count; ++k) {
    const float f = steps[k].factor;
    switch (steps[k].op) {
      case ColorStep::Op::kBrightness:
        for (int j = 0; j < kBlock; ++j) r[j] = clamp(f * r[j]), g[j] = clamp(f * g[j]), b[j] = clamp(f * b[j]);
        break;
      case ColorStep::Op::kContrast: {
        const F m = zero + steps[k].offset;
        for (int j = 0; j < kBlock; ++j) {
          r[j] = clamp(f * r[j] + m), g[j] = clamp(f * g[j] + m), b[j] = clamp(f * b[j] + m);
        }
        break;
      }
      case ColorStep::Op::kSaturation:
        for (int j = 0; j < kBlock; ++j) {
          const F m = (1.f - f) * (kGrayR * r[j] + kGrayG * g[j] + kGrayB * b[j]);
          r[j] = clamp(f * r[j] + m), g[j] = clamp(f * g[j] + m), b[j] = clamp(f * b[j] + m);
        }
        break;
      case ColorStep::Op::kHue:
        for (int j = 0; j < kBlock; ++j) ShiftHueVector<F, I>(f, r[j], g[j], b[j]);
        break;
      case ColorStep::Op::kGrayscale:
        for (int j = 0; j < kBlock; ++j) r[j] = g[j] = b[j] = kGrayR * r[j] + kGrayG * g[j] + kGrayB * b[j];
        break;
    }
  }
}

// Moving interleaved RGB pixels in and out of registers, a vector of pixels
// at a time: `Pixels::Load(src, r, g, b)` reads F's lane count of pixels at
// `src`, `pixels.Store(r, g, b, dst)` writes them (levels to the output
// stage's values). The portable ones go through a small array (without SSSE3
// byte shuffles the compilers do not vectorize the three-way interleave);
// color_transform_avx2.cc has shuffling ones.
template <typename F, typename In>
TFG_INLINE void LoadThroughArray(const In* src, F& r, F& g, F& b) {
  float t[3][kLanesOf<F>];
  for (int k = 0; k < kLanesOf<F>; ++k) {
    t[0][k] = static_cast<float>(src[3 * k]);
    t[1][k] = static_cast<float>(src[3 * k + 1]);
    t[2][k] = static_cast<float>(src[3 * k + 2]);
  }
  r = Load<F>(t[0]), g = Load<F>(t[1]), b = Load<F>(t[2]);
}

template <typename F>
struct PortableU8 {
  TFG_INLINE static void Load(const uint8_t* src, F& r, F& g, F& b) { LoadThroughArray(src, r, g, b); }
  TFG_INLINE void Store(F r, F g, F b, uint8_t* dst) const {
    for (int k = 0; k < kLanesOf<F>; ++k) {
      dst[3 * k] = RoundLevel(r[k]), dst[3 * k + 1] = RoundLevel(g[k]), dst[3 * k + 2] = RoundLevel(b[k]);
    }
  }
};

template <typename F>
struct PortableFloat {
  float bias[3], norm[3];
  TFG_INLINE static void Load(const float* src, F& r, F& g, F& b) { LoadThroughArray(src, r, g, b); }
  TFG_INLINE void Store(F r, F g, F b, float* dst) const {
    r = (r - bias[0]) * norm[0], g = (g - bias[1]) * norm[1], b = (b - bias[2]) * norm[2];
    for (int k = 0; k < kLanesOf<F>; ++k) dst[3 * k] = r[k], dst[3 * k + 1] = g[k], dst[3 * k + 2] = b[k];
  }
};

// The sum of a picture's gray values, added in an order that does not depend
// on the vector width, so that the 4- and 8-lane builds measure the same
// contrast mean to the bit: each run of 8 pixels is one 8-lane float vector
// added to float lanes (flushed to the double total every 256 of them, lane
// by lane), the last (shorter) run pixel by pixel into the double.
class GraySum {
 public:
  // `gray`: `count` pixels' gray values in picture order; `count` is a
  // multiple of 8 except at the picture's end.
  TFG_INLINE void Add(const float* gray, int64_t count) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
      acc_ += Load<Float8>(gray + i);
      if (++in_acc_ == 256) Flush();
    }
    for (; i < count; ++i) total_ += gray[i];
  }
  TFG_INLINE double Total() {
    Flush();
    return total_;
  }

 private:
  TFG_INLINE void Flush() {
    for (int k = 0; k < 8; ++k) total_ += acc_[k];
    acc_ = Float8{};
    in_acc_ = 0;
  }
  Float8 acc_ = Float8{};
  int in_acc_ = 0;
  double total_ = 0;
};

// One pass over an RGB picture of `n` pixels: each vector of pixels is read
// from `state` (what an earlier pass left, see RunDraw) or else from
// interleaved `src`, runs the steps [0, count) and is written to `dst`
// (pixels.Store) or, without `dst`, to `state` (which it may have come from),
// the sum of their gray returned (the mean of the next contrast step times n).
// The tail goes through padded arrays.
template <typename F, typename I, typename Pixels, typename In, typename Out>
TFG_INLINE double RunPass(const PassStep* steps, int count, const Pixels& pixels, int64_t n,
                          const In* src, const float* state_in, float* state_out, Out* dst) {
  constexpr int64_t kLanes = kLanesOf<F>;
  static_assert((kBlock * kLanes) % 8 == 0, "a block holds whole runs of 8 pixels (GraySum)");
  const F zero = F{};
  GraySum sum;
  for (int64_t start = 0; start < n; start += kLanes * kBlock) {
    F r[kBlock], g[kBlock], b[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      const int64_t i = start + j * kLanes, rest = std::min(kLanes, n - i);
      if (rest <= 0) {
        r[j] = g[j] = b[j] = zero;
      } else if (state_in != nullptr) {
        r[j] = Load<F>(state_in + 3 * i), g[j] = Load<F>(state_in + 3 * i + kLanes);
        b[j] = Load<F>(state_in + 3 * i + 2 * kLanes);
      } else if (rest == kLanes) {
        Pixels::Load(src + 3 * i, r[j], g[j], b[j]);
      } else {
        In in[3 * kLanes] = {};
        std::copy(src + 3 * i, src + 3 * n, in);
        Pixels::Load(in, r[j], g[j], b[j]);
      }
    }
    RunPixels<F, I>(steps, count, r, g, b);
    if (dst != nullptr) {
      for (int j = 0; j < kBlock; ++j) {
        const int64_t i = start + j * kLanes, rest = std::min(kLanes, n - i);
        if (rest <= 0) break;
        if (rest == kLanes) {
          pixels.Store(r[j], g[j], b[j], dst + 3 * i);
        } else {
          Out out[3 * kLanes];
          pixels.Store(r[j], g[j], b[j], out);
          std::copy(out, out + 3 * rest, dst + 3 * i);
        }
      }
      continue;
    }
    float gray[kBlock * kLanes];
    for (int j = 0; j < kBlock; ++j) {
      const int64_t i = start + j * kLanes;
      if (i >= n) break;
      if (state_out != nullptr) {
        std::memcpy(state_out + 3 * i, &r[j], sizeof(F));
        std::memcpy(state_out + 3 * i + kLanes, &g[j], sizeof(F));
        std::memcpy(state_out + 3 * i + 2 * kLanes, &b[j], sizeof(F));
      }
      const F gray_j = kGrayR * r[j] + kGrayG * g[j] + kGrayB * b[j];
      std::memcpy(gray + j * kLanes, &gray_j, sizeof(F));
    }
    sum.Add(gray, std::min<int64_t>(kBlock * kLanes, n - start));
  }
  return sum.Total();
}

// Every step of `draw` on an RGB picture, `src` to `dst` (which may be
// `src`). A contrast step needs the mean gray of the picture the steps before
// it made: a pass runs those steps, sums the gray and keeps the picture, in
// float, in this thread's `state` (each vector's channels side by side);
// the next pass goes on from there. The last pass writes `dst`. A draw
// without contrast is one pass, src to dst; one that begins with contrast
// first only reads src for its mean.
template <typename F, typename I, typename Pixels, typename In, typename Out>
TFG_INLINE void RunDraw(const ColorDraw& draw, const Pixels& pixels, int64_t n, const In* src,
                        Out* dst) {
  constexpr int64_t kLanes = kLanesOf<F>;
  thread_local std::vector<float> buffer;
  float* state = nullptr;  // set once a pass kept the picture
  PassStep steps[sizeof(draw.steps) / sizeof(draw.steps[0])];
  int begin = 0;  // the first step not run on `state` yet
  for (int k = 0; k < draw.count; ++k) {
    steps[k] = {draw.steps[k].op, draw.steps[k].factor, 0.f};
    if (steps[k].op != ColorStep::Op::kContrast) continue;
    double sum;
    if (k == begin) {  // nothing to run: only the mean
      sum = RunPass<F, I>(steps, 0, pixels, n, src, state, nullptr, static_cast<Out*>(nullptr));
    } else {
      if (state == nullptr) {
        buffer.resize(static_cast<size_t>((n + kLanes - 1) / kLanes * kLanes * 3));
        state = buffer.data();
        sum = RunPass<F, I>(steps + begin, k - begin, pixels, n, src, nullptr, state,
                            static_cast<Out*>(nullptr));
      } else {
        sum = RunPass<F, I>(steps + begin, k - begin, pixels, n, src, state, state,
                            static_cast<Out*>(nullptr));
      }
      begin = k;
    }
    const float mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.f;
    steps[k].offset = (1.f - steps[k].factor) * mean;
  }
  RunPass<F, I>(steps + begin, draw.count - begin, pixels, n, src, state, nullptr, dst);
}

}  // namespace
}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_COLOR_PIXELS_H_
