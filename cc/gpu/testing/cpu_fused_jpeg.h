// What the GPU JPEG path's tests (decode_jpeg_warped_body_test,
// jpeg_warp_gpu_test) compare its pixels with: the CPU fused JPEG path
// (cc/codec/jpeg_warp) decoding as the GPU decodes: every pixel (no DCT
// scaling: nvJPEG decodes at full size), accurate IDCT.
#ifndef TF_GULP_CC_GPU_TESTING_CPU_FUSED_JPEG_H_
#define TF_GULP_CC_GPU_TESTING_CPU_FUSED_JPEG_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"

namespace tfg {
namespace gpu {
namespace testing {

// `jpeg` warped by the matrix `draw(width, height, m)` gives for its size into
// an out_height x out_width x 3 output of T (float or uint8_t).
template <typename T, typename Draw>
std::vector<T> CpuFusedJpeg(const std::string& jpeg, const Draw& draw, int out_height,
                            int out_width, const float* bias, const float* norm,
                            const float* oob_color) {
  const auto* data = reinterpret_cast<const uint8_t*>(jpeg.data());
  jpeg::ImageInfo info;
  EXPECT_TRUE(jpeg::ReadHeader(data, jpeg.size(), &info).ok());
  double m[9];
  draw(info.width, info.height, m);
  jpeg::WarpTarget target;
  target.out_height = out_height;
  target.out_width = out_width;
  target.dct_scaling = false;
  target.bias = bias;
  target.norm = norm;
  target.oob_color = oob_color;
  jpeg::DecodeOptions options;
  options.fast_dct = false;
  std::vector<T> out(static_cast<size_t>(out_height) * out_width * 3);
  const Status s = jpeg::DecodeWarped(data, jpeg.size(), options, info, m, target, out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_CPU_FUSED_JPEG_H_
