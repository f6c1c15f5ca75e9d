// The GPU kernels' view of a decoded NVDEC picture (nvdec_picture.h): NV12
// planes, and the colour matrix and range the stream signals, read as the CPU
// decoder reads them, so both paths convert alike. Plain types only (no CUDA
// or ffnvcodec header): the op library's launchers and the device check
// (built against the toolkit's cuda.h) share it.
#ifndef TF_GULP_CC_GPU_NVDEC_YCBCR_H_
#define TF_GULP_CC_GPU_NVDEC_YCBCR_H_

#include <stdint.h>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/nvdec_picture.h"

namespace tfg {
namespace gpu {

// The CPU decoder's reading of the signalled matrix (cc/codec/hevc_decoder.cc):
// BT.709, BT.2020 (non-constant and constant luminance), else BT.601 (5, 6 and
// unspecified).
inline codec::YcbcrStandard StandardOf(int matrix_coefficients) {
  if (matrix_coefficients == 1) return codec::YcbcrStandard::kBt709;
  if (matrix_coefficients == 9 || matrix_coefficients == 10) return codec::YcbcrStandard::kBt2020;
  return codec::YcbcrStandard::kBt601;
}

// The whole mapped picture: luma rows `pitch` apart, Cb Cr interleaved after
// the luma plane's surface rows.
inline codec::YcbcrPicture YcbcrOf(const NvdecPicture& p) {
  codec::YcbcrPicture y;
  y.width = p.width;
  y.height = p.height;
  y.y = reinterpret_cast<const uint8_t*>(p.luma);
  y.y_stride = p.pitch;
  y.cb = reinterpret_cast<const uint8_t*>(p.chroma);  // NV12: Cb Cr interleaved
  y.cr = y.cb + 1;
  y.cb_stride = y.cr_stride = p.pitch;
  y.chroma_step = 2;
  y.shift_x = y.shift_y = 1;
  y.chroma_width = (p.width + 1) / 2;
  y.chroma_height = (p.height + 1) / 2;
  y.matrix = codec::MakeYcbcrMatrix(StandardOf(p.matrix_coefficients), p.full_range);
  return y;
}

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_YCBCR_H_
