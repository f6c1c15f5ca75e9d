// Y'CbCr -> R'G'B' conversion of 8-bit pictures: full or limited range,
// BT.601, BT.709 or BT.2020 matrix, 4:2:0 / 4:2:2 / 4:4:4 chroma upsampled
// bilinearly (chroma samples centred between luma samples, at X/2 - 0.25 for
// 4:2:0) or by repetition ("nearest", what FFmpeg's swscale does for
// yuv420p -> rgb24).
//
// The per-pixel functions are TFG_HOST_DEVICE: the CPU decoder
// (hevc_decoder.cc) and the GPU kernels that read decoder surfaces (cc/gpu)
// share them, so both paths make the same pixels. TensorFlow- and
// FFmpeg-free.
#ifndef TF_GULP_CC_CODEC_YCBCR_H_
#define TF_GULP_CC_CODEC_YCBCR_H_

#include <math.h>
#include <stdint.h>

#include "cc/util/host_device.h"

namespace tfg {
namespace codec {

enum class YcbcrStandard { kBt601, kBt709, kBt2020 };

// Y'CbCr -> R'G'B' coefficients for one matrix and range.
struct YcbcrMatrix {
  float y_offset, y_scale, c_scale;
  float r_cr, g_cb, g_cr, b_cb;
};

inline YcbcrMatrix MakeYcbcrMatrix(YcbcrStandard standard, bool full_range) {
  double kr = 0.299, kb = 0.114;  // BT.601
  if (standard == YcbcrStandard::kBt709) {
    kr = 0.2126;
    kb = 0.0722;
  } else if (standard == YcbcrStandard::kBt2020) {
    kr = 0.2627;
    kb = 0.0593;
  }
  const double kg = 1.0 - kr - kb;
  YcbcrMatrix m;
  m.y_offset = full_range ? 0.f : 16.f;
  m.y_scale = full_range ? 1.f : 255.f / 219.f;
  m.c_scale = full_range ? 1.f : 255.f / 224.f;
  m.r_cr = static_cast<float>(2 * (1 - kr));
  m.b_cb = static_cast<float>(2 * (1 - kb));
  m.g_cb = static_cast<float>(2 * kb * (1 - kb) / kg);
  m.g_cr = static_cast<float>(2 * kr * (1 - kr) / kg);
  return m;
}

TFG_HOST_DEVICE uint8_t RoundClamp255(float v) {
  v = floorf(v + 0.5f);
  return static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
}

TFG_HOST_DEVICE void YcbcrToRgb(const YcbcrMatrix& m, float y, float cb, float cr,
                                uint8_t* rgb) {
  const float yy = (y - m.y_offset) * m.y_scale;
  const float u = (cb - 128.f) * m.c_scale, v = (cr - 128.f) * m.c_scale;
  rgb[0] = RoundClamp255(yy + m.r_cr * v);
  rgb[1] = RoundClamp255(yy - m.g_cb * u - m.g_cr * v);
  rgb[2] = RoundClamp255(yy + m.b_cb * u);
}

// Where luma index `i` samples a chroma plane of `n` samples subsampled by
// 2^shift: the two chroma indices and the weight of the second.
struct ChromaTap {
  int i0, i1;
  float a;
};

TFG_HOST_DEVICE ChromaTap ChromaTapFor(int i, int shift, int n, bool bilinear) {
  if (!bilinear || shift == 0) {
    const int c = (i >> shift) < n - 1 ? (i >> shift) : n - 1;
    return {c, c, 0.f};
  }
  // Exact in float: multiples of 1/4 (4:2:0, 4:2:2) of modest integers.
  const float pos = (i + 0.5f) / static_cast<float>(1 << shift) - 0.5f;
  const float f = floorf(pos);
  const int i0 = static_cast<int>(f);
  const int c0 = i0 < 0 ? 0 : (i0 > n - 1 ? n - 1 : i0);
  const int c1 = i0 + 1 < 0 ? 0 : (i0 + 1 > n - 1 ? n - 1 : i0 + 1);
  return {c0, c1, pos - f};
}

// An 8-bit Y'CbCr picture in memory: planar (I420: cb and cr planes, step 1)
// or semi-planar (NV12: cr = cb + 1, step 2, one shared stride); gray when cb
// is null.
struct YcbcrPicture {
  int width = 0, height = 0;
  const uint8_t* y = nullptr;
  long long y_stride = 0;
  const uint8_t* cb = nullptr;
  const uint8_t* cr = nullptr;
  long long cb_stride = 0, cr_stride = 0;
  int chroma_step = 1;                  // bytes between horizontal chroma samples
  int shift_x = 1, shift_y = 1;         // log2 of the chroma subsampling
  int chroma_width = 0, chroma_height = 0;
  YcbcrMatrix matrix;
};

// The RGB value of pixel (x, y), with chroma upsampled per `bilinear`.
TFG_HOST_DEVICE void PixelToRgb(const YcbcrPicture& p, int x, int y, bool bilinear,
                                uint8_t* rgb) {
  const float luma = p.y[y * p.y_stride + x];
  if (p.cb == nullptr) {
    const uint8_t v = RoundClamp255((luma - p.matrix.y_offset) * p.matrix.y_scale);
    rgb[0] = rgb[1] = rgb[2] = v;
    return;
  }
  const ChromaTap tx = ChromaTapFor(x, p.shift_x, p.chroma_width, bilinear);
  const ChromaTap ty = ChromaTapFor(y, p.shift_y, p.chroma_height, bilinear);
  const long long c0 = tx.i0 * static_cast<long long>(p.chroma_step);
  const long long c1 = tx.i1 * static_cast<long long>(p.chroma_step);
  const uint8_t* b0 = p.cb + ty.i0 * p.cb_stride;
  const uint8_t* b1 = p.cb + ty.i1 * p.cb_stride;
  const uint8_t* r0 = p.cr + ty.i0 * p.cr_stride;
  const uint8_t* r1 = p.cr + ty.i1 * p.cr_stride;
  const float ax = tx.a, ay = ty.a;
  const float cb = (1 - ay) * ((1 - ax) * b0[c0] + ax * b0[c1]) +
                   ay * ((1 - ax) * b1[c0] + ax * b1[c1]);
  const float cr = (1 - ay) * ((1 - ax) * r0[c0] + ax * r0[c1]) +
                   ay * ((1 - ax) * r1[c0] + ax * r1[c1]);
  YcbcrToRgb(p.matrix, luma, cb, cr, rgb);
}

// Writes the RGB pixels of [x, x + w) x [y, y + h) to `dst` (h rows of w * 3
// bytes). The caller checks the rectangle.
void RegionToRgb(const YcbcrPicture& p, int x, int y, int w, int h, bool bilinear,
                 uint8_t* dst);

}  // namespace codec
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_YCBCR_H_
