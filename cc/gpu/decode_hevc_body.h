// decode_hevc's GPU kernel without TensorFlow: one Annex-B HEVC picture
// decoded by NVDEC (the pools of NvdecRgbDecoder) and converted to RGB on the
// caller's stream into memory the caller allocates once the picture's size is
// known, run the way the op runs it. The op (tf_gulp/ops/bzna/
// decode_hevc_gpu_op.cc) keeps only what TensorFlow provides: the inputs,
// allocate_output, the stream, its CPU fallback's pinned memory and copy,
// and `done`; the device check and the fake-driver tests drive this function.
//
// The order it keeps: the picture's coded size read from its SPS and the
// decoders sized for it and for the caller's `max_width` x `max_height` (the
// largest coded size of the batch the picture belongs to: a caller that knows
// it sizes every decoder for the batch before its first picture, so no
// decoder is destroyed and created again for a larger one) on the calling
// thread (NvdecRgbDecoder::RaiseMaxSize); then the decode on the GPU bodies' own threads (TaskThreads), never
// the caller's; `done` once, on one of those threads.
#ifndef TF_GULP_CC_GPU_DECODE_HEVC_BODY_H_
#define TF_GULP_CC_GPU_DECODE_HEVC_BODY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/task_threads.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

struct RgbPicture {
  const uint8_t* data = nullptr;  // one Annex-B HEVC picture; the caller's until `done`
  size_t size = 0;
  std::string what;  // names the picture in errors
  bool bilinear_chroma = true;
  CUstream stream = nullptr;
  // The largest coded size of the pictures decoded with this one (0: only
  // this picture's own size is known).
  int max_width = 0, max_height = 0;
  // Called once decoded (NvdecRgbDecoder::Decode's allocator): the region to
  // convert and its destination on the stream's device.
  RgbAllocator allocate;
  // The picture on the CPU when NVDEC cannot take it (`why`: OutOfRange or
  // Unavailable, before anything was allocated). Runs on a body thread; its
  // status is the picture's. Empty: `why` is the picture's status.
  std::function<Status(const Status& why)> on_host;
};

// Runs `picture` (see the file comment) and returns at once; `done` runs
// exactly once with the picture's status. The decoder, threads and picture's
// callbacks must outlive it.
void DecodeHevcRgb(NvdecRgbDecoder* decoder, TaskThreads* threads,
                   std::shared_ptr<RgbPicture> picture, std::function<void(Status)> done);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_DECODE_HEVC_BODY_H_
