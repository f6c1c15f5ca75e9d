// Colour augmentation (color_transform.h).
#include "cc/warp/color_transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "cc/util/stateless_random.h"

// The 32-byte vectors below never cross a function boundary (every function
// that takes or returns one is always inlined into the AVX2 one), so GCC's
// note that passing them changes the ABI without AVX does not apply.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace tfg {
namespace warp {
namespace {

// Separates the colour draws' stream from the warp's, which uses the key itself.
constexpr uint64_t kColorSalt = 0xc0104a5e;

// ITU-R 601-2 luma, torchvision's rgb_to_grayscale weights.
constexpr float kGrayR = 0.2989f, kGrayG = 0.587f, kGrayB = 0.114f;

inline float Clamp255(float v) { return std::min(255.f, std::max(0.f, v)); }

inline float Gray(float r, float g, float b) { return kGrayR * r + kGrayG * g + kGrayB * b; }

Status RangeError(int index, const char* name, double lo, double hi, const char* allowed) {
  return InvalidArgumentError("color: transform ", index, ": ", name, " range (", lo, ", ", hi,
                              ") must be ", allowed);
}

// The pixel math runs on planes (one float array per channel), written with
// the compilers' vector extensions (GCC and Clang; SSE2 on x86-64, NEON on
// ARM; 8 lanes with AVX2 where the CPU has it): the compiler does not
// vectorize the plain loops' selects (compares may trap under the default
// -ftrapping-math). The steps between two contrast steps run in one pass, a
// vector of pixels at a time, their values kept in registers.
typedef float Float4 __attribute__((vector_size(16)));
typedef int32_t Int4 __attribute__((vector_size(16)));
typedef float Float8 __attribute__((vector_size(32)));
typedef int32_t Int8 __attribute__((vector_size(32)));

#define TFG_INLINE inline __attribute__((always_inline))

template <typename F, typename I>
TFG_INLINE F Select(I mask, F a, F b) {
  return (F)(((I)a & mask) | ((I)b & ~mask));  // a vector cast reinterprets the bits
}
template <typename F, typename I>
TFG_INLINE F Max(F a, F b) { return Select<F, I>(a > b, a, b); }
template <typename F, typename I>
TFG_INLINE F Min(F a, F b) { return Select<F, I>(a < b, a, b); }
template <typename F>
TFG_INLINE F Load(const float* p) {
  F v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename F>
TFG_INLINE void Store(float* p, F v) { std::memcpy(p, &v, sizeof(v)); }

// torchvision's _rgb2hsv, hue shift by `f` turns, _hsv2rgb, on a vector of
// pixels' levels. With c = max - min (= v s): h = ((g - b) / c, 2 + (b - r) / c
// or 4 + (r - g) / c, as max is r, g or b) / 6 mod 1, and the six sectors of
// _hsv2rgb ((v, t, p), (q, v, p), ...; p = v (1 - s), q = v (1 - s frac),
// t = v (1 - s (1 - frac))) are one formula per channel:
// v - c clamp(min(k, 4 - k), 0, 1), k = (n + 6 h) mod 6, n = 5, 3, 1 for R, G, B.
// A gray pixel (c = 0) comes back unchanged, as in torchvision.
template <typename F, typename I>
TFG_INLINE void ShiftHueVector(float shift, F& r, F& g, F& b) {
  const F zero = F{}, one = zero + 1.f, two = zero + 2.f, four = zero + 4.f, six = zero + 6.f;
  const F maxc = Max<F, I>(r, Max<F, I>(g, b));
  const F c = maxc - Min<F, I>(r, Min<F, I>(g, b));
  const I max_r = maxc == r, max_g = maxc == g;
  const F num = Select<F, I>(max_r, g - b, Select<F, I>(max_g, b - r, r - g));
  const F base = Select<F, I>(max_r, zero, Select<F, I>(max_g, two, four));
  const F h = base + num / Select<F, I>(c == zero, one, c);
  // h / 6 + 1 is in [5/6, 11/6) and then h + f + 1 in [1/2, 5/2): positive,
  // so truncation floors and x - trunc(x) is fmod(x, 1).
  auto fraction = [](F x) {
    return x - __builtin_convertvector(__builtin_convertvector(x, I), F);
  };
  const F h6 = fraction(fraction(h * (1.f / 6.f) + one) + (shift + 1.f)) * six;
  auto channel = [&](float n) {
    F k = h6 + n;
    k = k - Select<F, I>(k >= six, six, zero);
    return maxc - c * Min<F, I>(one, Max<F, I>(zero, Min<F, I>(k, four - k)));
  };
  r = channel(5.f);
  g = channel(3.f);
  b = channel(1.f);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Eight pixels at a time where the CPU has AVX2 (checked at run time; the
// build targets baseline x86-64): RunStepsAvx2 below.
#define TFG_HAVE_AVX2_COLOR 1
#endif

// One step over a one-channel picture: saturation, hue and grayscale change
// nothing (torchvision returns one-channel pictures as they are); the gray of
// a value is the value.
void ApplyGrayStep(const ColorStep& step, int64_t n, float* v) {
  const float f = step.factor;
  if (step.op == ColorStep::Op::kBrightness) {
    for (int64_t i = 0; i < n; ++i) v[i] = Clamp255(f * v[i]);
  } else if (step.op == ColorStep::Op::kContrast) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += v[i];
    const float m = (1.f - f) * static_cast<float>(n > 0 ? sum / static_cast<double>(n) : 0.0);
    for (int64_t i = 0; i < n; ++i) v[i] = Clamp255(f * v[i] + m);
  }
}

// The steps [begin, end) of an RGB picture's planes in one pass, a vector of
// pixels at a time (the values stay in registers from step to step); none of
// them but the first may be a contrast step, whose mean is `mean`. Returns the
// sum of the result's gray (the next contrast step's mean times n).
template <typename F, typename I>
TFG_INLINE double RunSegment(const ColorStep* begin, const ColorStep* end, float mean,
                             int64_t n, float* r, float* g, float* b) {
  constexpr int64_t kLanes = sizeof(F) / sizeof(float);
  const F zero = F{}, top = zero + 255.f;
  auto clamp = [&](F x) { return Min<F, I>(top, Max<F, I>(zero, x)); };
  auto gray = [](F rv, F gv, F bv) { return kGrayR * rv + kGrayG * gv + kGrayB * bv; };
  auto run = [&](F& rv, F& gv, F& bv) {
    for (const ColorStep* s = begin; s != end; ++s) {
      const float f = s->factor;
      switch (s->op) {
        case ColorStep::Op::kBrightness:
          rv = clamp(f * rv), gv = clamp(f * gv), bv = clamp(f * bv);
          break;
        case ColorStep::Op::kContrast: {
          const F m = zero + (1.f - f) * mean;
          rv = clamp(f * rv + m), gv = clamp(f * gv + m), bv = clamp(f * bv + m);
          break;
        }
        case ColorStep::Op::kSaturation: {
          const F m = (1.f - f) * gray(rv, gv, bv);
          rv = clamp(f * rv + m), gv = clamp(f * gv + m), bv = clamp(f * bv + m);
          break;
        }
        case ColorStep::Op::kHue:
          ShiftHueVector<F, I>(f, rv, gv, bv);
          break;
        case ColorStep::Op::kGrayscale:
          rv = gv = bv = gray(rv, gv, bv);
          break;
      }
    }
  };
  double total = 0;
  F acc = zero;
  int64_t i = 0, in_acc = 0;
  for (; i + kLanes <= n; i += kLanes) {
    F rv = Load<F>(r + i), gv = Load<F>(g + i), bv = Load<F>(b + i);
    run(rv, gv, bv);
    Store<F>(r + i, rv);
    Store<F>(g + i, gv);
    Store<F>(b + i, bv);
    acc += gray(rv, gv, bv);
    if (++in_acc == 256) {  // float lanes, added to the double total every 256 vectors
      for (int64_t k = 0; k < kLanes; ++k) total += acc[k];
      acc = zero;
      in_acc = 0;
    }
  }
  for (int64_t k = 0; k < kLanes; ++k) total += acc[k];
  if (i < n) {  // the tail, through a padded copy
    float t[3][kLanes] = {};
    for (int64_t k = i; k < n; ++k) t[0][k - i] = r[k], t[1][k - i] = g[k], t[2][k - i] = b[k];
    F rv = Load<F>(t[0]), gv = Load<F>(t[1]), bv = Load<F>(t[2]);
    run(rv, gv, bv);
    Store<F>(t[0], rv);
    Store<F>(t[1], gv);
    Store<F>(t[2], bv);
    for (int64_t k = i; k < n; ++k) {
      r[k] = t[0][k - i], g[k] = t[1][k - i], b[k] = t[2][k - i];
      total += Gray(r[k], g[k], b[k]);
    }
  }
  return total;
}

// Every step of `draw` on an RGB picture's planes: one pass per run of steps
// that ends before a contrast step (whose mean is the gray of the picture the
// run before it made; the first run's, when the draw begins with contrast, is
// measured first).
template <typename F, typename I>
TFG_INLINE void RunSteps(const ColorDraw& draw, int64_t n, float* r, float* g, float* b) {
  const ColorStep* steps = draw.steps;
  const int count = draw.count;
  double sum = 0;
  if (count > 0 && steps[0].op == ColorStep::Op::kContrast) {
    sum = RunSegment<F, I>(steps, steps, 0.f, n, r, g, b);
  }
  int begin = 0;
  while (begin < count) {
    int end = begin + 1;
    while (end < count && steps[end].op != ColorStep::Op::kContrast) ++end;
    const float mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.f;
    sum = RunSegment<F, I>(steps + begin, steps + end, mean, n, r, g, b);
    begin = end;
  }
}

#ifdef TFG_HAVE_AVX2_COLOR
__attribute__((target("avx2"))) void RunStepsAvx2(const ColorDraw& draw, int64_t n, float* r,
                                                  float* g, float* b) {
  RunSteps<Float8, Int8>(draw, n, r, g, b);
}
#endif

void RunStepsRgb(const ColorDraw& draw, int64_t n, float* r, float* g, float* b) {
#ifdef TFG_HAVE_AVX2_COLOR
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return RunStepsAvx2(draw, n, r, g, b);
#endif
  RunSteps<Float4, Int4>(draw, n, r, g, b);
}

// Interleaved -> planes and back, with the channel count a constant (so that
// the compiler vectorizes the strided loads and stores).
template <int C, typename In>
void ToPlanes(const In* src, int64_t n, float* const* planes) {
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < C; ++c) planes[c][i] = static_cast<float>(src[i * C + c]);
  }
}
template <int C, typename Out, typename Write>
void FromPlanes(const float* const* planes, int64_t n, Out* dst, Write out) {
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < C; ++c) dst[i * C + c] = out(planes[c][i], c);
  }
}

