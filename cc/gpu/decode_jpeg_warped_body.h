// The GPU JPEG path's TensorFlow-free body: a batch of clips of JPEG frames
// ([B, T] frames, clip-major; T = 1 for images) decoded by nvJPEG
// (nvjpeg_decoder.h: the JPEG engines, else nvJPEG's CUDA backend) into planar
// Y'CbCr and warped, colour conversion fused in, by tfg_decode_warp_ycbcr (the
// kernel decode_hevc_warped uses: it reads planar 4:4:4 / 4:2:2 / 4:2:0 / gray
// as it reads NV12) into the caller's output slots on the caller's stream.
// What a future op (or the device check) keeps: the inputs, the allocations,
// the stream, the draws, and `done`.
//
// The order it keeps: every frame decoded (queued) on the stream before any
// kernel is queued behind it on the same stream; the clip's warp planned once
// per clip (one random draw, as the CPU path draws once per clip) from its
// first frame's decoded size, and every frame of the clip warped with it (a
// frame of another size is an InvalidArgument naming it); a frame no GPU
// backend takes goes to `on_host`; `done` once, on one of the body's threads,
// with a status per frame.
#ifndef TF_GULP_CC_GPU_DECODE_JPEG_WARPED_BODY_H_
#define TF_GULP_CC_GPU_DECODE_JPEG_WARPED_BODY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cc/gpu/kernel_modules.h"
#include "cc/gpu/nvjpeg_decoder.h"
#include "cc/gpu/task_threads.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/util/status.h"
#include "cc/warp/color_transform.h"
#include "cc/warp/similarity_transform.h"

namespace tfg {
namespace gpu {

struct JpegClipBatch {
  std::vector<JpegInput> frames;  // clips x frames_per_clip, clip-major; the caller's until done
  int frames_per_clip = 1;
  CUstream stream = nullptr;
  // Device memory for one frame's decoded planes, ordered on `stream`.
  PlaneAllocator allocate;
  // Clip c's warp (region, matrix, colour, output), from its first frame's
  // decoded size: called once per clip.
  std::function<Status(int64_t clip, int width, int height, RegionWarp* warp)> plan;
  // Frame i's output slot: out_height * out_width * 3 values of the plan's type.
  std::function<CUdeviceptr(int64_t frame)> dst;
  // Clip c's colour (warp::DrawColor from the key of its warp), one per clip,
  // applied to each frame with that frame's own contrast means; empty: none
  // (the warp alone).
  std::vector<warp::ColorDraw> colors;
  // Frame i on the CPU, for a JPEG no GPU backend takes (`why`: OutOfRange).
  // Empty: `why` is the frame's status.
  std::function<Status(int64_t frame, const Status& why)> on_host;
};

// What the body runs on; all must outlive the batches.
struct JpegWarpGpu {
  CudaApi cuda;  // cuStreamGetCtx, cuCtxPush/PopCurrent, cuLaunchKernel, cuGetErrorName
  KernelModules* modules = nullptr;  // holds tfg_decode_warp_ycbcr and tfg_color_levels
  NvjpegDecoder* decoder = nullptr;  // Init() done
};

// Clip `key`'s warp of a whole width x height picture to out_height x
// out_width, drawn by cc/warp's TransformMatrix as the CPU fused paths draw it
// (key: HashKey({seed, epoch, element}) there), so that the GPU and the CPU
// give the same crop for the same (seed, epoch, element). Float output,
// (v - bias) * norm, NHWC; chroma upsampled bilinearly (libjpeg's "fancy"
// upsampling, the CPU path's default).
void PlanClipWarp(const warp::TransformSpec& spec, uint64_t key, int width, int height,
                  int out_height, int out_width, const float bias[3], const float norm[3],
                  const float oob_color[3], RegionWarp* warp);

using FrameStatuses = std::function<void(std::vector<Status> statuses)>;

// Runs `batch` on `threads` and returns at once; `done` runs exactly once.
void DecodeJpegWarpedBatch(const JpegWarpGpu* gpu, TaskThreads* threads,
                           std::shared_ptr<JpegClipBatch> batch, FrameStatuses done);

// The same on the calling thread (the device check's timing loop).
std::vector<Status> DecodeJpegWarpedNow(const JpegWarpGpu& gpu, const JpegClipBatch& batch);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_DECODE_JPEG_WARPED_BODY_H_
