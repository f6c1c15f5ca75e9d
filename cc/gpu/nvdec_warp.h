// decode_hevc_warped's GPU path without TensorFlow: one Annex-B HEVC picture
// decoded by the NVDEC decoder pool of the stream's GPU (the pools
// decode_hevc's GPU kernel uses: NvdecRgbDecoder) and warped, Y'CbCr -> RGB
// fused in, by tfg_decode_warp_ycbcr reading the mapped NV12 surface directly,
// into the caller's output slot on that same stream.
//
// Why here and not in the op: the order that makes it correct (decode and map
// on the stream -> plan (region, matrix, destination) from the decoded size ->
// fused kernel -> event -> unmap once the event completed, the picture
// released on every error path) is tested against the fake driver tables
// (nvdec_warp_test.cc); the op only parses the MP4, draws the matrix and hands
// TensorFlow's stream and output over.
#ifndef TF_GULP_CC_GPU_NVDEC_WARP_H_
#define TF_GULP_CC_GPU_NVDEC_WARP_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/util/status.h"
#include "cc/warp/color_transform.h"

namespace tfg {
namespace gpu {

// Called between decoding and warping with the decoded picture's display
// size: fills `warp` (the region of the picture the matrix maps into, the
// matrix, bias, norm, oob colour, output size, layout and type) and `dst`,
// device memory for warp->out_height * warp->out_width * 3 values of the
// output type on the stream's device. An error stops the decode (the picture
// is released, nothing is launched).
using WarpPlanner = std::function<Status(int width, int height, RegionWarp* warp,
                                         CUdeviceptr* dst)>;

// The fused kernel's launch: one thread per output pixel of one picture.
inline LaunchDims DecodeWarpLaunchDims(const RegionWarp& w) {
  return WarpLaunchDims(w.out_height, w.out_width, 1);
}

// Decodes `data` (one Annex-B picture) on `stream`, calls `plan`, then queues
// the fused warp on `stream`; returns once it is queued. With `color` (a draw
// with steps; null or empty: the warp alone) the warp writes levels and
// tfg_color_levels, queued behind it on `stream`, colours them and applies
// the plan's bias and norm (color_plan.h), as the CPU's WarpWithColor does. The pool's errors
// pass through with their codes (OutOfRange: a picture outside this GPU's
// NVDEC limits or not 8-bit 4:2:0; Unavailable: this GPU's NVDEC cannot decode
// 8-bit 4:2:0 HEVC), so the op can warp those on the CPU. A region outside the
// decoded picture or an output of no pixels is InvalidArgument naming `what`.
Status DecodeWarped(NvdecRgbDecoder* decoder, const uint8_t* data, size_t size, CUstream stream,
                    const char* what, const WarpPlanner& plan,
                    const warp::ColorDraw* color = nullptr);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_WARP_H_
