// What decode_jpeg_warped's GPU kernel (tf_gulp/ops/image/decode_jpeg_warped_gpu_op.cc)
// needs from the GPU JPEG body (decode_jpeg_warped_body.h) without
// TensorFlow: the process-wide JpegWarpGpu of a stream's GPU (driver, embedded
// kernels, nvJPEG opened once, one decoder per CUDA context), why it cannot be
// had (the NvjpegStatus op's answer), and each picture's warp as the CPU
// kernel draws it.
#ifndef TF_GULP_CC_GPU_JPEG_WARP_GPU_H_
#define TF_GULP_CC_GPU_JPEG_WARP_GPU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/gpu/decode_jpeg_warped_body.h"
#include "cc/util/status.h"
#include "cc/warp/similarity_transform.h"

namespace tfg {
namespace gpu {

// Where nvJPEG is looked for before the library path: $TF_GULP_NVJPEG_DIR
// (`env_dir`, when set), then the nvidia/nvjpeg/lib beside the installed
// tf_gulp (`library_path`: the op library's file, <site-packages>/tf_gulp/ops/
// _tf_gulp_ops.so; PyPI's nvidia-nvjpeg-cu12 installs into the same
// site-packages).
std::vector<std::string> NvjpegSearchDirs(const char* env_dir, const std::string& library_path);

// Ok when this process can decode JPEG on a GPU: nvJPEG loads, the build
// holds the kernels, the driver is R580 or newer. Else Unavailable naming
// every missing piece and its fix. Checked once; needs no GPU context.
Status NvjpegReady();

// The JpegWarpGpu for `stream`'s CUDA context (one decoder per GPU, created
// and initialized there at its first batch). NvjpegReady()'s error, or the
// decoder's Init error, otherwise. Thread safe; lives for the process.
Status JpegWarpGpuFor(CUstream stream, const JpegWarpGpu** out);

// What the op's output wants of every picture's warp.
struct JpegWarpOutput {
  int out_height = 0, out_width = 0;
  bool u8_output = false;  // uint8 levels (bias, norm unused), else float32
  const float* bias = nullptr;
  const float* norm = nullptr;
  const float* oob_color = nullptr;
};

// Picture `element`'s warp once decoded to width x height: the crop and matrix
// the CPU kernel draws for (seed, epoch, element) (its key:
// HashKey({seed, epoch, element}), fused_warp_args.cc), by the body's
// PlanClipWarp.
void PlanElementWarp(const warp::TransformSpec& spec, uint64_t seed, uint64_t epoch,
                     int64_t element, int width, int height, const JpegWarpOutput& out,
                     RegionWarp* warp);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_JPEG_WARP_GPU_H_
