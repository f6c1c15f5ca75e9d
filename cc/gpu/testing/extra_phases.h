// Device check phases kept out of device_check.cc (which dispatches to them):
// each prints one JSON object on stdout (arguments: phase_args.h).
//
//   device_check profile    [--data DIR] [--images 2048] [--sessions 1,7,14] [--budget-s S]
//                           [--small]
//   device_check situations [--data DIR]
//   device_check nvjpeg     [--data DIR] [--budget-s S] [--small]
#ifndef TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_
#define TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_

#include "cc/gpu/nvjpeg_api.h"
#include "cc/gpu/testing/check_driver.h"
#include "cc/gpu/testing/phase_args.h"

namespace tfg {
namespace gpu {
namespace testing {

// The pool's per-call counts and times (NvdecPool::Stats) at 1, 7 and 14
// sessions on the data's mix, 512x512 and 1024x1024 pictures of equal bytes,
// and 512x512 at three rates (profile_phase.cc). Exit 0 = measured (or NVDEC
// unavailable, a result), 1 = an error, 2 = bad arguments or data.
int ProfilePhase(const CheckDriver& d, const PhaseArgs& a);

// Three situations TensorFlow creates (tf_situations.cc): a map queued behind
// a 100 ms host function on the caller's stream, a second context on the same
// GPU, a calling thread with another context current. Exit 0 = each gave the
// expected result, 1 = one did not.
int SituationsPhase(const CheckDriver& d, const PhaseArgs& a);

// The GPU JPEG path (nvjpeg_phase.cc): nvJPEG + the fused warp against the CPU
// fused path's outputs (data/jpeg_ref/) on every picture kind, then frames/s
// on gulp-like clips and ImageNet-like JPEGs at batches of 64 and 256. Exit
// 0 = within 2 levels and measured (or no nvJPEG: a result), 1 = a failure,
// 3 = no GPU kernels.
int NvjpegPhase(const CheckDriver& d, const PhaseArgs& a);

// nvJPEG for the phase: the library as the op library would load it
// (check_nvjpeg_gpu.cc: $TFG_NVJPEG_DIR, the CUDA toolkit, the library path),
// or the fake nvJPEG on the dry run (check_nvjpeg_host.cc). `from` names it.
Status LoadCheckNvjpeg(const PhaseArgs& a, NvjpegApi* api, std::string* from);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_
