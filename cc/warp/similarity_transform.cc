#include "cc/warp/similarity_transform.h"

#include <cmath>

#include "cc/util/stateless_random.h"

namespace tfg {
namespace warp {
namespace {

// Slots of the uniform draws, one per random quantity (as in Python), so that
// changing one option does not change the others' draws.
constexpr int kMaxRatioTries = 10;
constexpr int kSlotScale = 0;
constexpr int kSlotRatio = 1;  // .. kSlotRatio + kMaxRatioTries - 1
constexpr int kSlotCx = kSlotRatio + kMaxRatioTries;
constexpr int kSlotCy = kSlotCx + 1;
constexpr int kSlotAngle = kSlotCy + 1;
constexpr int kSlotTx = kSlotAngle + 1;
constexpr int kSlotTy = kSlotTx + 1;
constexpr int kSlotFlipH = kSlotTy + 1;
constexpr int kSlotFlipV = kSlotFlipH + 1;
constexpr int kNumSlots = kSlotFlipV + 1;

// Domain separation from the other users of the element key (frame offsets).
constexpr uint64_t kTransformStream = 0x7472616e73666f72ULL;  // "transfor"

void Multiply(const double a[9], const double b[9], double out[9]) {
  double r[9];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
  for (int i = 0; i < 9; ++i) out[i] = r[i];
}

bool Finite(double v) { return std::isfinite(v); }

}  // namespace

Status ParseTransformSpec(const std::vector<float>& v, TransformSpec* spec) {
  *spec = TransformSpec();
  if (v.empty()) return Status::Ok();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!Finite(v[i])) {
      return InvalidArgumentError("warp: transform value ", i, " is not finite");
    }
  }
  const int kind = static_cast<int>(v[0]);
  if (kind == 1 && v.size() == 14) {
    SimilarityParams& p = spec->similarity;
    spec->kind = TransformSpec::Kind::kSimilarity;
    p.scale_lo = v[1];
    p.scale_hi = v[2];
    p.has_ratio = !(v[3] == 0 && v[4] == 0);
    p.ratio_lo = v[3];
    p.ratio_hi = v[4];
    p.degrees_lo = v[5];
    p.degrees_hi = v[6];
    p.translate_y = std::fabs(v[7]);
    p.translate_x = std::fabs(v[8]);
    p.flip_h = v[9];
    p.flip_v = v[10];
    p.resize = v[11] != 0;
    p.keep_ratio = v[12] != 0;
    p.random_crop = v[13] != 0;
    if (!(p.scale_lo > 0 && p.scale_lo <= p.scale_hi)) {
      return InvalidArgumentError("warp: scale must be (low, high) with 0 < low <= high, got (",
                                  p.scale_lo, ", ", p.scale_hi, ")");
    }
    if (p.has_ratio && !(p.ratio_lo > 0 && p.ratio_lo <= p.ratio_hi)) {
      return InvalidArgumentError("warp: ratio must be (low, high) with 0 < low <= high, got (",
                                  p.ratio_lo, ", ", p.ratio_hi, ")");
    }
    if (p.degrees_lo > p.degrees_hi) {
      return InvalidArgumentError("warp: degrees must be (low, high) with low <= high");
    }
    if (!(p.flip_h >= 0 && p.flip_h <= 1 && p.flip_v >= 0 && p.flip_v <= 1)) {
      return InvalidArgumentError("warp: flip_h and flip_v are probabilities, got ", p.flip_h,
                                  " and ", p.flip_v);
    }
    return Status::Ok();
  }
  if (kind == 3 && v.size() == 10) {
    CropResizeParams& p = spec->crop_resize;
    spec->kind = TransformSpec::Kind::kCropResize;
    const int mode = static_cast<int>(v[1]);
    if (v[1] != mode || mode < 0 || mode > 2) {
      return InvalidArgumentError("warp: crop-resize mode must be 0, 1 or 2, got ", v[1]);
    }
    p.mode = static_cast<CropResizeParams::Mode>(mode);
    p.resize_h = v[2];
    p.resize_w = v[3];
    p.scale_lo = v[4];
    p.scale_hi = v[5];
    p.ratio_lo = v[6];
    p.ratio_hi = v[7];
    p.flip_h = v[8];
    p.flip_v = v[9];
    if (p.mode == CropResizeParams::Mode::kResizeCenterCrop &&
        !(p.resize_h >= 1 && (p.resize_w == 0 || p.resize_w >= 1))) {
      return InvalidArgumentError("warp: Resize's size must be >= 1, got (", p.resize_h, ", ",
                                  p.resize_w, ")");
    }
    if (p.mode == CropResizeParams::Mode::kRandomResizedCrop &&
        !(p.scale_lo >= 0 && p.scale_lo <= p.scale_hi && p.ratio_lo > 0 &&
          p.ratio_lo <= p.ratio_hi)) {
      return InvalidArgumentError("warp: RandomResizedCrop needs 0 <= scale low <= high and "
                                  "0 < ratio low <= high, got scale (", p.scale_lo, ", ",
                                  p.scale_hi, "), ratio (", p.ratio_lo, ", ", p.ratio_hi, ")");
    }
    if (!(p.flip_h >= 0 && p.flip_h <= 1 && p.flip_v >= 0 && p.flip_v <= 1)) {
      return InvalidArgumentError("warp: flip probabilities must be in [0, 1], got ", p.flip_h,
                                  " and ", p.flip_v);
    }
    return Status::Ok();
  }
  if (kind == 2 && v.size() == 10) {
    spec->kind = TransformSpec::Kind::kConstant;
    for (int i = 0; i < 9; ++i) spec->matrix[i] = v[1 + i];
    return Status::Ok();
  }
  return InvalidArgumentError("warp: a transform is [] (resize), 14 values of kind 1 "
                              "(similarity), 10 of kind 2 (constant matrix) or 10 of kind 3 "
                              "(crop / resize / flips); got ",
                              v.size(), " values of kind ", v[0]);
}

