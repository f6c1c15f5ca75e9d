// The similarity warp on the GPU: one thread per output pixel, all channels
// in registers; the per-pixel arithmetic is WarpPixel (warp_pixel.h), which
// the harness also runs on the host against the CPU reference.
//
// The kernels are `extern "C"` so that the host can find them by name in a
// fatbin loaded through the CUDA driver API (cc/gpu/cuda_driver.h): nothing
// here links against the CUDA runtime, so a process that already holds
// another CUDA runtime (TensorFlow's CUDA 12) is not given a second one.
#include <cstdint>

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
