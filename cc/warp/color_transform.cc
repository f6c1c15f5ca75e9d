// Colour augmentation (color_transform.h).
#include "cc/warp/color_transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "cc/util/stateless_random.h"
#include "cc/warp/color_pixels.h"
#include "cc/warp/color_transform_avx2.h"

namespace tfg {
namespace warp {
namespace {

// Separates the colour draws' stream from the warp's, which uses the key itself.
constexpr uint64_t kColorSalt = 0xc0104a5e;

Status RangeError(int index, const char* name, double lo, double hi, const char* allowed) {
  return InvalidArgumentError("color: transform ", index, ": ", name, " range (", lo, ", ", hi,
                              ") must be ", allowed);
}

// Where the CPU has AVX2 (checked once; the build targets baseline
// x86-64), color_transform_avx2.cc's build of the steps: 8 pixels a vector.
bool UseAvx2() {
#ifdef TFG_HAVE_AVX2_COLOR
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 && !internal::color_portable_only;
#else
  return false;
#endif
}

void RunDrawRgb(const ColorDraw& draw, int64_t n, const uint8_t* src, uint8_t* dst) {
#ifdef TFG_HAVE_AVX2_COLOR
  if (UseAvx2()) return ColorRgbAvx2(draw, n, src, dst);
#endif
  RunDraw<Float4, Int4>(draw, PortableU8<Float4>{}, n, src, dst);
}

void RunDrawRgb(const ColorDraw& draw, int64_t n, const float* src, const float* bias,
                const float* norm, float* dst) {
#ifdef TFG_HAVE_AVX2_COLOR
  if (UseAvx2()) return ColorRgbAvx2(draw, n, src, bias, norm, dst);
#endif
  PortableFloat<Float4> pixels{{bias[0], bias[1], bias[2]}, {norm[0], norm[1], norm[2]}};
  RunDraw<Float4, Int4>(draw, pixels, n, src, dst);
}

// A one-channel picture: saturation, hue and grayscale change nothing
// (torchvision returns one-channel pictures as they are); the gray of a value
// is the value. Brightness and contrast per value, passes as for RGB.
template <typename In, typename Out, typename Write>
void RunDrawGray(const ColorDraw& draw, int64_t n, const In* src, Out* dst, Write write) {
  PassStep steps[sizeof(draw.steps) / sizeof(draw.steps[0])];
  int count = 0;
  auto run = [&](int upto, float v) {
    for (int k = 0; k < upto; ++k) {
      v = Clamp255(steps[k].factor * v + steps[k].offset);  // brightness: offset 0
    }
    return v;
  };
  for (int k = 0; k < draw.count; ++k) {
    const ColorStep& s = draw.steps[k];
    if (s.op != ColorStep::Op::kBrightness && s.op != ColorStep::Op::kContrast) continue;
    steps[count] = {s.op, s.factor, 0.f};
    if (s.op == ColorStep::Op::kContrast) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += run(count, static_cast<float>(src[i]));
      const float mean = static_cast<float>(n > 0 ? sum / static_cast<double>(n) : 0.0);
      steps[count].offset = (1.f - s.factor) * mean;
    }
    ++count;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = write(run(count, static_cast<float>(src[i])));
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
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  ColorOutput(draw, pixels, channels, values, zero, one, values);
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const float* levels,
                 const float* bias, const float* norm, float* dst) {
  if (channels == 3) return RunDrawRgb(draw, pixels, levels, bias, norm, dst);
  const float b = bias[0], m = norm[0];
  RunDrawGray(draw, pixels, levels, dst, [b, m](float v) { return (v - b) * m; });
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, const uint8_t* levels,
                 uint8_t* dst) {
  if (channels == 3) return RunDrawRgb(draw, pixels, levels, dst);
  RunDrawGray(draw, pixels, levels, dst, RoundLevel);
}

namespace internal {
bool color_portable_only = false;
}  // namespace internal

}  // namespace warp
}  // namespace tfg
