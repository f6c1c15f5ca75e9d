// The device check's command line, one parser for every phase:
//
//   device_check PHASE [--data DIR] [--batch N] [--iterations N] [--images N]
//                      [--sessions 1,2,4,7,14] [--dmon FILE] [--budget-s S] [--small]
//
// Each phase reads the options it uses; the defaults that differ by phase (the
// profile's image count and session counts) are set by ParsePhaseArgs before
// the options given override them.
#ifndef TF_GULP_CC_GPU_TESTING_PHASE_ARGS_H_
#define TF_GULP_CC_GPU_TESTING_PHASE_ARGS_H_

#include <string>
#include <vector>

namespace tfg {
namespace gpu {
namespace testing {

extern const char* const kPhaseUsage;

struct PhaseArgs {
  std::string phase;
  std::string data = "cc/gpu/testing/data";
  std::string dmon;
  int batch = 256;
  int iterations = 5;
  int images = 8192;
  double budget_s = 1e9;  // stop starting timed runs after this many seconds
  bool small = false;
  std::vector<int> sessions = {1, 2, 4, 7, 14};
};

// False for an unknown phase or option, a missing value, or a count that is
// not positive.
bool ParsePhaseArgs(int argc, char** argv, PhaseArgs* a);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_PHASE_ARGS_H_
