// decode_hevc_warped's GPU kernel without TensorFlow: a batch of Annex-B HEVC
// pictures decoded by NVDEC (the pools of NvdecRgbDecoder) and warped by the
// fused kernel into the caller's output slots on the caller's stream, run the
// way the op runs it. The op (tf_gulp/ops/bzna/decode_hevc_warped_gpu_op.cc)
// keeps only what TensorFlow provides: the inputs, allocate_output, the
// stream, the pinned host memory and copies of its CPU fallback, and `done`;
// the device check (cc/gpu/testing/device_check.cc) and the fake-driver tests
// drive this same function.
//
// The order it keeps: every picture's coded size read from its SPS and the
// decoders sized for the batch's largest (NvdecRgbDecoder::RaiseMaxSize) on
// the calling thread before any decode is scheduled, so no decoder is
// destroyed and created again for a larger picture mid-batch; then the
// decodes on the GPU bodies' own threads (TaskThreads), never on the caller's
// (a decode waits for free surfaces and kernels' events); `done` once, on one
// of those threads, after every picture's kernel is queued or its error known.
#ifndef TF_GULP_CC_GPU_DECODE_HEVC_WARPED_BODY_H_
#define TF_GULP_CC_GPU_DECODE_HEVC_WARPED_BODY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/nvdec_warp.h"
#include "cc/gpu/task_threads.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

// One picture of the batch; its bytes are the caller's until `done`.
struct BatchPicture {
  const uint8_t* data = nullptr;  // one Annex-B HEVC picture (VPS, SPS, PPS, slices)
  size_t size = 0;
  std::string what;  // names the picture in errors
};

struct WarpedBatch {
  std::vector<BatchPicture> pictures;
  CUstream stream = nullptr;
  // Picture i's plan once decoded (display size width x height): its region,
  // matrix, output, and its output slot `dst` on the stream's device.
  std::function<Status(int64_t i, int width, int height, RegionWarp* warp, CUdeviceptr* dst)>
      plan;
  // Picture i on the CPU, for a picture NVDEC cannot take (`why`: OutOfRange
  // for one outside this GPU's limits or not 8-bit 4:2:0, Unavailable for a
  // GPU whose NVDEC has no HEVC). Runs on a body thread; its status is the
  // picture's. Empty: `why` is the picture's status.
  std::function<Status(int64_t i, const Status& why)> on_host;
  // Picture i's colour (warp::DrawColor from the key of its matrix), one per
  // picture; empty: none (the warp alone).
  std::vector<warp::ColorDraw> colors;
  // Pictures decoded at once: enough to keep every NVDEC engine busy.
  int in_flight = 8;
};

// Statuses per picture, in batch order.
using BatchDone = std::function<void(std::vector<Status> statuses)>;

// Runs `batch` (see the file comment) and returns at once. `threads`: where
// the decodes run (TaskThreads::ForDecodes() in the op). `done` runs exactly
// once; the decoder, threads and batch's callbacks must outlive it.
void DecodeWarpedBatch(NvdecRgbDecoder* decoder, TaskThreads* threads,
                       std::shared_ptr<WarpedBatch> batch, BatchDone done);

// The largest coded size (from the SPS) among `pictures`; a picture whose
// SPS cannot be read gets its DataLoss error in `statuses` (resized to the
// batch). What DecodeWarpedBatch sizes the decoders from.
void LargestCodedSize(const std::vector<BatchPicture>& pictures, std::vector<Status>* statuses,
                      int* width, int* height);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_DECODE_HEVC_WARPED_BODY_H_
