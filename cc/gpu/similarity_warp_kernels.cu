// The similarity warp on the GPU: one thread per output pixel, all channels
// in registers; the per-pixel arithmetic is WarpPixel (warp_pixel.h), which
// the harness also runs on the host against the CPU reference.
//
// The kernels are `extern "C"` so that the host can find them by name in a
// fatbin loaded through the CUDA driver API (cc/gpu/gpu_runtime.h): nothing
// here links against the CUDA runtime, so a process that already holds
// another CUDA runtime (TensorFlow's CUDA 12) is not given a second one.
#include <cstdint>

#include "cc/gpu/color_pixel.h"
#include "cc/gpu/warp_pixel.h"

// src: `batch` uint8 pictures of in_height x in_width x channels (at most 4),
// NHWC or NCHW, `src_picture_stride` bytes apart. matrices: [batch, 9]
// row-major, mapping output pixels to input pixels. bias, norm, oob_color:
// `channels` floats each. dst: [batch, out_height, out_width, channels] (or
// NCHW) float32. Grid: x and y over the output picture, z over the batch.
extern "C" __global__ void tfg_similarity_warp_u8(
    const uint8_t* __restrict__ src, long long src_picture_stride, int in_height,
    int in_width, int channels, const float* __restrict__ matrices,
    const float* __restrict__ bias, const float* __restrict__ norm,
    const float* __restrict__ oob_color, int out_height, int out_width, int nchw,
    float* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (x >= out_width || y >= out_height) return;
  using tfg::gpu::PixelStrides;
  const PixelStrides in = tfg::gpu::StridesOf(nchw, in_height, in_width, channels);
  const PixelStrides out = tfg::gpu::StridesOf(nchw, out_height, out_width, channels);
  float* px = dst + static_cast<long long>(b) * out_height * out_width * channels +
              y * out.y + x * out.x;
  tfg::gpu::WarpPixel(src + b * src_picture_stride, in_height, in_width, channels, in,
                      matrices + 9 * static_cast<long long>(b), bias, norm, oob_color, x, y,
                      px, out.c);
}

// The fused variant for decoder surfaces: pictures[b] describes picture b's
// Y'CbCr planes (device pointers; NV12 from NVDEC, or planar), its size and
// colour matrix. Output as above, 3 channels. Chroma is upsampled bilinearly
// when bilinear_chroma is non-zero, else by repetition.
extern "C" __global__ void tfg_similarity_warp_ycbcr(
    const tfg::codec::YcbcrPicture* __restrict__ pictures, int bilinear_chroma,
    const float* __restrict__ matrices, const float* __restrict__ bias,
    const float* __restrict__ norm, const float* __restrict__ oob_color, int out_height,
    int out_width, int nchw, float* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (x >= out_width || y >= out_height) return;
  const tfg::gpu::PixelStrides out = tfg::gpu::StridesOf(nchw, out_height, out_width, 3);
  float* px = dst + static_cast<long long>(b) * out_height * out_width * 3 + y * out.y +
              x * out.x;
  tfg::gpu::WarpYcbcrPixel(pictures[b], bilinear_chroma != 0,
                           matrices + 9 * static_cast<long long>(b), bias, norm, oob_color, x,
                           y, px, out.c);
}

// decode_hevc's GPU kernel: the (x0, y0, width, height) region of a decoder
// surface (NV12 from NVDEC) to 8-bit RGB [height, width, 3], pixel by pixel
// as the CPU decoder converts (codec::PixelToRgb: same matrix, range, chroma
// upsampling and rounding), so both kernels of decode_hevc give the same bytes.
// The picture is passed by value (a kernel parameter, no device copy).
extern "C" __global__ void tfg_ycbcr_to_rgb_u8(tfg::codec::YcbcrPicture picture, int x0,
                                                int y0, int width, int height,
                                                int bilinear_chroma, uint8_t* __restrict__ dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  tfg::codec::PixelToRgb(picture, x0 + x, y0 + y, bilinear_chroma != 0,
                         dst + (static_cast<long long>(y) * width + x) * 3);
}

// decode_hevc_warped's GPU kernel: the fused decode + warp of one decoded
// picture (an NVDEC surface, NV12, mapped on the launching stream) straight
// into its slot of the op's output: w.out_height x w.out_width x 3, NHWC (or
// NCHW), float32 ((v - bias) * norm) or uint8 (v). Each tap is converted as
// the CPU decoder converts (codec::PixelToRgb) and the taps blended as the
// warp kernels blend, so the result is decode_hevc + similarity_warp's, which
// the CPU decode_hevc_warped kernel gives within a level. Picture and warp by
// value: kernel parameters, no device copy.
extern "C" __global__ void tfg_decode_warp_ycbcr(tfg::codec::YcbcrPicture picture,
                                                 tfg::gpu::RegionWarp w, void* dst) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w.out_width || y >= w.out_height) return;
  const tfg::gpu::PixelStrides out = tfg::gpu::StridesOf(w.nchw, w.out_height, w.out_width, 3);
  const long long at = y * out.y + x * out.x;
  float levels[3];
  const bool inside = tfg::gpu::RegionWarpLevels(picture, w, x, y, levels);
  if (w.u8_output) {
    uint8_t* px = static_cast<uint8_t*>(dst) + at;
    for (int c = 0; c < 3; ++c) px[c * out.c] = tfg::codec::RoundClamp255(levels[c]);
    return;
  }
  float* px = static_cast<float*>(dst) + at;
  for (int c = 0; c < 3; ++c) {
    // Outside: the out-of-bounds colour as it is (the CPU kernels do not normalize it).
    px[c * out.c] = inside ? (levels[c] - w.bias[c]) * w.norm[c] : levels[c];
  }
}

// The colour steps of one picture (color_pixel.h), after tfg_decode_warp_ycbcr
// wrote its levels into `picture` (the plan's output slot): one block of
// kColorThreads threads (blockDim.x <= kColorThreads). Each contrast step's
// mean is measured first (every thread's share of the picture's gray after
// the steps before it, then thread 0 adds the shares in thread order), then
// every pixel is coloured and written in place.
extern "C" __global__ void tfg_color_levels(tfg::gpu::ColorPlan plan, void* picture) {
  __shared__ float shares[tfg::gpu::kColorThreads];
  __shared__ float offsets[tfg::gpu::kColorPlanSteps];
  const int t = threadIdx.x, threads = blockDim.x;
  for (int k = 0; k < plan.count; ++k) {
    if (plan.ops[k] != tfg::gpu::kColorContrast) continue;
    shares[t] = tfg::gpu::ColorGrayShare(plan, picture, offsets, k, t, threads);
    __syncthreads();
    if (t == 0) offsets[k] = tfg::gpu::ColorContrastOffset(plan, k, shares, threads);
    __syncthreads();
  }
  tfg::gpu::ColorWritePixels(plan, picture, offsets, t, threads);
}
