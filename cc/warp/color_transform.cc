// Colour augmentation (color_transform.h).
#include "cc/warp/color_transform.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "cc/util/stateless_random.h"

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

// torchvision's _rgb2hsv, hue shift, _hsv2rgb on levels (v in [0, 255]; h, s in [0, 1]).
inline void ShiftHue(float f, float* r, float* g, float* b) {
  const float maxc = std::max(*r, std::max(*g, *b));
  const float minc = std::min(*r, std::min(*g, *b));
  if (maxc == minc) return;  // gray: s = 0, every hue gives the same pixel
  const float cr = maxc - minc;
  const float s = cr / maxc;
  const float rc = (maxc - *r) / cr, gc = (maxc - *g) / cr, bc = (maxc - *b) / cr;
  float h;
  if (maxc == *r) {
    h = bc - gc;
  } else if (maxc == *g) {
    h = 2.f + rc - bc;
  } else {
    h = 4.f + gc - rc;
  }
  h = std::fmod(h / 6.f + 1.f, 1.f) + f;
  h -= std::floor(h);  // (h + f) mod 1, in [0, 1)
  const float v = maxc;
  const float h6 = h * 6.f;
  const float fi = std::floor(h6);
  const float frac = h6 - fi;
  const int i = static_cast<int>(fi) % 6;
  const float p = Clamp255(v * (1.f - s));
  const float q = Clamp255(v * (1.f - s * frac));
  const float t = Clamp255(v * (1.f - s * (1.f - frac)));
  switch (i) {
    case 0: *r = v; *g = t; *b = p; break;
    case 1: *r = q; *g = v; *b = p; break;
    case 2: *r = p; *g = v; *b = t; break;
    case 3: *r = p; *g = q; *b = v; break;
    case 4: *r = t; *g = p; *b = v; break;
    default: *r = v; *g = p; *b = q; break;
  }
}

// Steps [begin, end) on one RGB pixel; `mean` is the contrast step's.
inline void StepsRgb(const ColorStep* begin, const ColorStep* end, float mean, float* r,
                     float* g, float* b) {
  for (const ColorStep* s = begin; s != end; ++s) {
    const float f = s->factor;
    switch (s->op) {
      case ColorStep::Op::kBrightness:
        *r = Clamp255(f * *r);
        *g = Clamp255(f * *g);
        *b = Clamp255(f * *b);
        break;
      case ColorStep::Op::kContrast: {
        const float m = (1.f - f) * mean;
        *r = Clamp255(f * *r + m);
        *g = Clamp255(f * *g + m);
        *b = Clamp255(f * *b + m);
        break;
      }
      case ColorStep::Op::kSaturation: {
        const float m = (1.f - f) * Gray(*r, *g, *b);
        *r = Clamp255(f * *r + m);
        *g = Clamp255(f * *g + m);
        *b = Clamp255(f * *b + m);
        break;
      }
      case ColorStep::Op::kHue:
        ShiftHue(f, r, g, b);
        break;
      case ColorStep::Op::kGrayscale:
        *r = *g = *b = Gray(*r, *g, *b);
        break;
    }
  }
}

// One channel: saturation, hue and grayscale change nothing (torchvision
// returns one-channel pictures as they are); gray is the value itself.
inline void StepsGray(const ColorStep* begin, const ColorStep* end, float mean, float* v) {
  for (const ColorStep* s = begin; s != end; ++s) {
    if (s->op == ColorStep::Op::kBrightness) {
      *v = Clamp255(s->factor * *v);
    } else if (s->op == ColorStep::Op::kContrast) {
      *v = Clamp255(s->factor * *v + (1.f - s->factor) * mean);
    }
  }
}

// Applies steps [begin, end) to every pixel; returns the mean gray of the result
// when `want_mean` (the next contrast step's mean), else 0.
double Pass(const ColorStep* begin, const ColorStep* end, float mean, int64_t pixels,
            int channels, bool want_mean, float* values) {
  double sum = 0;
  if (channels == 3) {
    for (int64_t i = 0; i < pixels; ++i) {
      float* p = values + 3 * i;
      StepsRgb(begin, end, mean, p, p + 1, p + 2);
      if (want_mean) sum += Gray(p[0], p[1], p[2]);
    }
  } else {
    for (int64_t i = 0; i < pixels; ++i) {
      float* p = values + static_cast<int64_t>(channels) * i;
      for (int c = 0; c < channels; ++c) StepsGray(begin, end, mean, p + c);
      if (want_mean) sum += p[0];
    }
  }
  return want_mean && pixels > 0 ? sum / static_cast<double>(pixels) : 0.0;
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
  const ColorStep* steps = draw.steps;
  const int n = draw.count;
  if (n == 0) return;
  // Steps run pixel by pixel in passes that end before each contrast step
  // (its mean is that of the picture the steps before it made).
  auto next_contrast = [&](int from) {
    int j = from;
    while (j < n && steps[j].op != ColorStep::Op::kContrast) ++j;
    return j;
  };
  float mean = 0.f;
  int begin = 0;
  if (steps[0].op == ColorStep::Op::kContrast) {
    mean = static_cast<float>(Pass(steps, steps, 0.f, pixels, channels, true, values));
  }
  while (true) {
    const int end = next_contrast(begin + 1);
    const bool more = end < n;
    const double m = Pass(steps + begin, steps + end, mean, pixels, channels, more, values);
    if (!more) break;
    mean = static_cast<float>(m);
    begin = end;
  }
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, float* levels,
                 const float* bias, const float* norm, float* dst) {
  ApplyColor(draw, pixels, channels, levels);
  for (int64_t i = 0; i < pixels; ++i) {
    for (int c = 0; c < channels; ++c) {
      const int64_t k = i * channels + c;
      dst[k] = (levels[k] - bias[c]) * norm[c];
    }
  }
}

void ColorOutput(const ColorDraw& draw, int64_t pixels, int channels, float* levels,
                 const float* /*bias*/, const float* /*norm*/, uint8_t* dst) {
  ApplyColor(draw, pixels, channels, levels);
  const int64_t n = pixels * channels;
  for (int64_t k = 0; k < n; ++k) {
    dst[k] = static_cast<uint8_t>(Clamp255(levels[k]) + 0.5f);
  }
}

}  // namespace warp
}  // namespace tfg