// `draw` on one picture of interleaved `src` (levels), written to interleaved
// `dst` by `out(value, channel)`, through this thread's planes.
template <typename In, typename Out, typename Write>
void ColorPicture(const ColorDraw& draw, int64_t n, int channels, const In* src, Out* dst,
                  Write out) {
  thread_local std::vector<float> buffer;
  buffer.resize(static_cast<size_t>(n) * channels);
  float* planes[4] = {};
  for (int c = 0; c < channels; ++c) planes[c] = buffer.data() + c * n;
  if (channels == 3) {
    ToPlanes<3>(src, n, planes);
  } else {
    ToPlanes<1>(src, n, planes);
  }
  if (channels == 3) {
    RunStepsRgb(draw, n, planes[0], planes[1], planes[2]);
  } else {
    for (int k = 0; k < draw.count; ++k) ApplyGrayStep(draw.steps[k], n, planes[0]);
  }
  if (channels == 3) {
    FromPlanes<3>(planes, n, dst, out);
  } else {
    FromPlanes<1>(planes, n, dst, out);
  }
}

}  // namespace

Status ParseColorSpec(const std::vector<float>& values, ColorSpec* spec) {
  spec->transforms.clear();
  size_t i = 0;
  while (i < values.size()) {
    const int index = static_cast<int>(spec->transforms.size());
    if (index == kMaxColorTransforms) {
      return InvalidArgumentError("color: at most ", kMaxColorTransforms,
                                  " colour transforms, got more");
    }
    ColorTransform t;
    const float kind = values[i];
    const size_t length = kind == 1.f ? 10 : kind == 2.f ? 2 : 0;
    if (length == 0) {
      return InvalidArgumentError("color: transform ", index, " has unknown kind ", kind,
                                  " (1: ColorJitter, 2: RandomGrayscale)");
    }
    if (values.size() - i < length) {
      return InvalidArgumentError("color: transform ", index, " needs ", length,
                                  " values, got ", values.size() - i);
    }
    const float* v = values.data() + i;
    for (size_t k = 1; k < length; ++k) {
      if (!std::isfinite(v[k])) {
        return InvalidArgumentError("color: transform ", index,
                                    " holds a value that is not finite");
      }
    }
    t.p = v[1];
    if (!(t.p >= 0.0 && t.p <= 1.0)) {
      return InvalidArgumentError("color: transform ", index, ": p is a probability, got ",
                                  t.p);
    }
    if (kind == 1.f) {
      t.kind = ColorTransform::Kind::kJitter;
      t.brightness_lo = v[2], t.brightness_hi = v[3];
      t.contrast_lo = v[4], t.contrast_hi = v[5];
      t.saturation_lo = v[6], t.saturation_hi = v[7];
      t.hue_lo = v[8], t.hue_hi = v[9];
      const std::pair<const char*, const double*> factors[3] = {
          {"brightness", &t.brightness_lo}, {"contrast", &t.contrast_lo},
          {"saturation", &t.saturation_lo}};
      for (const auto& [name, range] : factors) {
        if (!(range[0] >= 0 && range[0] <= range[1])) {
          return RangeError(index, name, range[0], range[1], "0 <= low <= high");
        }
      }
      if (!(t.hue_lo >= -0.5 && t.hue_lo <= t.hue_hi && t.hue_hi <= 0.5)) {
        return RangeError(index, "hue", t.hue_lo, t.hue_hi, "-0.5 <= low <= high <= 0.5");
      }
    } else {
      t.kind = ColorTransform::Kind::kGrayscale;
    }
    spec->transforms.push_back(t);
    i += length;
  }
  return Status::Ok();
}

