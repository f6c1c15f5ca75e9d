// Device check phases kept out of device_check.cc (which dispatches to them):
// each prints one JSON object on stdout (arguments: phase_args.h).
//
//   device_check profile    [--data DIR] [--images 2048] [--sessions 1,7,14] [--budget-s S]
//                           [--small]
//   device_check situations [--data DIR]
#ifndef TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_
#define TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_

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

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_EXTRA_PHASES_H_
