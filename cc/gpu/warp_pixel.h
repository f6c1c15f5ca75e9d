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

#ifdef __CUDACC__
#define TFG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TFG_HOST_DEVICE inline
#endif

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

// Output pixel (x, y): `m` is the row-major 3x3 matrix mapping output pixels
// to input pixels of `picture` (in_height x in_width x channels, strides
// `in`); writes `channels` floats at `px`, `out_c` apart.
TFG_HOST_DEVICE void WarpPixel(const uint8_t* picture, int in_height, int in_width,
                               int channels, PixelStrides in, const float* m,
                               const float* bias, const float* norm,
                               const float* oob_color, int x, int y, float* px,
                               long long out_c) {
  float X = m[0] * x + m[1] * y + m[2];
  float Y = m[3] * x + m[4] * y + m[5];
  bool inside = true;
  if (!(m[6] == 0.f && m[7] == 0.f && m[8] == 1.f)) {
    const float W = m[6] * x + m[7] * y + m[8];
    if (W > 0.f) {
      X /= W;
      Y /= W;
    } else {
      inside = false;
    }
  }
  // Written so that NaN coordinates count as outside.
  inside = inside && X >= -0.5f && X <= in_width - 0.5f && Y >= -0.5f &&
           Y <= in_height - 0.5f;
  if (!inside) {
    for (int c = 0; c < channels; ++c) px[c * out_c] = oob_color[c];
    return;
  }
  const int ix = static_cast<int>(floorf(X));
  const int iy = static_cast<int>(floorf(Y));
  const float ax = X - ix, ay = Y - iy;
  const int x0 = ix < 0 ? 0 : ix;
  const int x1 = ix + 1 > in_width - 1 ? in_width - 1 : ix + 1;
  const int y0 = iy < 0 ? 0 : iy;
  const int y1 = iy + 1 > in_height - 1 ? in_height - 1 : iy + 1;
  const float w00 = (1.f - ax) * (1.f - ay), w01 = ax * (1.f - ay);
  const float w10 = (1.f - ax) * ay, w11 = ax * ay;
  const uint8_t* p00 = picture + y0 * in.y + x0 * in.x;
  const uint8_t* p01 = picture + y0 * in.y + x1 * in.x;
  const uint8_t* p10 = picture + y1 * in.y + x0 * in.x;
  const uint8_t* p11 = picture + y1 * in.y + x1 * in.x;
  for (int c = 0; c < channels; ++c) {
    const long long o = c * in.c;
    const float v = w00 * p00[o] + w01 * p01[o] + w10 * p10[o] + w11 * p11[o];
    // Round half up and clamp, as the CPU reference does.
    int q = static_cast<int>(v + 0.5f);
    q = q > 255 ? 255 : q;
    px[c * out_c] = (static_cast<float>(q) - bias[c]) * norm[c];
  }
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_WARP_PIXEL_H_
