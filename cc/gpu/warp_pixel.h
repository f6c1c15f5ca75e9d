// One output pixel of the similarity warp, as the GPU kernel computes it.
//
// Shared by the CUDA kernel (similarity_warp_kernels.cu) and the host: the
// harness runs this very function on the CPU and compares it with the CPU
// reference (cc/warp/similarity_warp.cc), so the kernel's arithmetic (float
// coordinates, floor, clamps, rounding) is checked even on machines without a
// GPU; only the thread indexing and the launch need one.
#ifndef TF_GULP_CC_GPU_WARP_PIXEL_H_
#define TF_GULP_CC_GPU_WARP_PIXEL_H_

#include <math.h>
#include <stdint.h>

#include "cc/codec/ycbcr.h"
#include "cc/util/host_device.h"

namespace tfg {
namespace gpu {

struct PixelStrides {
  long long x, y, c;
};

TFG_HOST_DEVICE PixelStrides StridesOf(int nchw, long long height, long long width,
                                       int channels) {
  if (!nchw) return {channels, width * channels, 1};
  return {1, width, height * width};
}

// Where output pixel (x, y) samples the input: the four bilinear taps and
// their weights, or `inside` false when it maps outside the picture (the
// picture covers [-0.5, width - 0.5] x [-0.5, height - 0.5]; samples beyond
// the outermost pixel centres repeat the edge). `m` is the row-major 3x3
// matrix mapping output pixels to input pixels.
struct BilinearTaps {
  bool inside;
  int x0, x1, y0, y1;
  float w00, w01, w10, w11;
};

TFG_HOST_DEVICE BilinearTaps TapsFor(const float* m, int in_height, int in_width, int x,
                                     int y) {
  BilinearTaps t = {};
  float X = m[0] * x + m[1] * y + m[2];
  float Y = m[3] * x + m[4] * y + m[5];
  t.inside = true;
  if (!(m[6] == 0.f && m[7] == 0.f && m[8] == 1.f)) {
    const float W = m[6] * x + m[7] * y + m[8];
    if (W > 0.f) {
      X /= W;
      Y /= W;
    } else {
      t.inside = false;
    }
  }
  // Written so that NaN coordinates count as outside.
  t.inside = t.inside && X >= -0.5f && X <= in_width - 0.5f && Y >= -0.5f &&
             Y <= in_height - 0.5f;
  if (!t.inside) return t;
  const int ix = static_cast<int>(floorf(X));
  const int iy = static_cast<int>(floorf(Y));
  const float ax = X - ix, ay = Y - iy;
  t.x0 = ix < 0 ? 0 : ix;
  t.x1 = ix + 1 > in_width - 1 ? in_width - 1 : ix + 1;
  t.y0 = iy < 0 ? 0 : iy;
  t.y1 = iy + 1 > in_height - 1 ? in_height - 1 : iy + 1;
  t.w00 = (1.f - ax) * (1.f - ay);
  t.w01 = ax * (1.f - ay);
  t.w10 = (1.f - ax) * ay;
  t.w11 = ax * ay;
  return t;
}

// Combines one channel's four tap values, rounds half up and clamps as the
// CPU reference does, then normalizes.
TFG_HOST_DEVICE float Blend(const BilinearTaps& t, float v00, float v01, float v10, float v11,
                            float bias, float norm) {
  const float v = t.w00 * v00 + t.w01 * v01 + t.w10 * v10 + t.w11 * v11;
  int q = static_cast<int>(v + 0.5f);
  q = q > 255 ? 255 : q;
  return (static_cast<float>(q) - bias) * norm;
}

// Output pixel (x, y) of an 8-bit picture (in_height x in_width x channels,
// strides `in`); writes `channels` floats at `px`, `out_c` apart.
TFG_HOST_DEVICE void WarpPixel(const uint8_t* picture, int in_height, int in_width,
                               int channels, PixelStrides in, const float* m,
                               const float* bias, const float* norm,
                               const float* oob_color, int x, int y, float* px,
                               long long out_c) {
  const BilinearTaps t = TapsFor(m, in_height, in_width, x, y);
  if (!t.inside) {
    for (int c = 0; c < channels; ++c) px[c * out_c] = oob_color[c];
    return;
  }
  const uint8_t* p00 = picture + t.y0 * in.y + t.x0 * in.x;
  const uint8_t* p01 = picture + t.y0 * in.y + t.x1 * in.x;
  const uint8_t* p10 = picture + t.y1 * in.y + t.x0 * in.x;
  const uint8_t* p11 = picture + t.y1 * in.y + t.x1 * in.x;
  for (int c = 0; c < channels; ++c) {
    const long long o = c * in.c;
    px[c * out_c] = Blend(t, p00[o], p01[o], p10[o], p11[o], bias[c], norm[c]);
  }
}

// Output pixel (x, y) of a Y'CbCr picture (a decoder surface, e.g. NV12),
// with the colour conversion fused in: each tap is converted to RGB exactly as
// the CPU decoder converts whole pictures (codec::PixelToRgb), then the taps
// are blended as WarpPixel blends RGB pixels. The result is that of decoding
// to RGB on the CPU and warping, without an RGB picture in memory. Writes 3
// floats at `px`, `out_c` apart.
TFG_HOST_DEVICE void WarpYcbcrPixel(const codec::YcbcrPicture& p, bool bilinear_chroma,
                                    const float* m, const float* bias, const float* norm,
                                    const float* oob_color, int x, int y, float* px,
                                    long long out_c) {
  const BilinearTaps t = TapsFor(m, p.height, p.width, x, y);
  if (!t.inside) {
    for (int c = 0; c < 3; ++c) px[c * out_c] = oob_color[c];
    return;
  }
  uint8_t rgb00[3], rgb01[3], rgb10[3], rgb11[3];
  codec::PixelToRgb(p, t.x0, t.y0, bilinear_chroma, rgb00);
  codec::PixelToRgb(p, t.x1, t.y0, bilinear_chroma, rgb01);
  codec::PixelToRgb(p, t.x0, t.y1, bilinear_chroma, rgb10);
  codec::PixelToRgb(p, t.x1, t.y1, bilinear_chroma, rgb11);
  for (int c = 0; c < 3; ++c) {
    px[c * out_c] = Blend(t, rgb00[c], rgb01[c], rgb10[c], rgb11[c], bias[c], norm[c]);
  }
}

// decode_hevc_warped's warp of one decoded picture (tfg_decode_warp_ycbcr):
// passed to the kernel by value (no device copy). The matrix maps output
// pixels to pixels of the region (x0, y0, width, height) of the decoded
// picture (the sample's crop): as on the CPU, the region's edges are the
// picture's edges for the warp, while chroma taps keep their absolute
// position in the picture (codec::HevcDecoder::ToRgb converts a region the
// same way).
struct RegionWarp {
  int x0 = 0, y0 = 0, width = 0, height = 0;
  float matrix[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  float bias[3] = {0, 0, 0};
  float norm[3] = {1, 1, 1};
  float oob_color[3] = {0, 0, 0};
  int out_height = 0, out_width = 0;
  int nchw = 0;             // else NHWC
  int bilinear_chroma = 1;  // else chroma repeated
  int u8_output = 0;        // uint8 samples (bias and norm unused), else float32
};

// Output pixel (x, y) of `w`'s region of `p`: 3 values in levels (0-255,
// rounded as WarpYcbcrPixel rounds them) or the out-of-bounds colour.
// Returns false when the pixel maps outside the region.
TFG_HOST_DEVICE bool RegionWarpLevels(const codec::YcbcrPicture& p, const RegionWarp& w, int x,
                                      int y, float levels[3]) {
  const BilinearTaps t = TapsFor(w.matrix, w.height, w.width, x, y);
  if (!t.inside) {
    for (int c = 0; c < 3; ++c) levels[c] = w.oob_color[c];
    return false;
  }
  uint8_t rgb00[3], rgb01[3], rgb10[3], rgb11[3];
  const bool bilinear = w.bilinear_chroma != 0;
  codec::PixelToRgb(p, w.x0 + t.x0, w.y0 + t.y0, bilinear, rgb00);
  codec::PixelToRgb(p, w.x0 + t.x1, w.y0 + t.y0, bilinear, rgb01);
  codec::PixelToRgb(p, w.x0 + t.x0, w.y0 + t.y1, bilinear, rgb10);
  codec::PixelToRgb(p, w.x0 + t.x1, w.y0 + t.y1, bilinear, rgb11);
  for (int c = 0; c < 3; ++c) {
    levels[c] = Blend(t, rgb00[c], rgb01[c], rgb10[c], rgb11[c], 0.f, 1.f);
  }
  return true;
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_WARP_PIXEL_H_