ColorDraw DrawColor(const ColorSpec& spec, uint64_t key) {
  ColorDraw draw;
  for (size_t t = 0; t < spec.transforms.size(); ++t) {
    const ColorTransform& c = spec.transforms[t];
    // Fixed slots: applied?, then (jitter) the order's 3 swaps, then the 4
    // factors, drawn whether used or not, so one option does not move another's draws.
    KeyedRandom random(HashKey({key, kColorSalt, static_cast<uint64_t>(t)}));
    const bool apply = random.Uniform() < c.p;
    if (c.kind == ColorTransform::Kind::kGrayscale) {
      if (apply) draw.steps[draw.count++] = {ColorStep::Op::kGrayscale, 1.f};
      continue;
    }
    int order[4] = {0, 1, 2, 3};  // a uniform permutation (Fisher-Yates)
    for (int i = 3; i > 0; --i) std::swap(order[i], order[random.Below(i + 1)]);
    const double lo[4] = {c.brightness_lo, c.contrast_lo, c.saturation_lo, c.hue_lo};
    const double hi[4] = {c.brightness_hi, c.contrast_hi, c.saturation_hi, c.hue_hi};
    const double identity[4] = {1, 1, 1, 0};
    double factor[4];
    for (int k = 0; k < 4; ++k) factor[k] = lo[k] + (hi[k] - lo[k]) * random.Uniform();
    if (!apply) continue;
    for (int k : order) {
      if (lo[k] == identity[k] && hi[k] == identity[k]) continue;  // an option left off
      draw.steps[draw.count++] = {static_cast<ColorStep::Op>(k),
                                  static_cast<float>(factor[k])};
    }
  }
  return draw;
}

void ApplyColor(const ColorDraw& draw, int64_t pixels, int channels, float* values) {
  if (draw.empty()) return;
  ColorPicture(draw, pixels, channels, values, values, [](float v, int) { return v; });
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const float* levels,
                 const float* bias, const float* norm, float* dst) {
  ColorPicture(draw, pixels, channels, levels, dst,
               [bias, norm](float v, int c) { return (v - bias[c]) * norm[c]; });
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const uint8_t* levels,
                 uint8_t* dst) {
  ColorPicture(draw, pixels, channels, levels, dst,
               // Every step leaves its values within [0, 255] (each clamps, or mixes
               // values within it): rounding needs no clamp, and the loop no compare.
               [](float v, int) { return static_cast<uint8_t>(static_cast<int32_t>(v + 0.5f)); });
}

}  // namespace warp
}  // namespace tfg