void AffineMatrix(double in_h, double in_w, double out_h, double out_w,
                  double crop_h, double crop_w, double crop_cy, double crop_cx,
                  double degrees, double ty, double tx, bool flip_h, bool flip_v,
                  bool resize, bool keep_ratio, double m[9]) {
  const double fh = flip_h ? -1.0 : 1.0, fv = flip_v ? -1.0 : 1.0;
  double sx = 1.0, sy = 1.0;
  if (resize) {
    sx = crop_w / out_w;
    sy = crop_h / out_h;
    if (keep_ratio) sx = sy = std::fmin(sx, sy);
  }
  const double theta = degrees * (M_PI / 180.0);
  const double c = std::cos(theta), s = std::sin(theta);
  const double t_in[9] = {fh, 0, (in_w - 1) / 2, 0, fv, (in_h - 1) / 2, 0, 0, 1};
  const double t_crop[9] = {1, 0, crop_cx, 0, 1, crop_cy, 0, 0, 1};
  const double rot[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  const double scale[9] = {sx, 0, 0, 0, sy, 0, 0, 0, 1};
  const double t_out[9] = {1, 0, -tx - (out_w - 1) / 2, 0, 1, -ty - (out_h - 1) / 2, 0, 0, 1};
  double r[9];
  Multiply(t_in, t_crop, r);
  Multiply(r, rot, r);
  Multiply(r, scale, r);
  Multiply(r, t_out, m);
}

namespace {

// Slots of kCropResize's uniform draws.
constexpr int kCropTries = 10;
constexpr int kSlotArea = 0;                      // .. kCropTries - 1
constexpr int kSlotLogRatio = kCropTries;         // .. 2 * kCropTries - 1
constexpr int kSlotTop = 2 * kCropTries;
constexpr int kSlotLeft = kSlotTop + 1;
constexpr int kSlotCropFlipH = kSlotLeft + 1;
constexpr int kSlotCropFlipV = kSlotCropFlipH + 1;
constexpr int kCropSlots = kSlotCropFlipV + 1;
constexpr uint64_t kCropResizeStream = 0x63726f7072737a65ULL;  // "croprsze"

// Python's round() (ties to even), which torchvision's crop sizes use.
double RoundHalfEven(double x) { return std::nearbyint(x); }

// A uniform integer in [lo, hi] from u in [0, 1), as randint(lo, hi + 1).
double UniformInt(double u, double lo, double hi) {
  return std::fmin(hi, lo + std::floor(u * (hi - lo + 1)));
}

// The crop torchvision's RandomResizedCrop.get_params takes: (top, left,
// height, width), whole pixels; 10 tries, then the centred fallback.
void DrawResizedCrop(const CropResizeParams& p, const double* u, double in_h, double in_w,
                     double crop[4]) {
  const double area = in_h * in_w;
  const double rlo = std::log(p.ratio_lo), rhi = std::log(p.ratio_hi);
  for (int t = 0; t < kCropTries; ++t) {
    const double target = area * (p.scale_lo + (p.scale_hi - p.scale_lo) * u[kSlotArea + t]);
    const double ratio = std::exp(rlo + (rhi - rlo) * u[kSlotLogRatio + t]);
    const double w = RoundHalfEven(std::sqrt(target * ratio));
    const double h = RoundHalfEven(std::sqrt(target / ratio));
    if (w > 0 && w <= in_w && h > 0 && h <= in_h) {
      crop[0] = UniformInt(u[kSlotTop], 0, in_h - h);
      crop[1] = UniformInt(u[kSlotLeft], 0, in_w - w);
      crop[2] = h;
      crop[3] = w;
      return;
    }
  }
  const double in_ratio = in_w / in_h;
  double w = in_w, h = in_h;
  if (in_ratio < p.ratio_lo) {
    h = RoundHalfEven(w / p.ratio_lo);
  } else if (in_ratio > p.ratio_hi) {
    w = RoundHalfEven(h * p.ratio_hi);
  }
  crop[0] = std::floor((in_h - h) / 2);
  crop[1] = std::floor((in_w - w) / 2);
  crop[2] = h;
  crop[3] = w;
}

// The first pixel of a centre crop of `crop` out of `size` (torchvision's
// center_crop: rounded offset, or the padding's split when the crop is larger).
double CenterCropStart(double size, double crop) {
  if (crop > size) return -std::floor((crop - size) / 2);
  return RoundHalfEven((size - crop) / 2);
}

void CropResizeMatrix(const CropResizeParams& p, uint64_t key, double in_h, double in_w,
                      double out_h, double out_w, double m[9]) {
  KeyedRandom random(HashKey({key, kCropResizeStream}));
  double u[kCropSlots];
  for (double& x : u) x = random.Uniform();
  // Output pixel x samples input x0 + (x + 0.5) * sx - 0.5 (half-pixel
  // centres), and likewise for y.
  double x0 = 0, y0 = 0, sx = 1, sy = 1;
  switch (p.mode) {
    case CropResizeParams::Mode::kRandomResizedCrop: {
      double crop[4];
      DrawResizedCrop(p, u, in_h, in_w, crop);
      y0 = crop[0];
      x0 = crop[1];
      sy = crop[2] / out_h;
      sx = crop[3] / out_w;
      break;
    }
    case CropResizeParams::Mode::kResizeCenterCrop: {
      double new_h = p.resize_h, new_w = p.resize_w;
      if (p.resize_w == 0) {  // the shorter side to resize_h, the longer truncated
        const double shorter = std::fmin(in_h, in_w), longer = std::fmax(in_h, in_w);
        const double other = std::floor(p.resize_h * longer / shorter);
        new_h = in_h <= in_w ? p.resize_h : other;
        new_w = in_h <= in_w ? other : p.resize_h;
      }
      sy = in_h / new_h;
      sx = in_w / new_w;
      y0 = CenterCropStart(new_h, out_h) * sy;
      x0 = CenterCropStart(new_w, out_w) * sx;
      break;
    }
    case CropResizeParams::Mode::kCenterCrop:
      y0 = CenterCropStart(in_h, out_h);
      x0 = CenterCropStart(in_w, out_w);
      break;
  }
  // Flips mirror the output (torchvision flips the cropped, resized picture).
  const bool fh = u[kSlotCropFlipH] < p.flip_h, fv = u[kSlotCropFlipV] < p.flip_v;
  const double ax = fh ? -sx : sx, ay = fv ? -sy : sy;
  const double bx = x0 + ((fh ? out_w - 1 : 0) + 0.5) * sx - 0.5;
  const double by = y0 + ((fv ? out_h - 1 : 0) + 0.5) * sy - 0.5;
  const double r[9] = {ax, 0, bx, 0, ay, by, 0, 0, 1};
  for (int i = 0; i < 9; ++i) m[i] = r[i];
}

}  // namespace

void TransformMatrix(const TransformSpec& spec, uint64_t key, int64_t in_h_i,
                     int64_t in_w_i, int64_t out_h_i, int64_t out_w_i, double m[9]) {
  const double in_h = static_cast<double>(in_h_i), in_w = static_cast<double>(in_w_i);
  const double out_h = static_cast<double>(out_h_i), out_w = static_cast<double>(out_w_i);
  if (spec.kind == TransformSpec::Kind::kConstant) {
    for (int i = 0; i < 9; ++i) m[i] = spec.matrix[i];
    return;
  }
  if (spec.kind == TransformSpec::Kind::kResize) {
    AffineMatrix(in_h, in_w, out_h, out_w, in_h, in_w, 0, 0, 0, 0, 0, false, false,
                 /*resize=*/true, /*keep_ratio=*/false, m);
    return;
  }
  if (spec.kind == TransformSpec::Kind::kCropResize) {
    CropResizeMatrix(spec.crop_resize, key, in_h, in_w, out_h, out_w, m);
    return;
  }
  const SimilarityParams& p = spec.similarity;
  KeyedRandom random(HashKey({key, kTransformStream}));
  double u[kNumSlots];
  for (double& x : u) x = random.Uniform();

  const double lo = std::log(p.scale_lo), hi = std::log(p.scale_hi);
  const double s = std::exp(lo + (hi - lo) * u[kSlotScale]);
  double crop_h, crop_w;
  bool drawn = true;
  if (!p.has_ratio) {
    crop_h = std::sqrt(s) * in_h;
    crop_w = std::sqrt(s) * in_w;
  } else {
    // Up to kMaxRatioTries aspect ratios; the first crop that fits wins,
    // else the whole input narrowed to the nearest allowed ratio, centred.
    const double area = s * in_w * in_h;
    const double rlo = std::log(p.ratio_lo), rhi = std::log(p.ratio_hi);
    drawn = false;
    for (int t = 0; t < kMaxRatioTries && !drawn; ++t) {
      const double ar = std::exp(rlo + (rhi - rlo) * u[kSlotRatio + t]);
      const double cw = std::sqrt(area * ar), ch = std::sqrt(area / ar);
      if (cw <= in_w && ch <= in_h) {
        crop_w = cw;
        crop_h = ch;
        drawn = true;
      }
    }
    if (!drawn) {
      const double in_ratio = in_w / in_h;
      crop_w = in_ratio > p.ratio_hi ? in_h * p.ratio_hi : in_w;
      crop_h = in_ratio < p.ratio_lo ? in_w / p.ratio_lo : in_h;
    }
  }
  double cx = 0, cy = 0;
  if (p.random_crop && drawn) {  // the fallback crop stays centred
    cx = (u[kSlotCx] - 0.5) * std::fabs(in_w - crop_w);
    cy = (u[kSlotCy] - 0.5) * std::fabs(in_h - crop_h);
  }
  const double angle = p.degrees_lo + (p.degrees_hi - p.degrees_lo) * u[kSlotAngle];
  const double tx = (2 * u[kSlotTx] - 1) * p.translate_x * out_w;
  const double ty = (2 * u[kSlotTy] - 1) * p.translate_y * out_h;
  AffineMatrix(in_h, in_w, out_h, out_w, crop_h, crop_w, cy, cx, angle, ty, tx,
               u[kSlotFlipH] < p.flip_h, u[kSlotFlipV] < p.flip_v, p.resize,
               p.keep_ratio, m);
}

}  // namespace warp
}  // namespace tfg
