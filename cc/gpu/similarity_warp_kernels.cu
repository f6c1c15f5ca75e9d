// The similarity warp on the GPU: the same mapping, sampling, rounding and
// normalization as the CPU reference (cc/warp/similarity_warp.cc), one thread
// per output pixel, all channels in registers.
//
// The kernels are `extern "C"` so that the host can find them by name in a
// fatbin loaded through the CUDA driver API (cc/gpu/cuda_driver.h): nothing
// here links against the CUDA runtime, so a process that already holds
// another CUDA runtime (TensorFlow's CUDA 12) is not given a second one.
//
// Coordinates are computed in float (the CPU uses double): on 512-pixel inputs
// the difference moves a sample by < 1e-4 pixel, which changes a rounded value
// by at most one level, well inside the 2/255 the GPU proof allows.
#include <cstdint>

namespace {

constexpr int kMaxChannels = 4;

struct Strides {
  long long x, y, c;
};

__device__ __forceinline__ Strides StridesOf(int nchw, long long height,
                                             long long width, int channels) {
  if (!nchw) return {channels, width * channels, 1};
  return {1, width, height * width};
}

}  // namespace

// src: `batch` uint8 pictures of in_height x in_width x channels, NHWC or
// NCHW, `src_picture_stride` bytes apart. matrices: [batch, 9] row-major,
// mapping output pixels to input pixels. bias, norm, oob_color: `channels`
// floats each (device memory). dst: [batch, out_height, out_width, channels]
// (or NCHW) float32.
extern "C" __global__ void tfg_similarity_warp_u8(
    const uint8_t* __restrict__ src, long long src_picture_stride, int in_height,
    int in_width, int channels, const float* __restrict__ matrices,
    const float* __restrict__ bias, const float* __restrict__ norm,
    const float* __restrict__ oob_color, int out_height, int out_width, int nchw,
    float* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (x >= out_width || y >= out_height || channels > kMaxChannels) return;

  const float* m = matrices + 9 * static_cast<long long>(b);
  const uint8_t* picture = src + b * src_picture_stride;
  const Strides in = StridesOf(nchw, in_height, in_width, channels);
  const Strides out = StridesOf(nchw, out_height, out_width, channels);
  float* px = dst + static_cast<long long>(b) * out_height * out_width * channels +
              y * out.y + x * out.x;

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
    for (int c = 0; c < channels; ++c) px[c * out.c] = oob_color[c];
    return;
  }
  const int ix = static_cast<int>(floorf(X));
  const int iy = static_cast<int>(floorf(Y));
  const float ax = X - ix, ay = Y - iy;
  const int x0 = max(ix, 0), x1 = min(ix + 1, in_width - 1);
  const int y0 = max(iy, 0), y1 = min(iy + 1, in_height - 1);
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
    const int q = min(static_cast<int>(v + 0.5f), 255);
    px[c * out.c] = (static_cast<float>(q) - bias[c]) * norm[c];
  }
}
