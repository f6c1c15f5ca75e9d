#include "cc/gpu/testing/phase_args.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tfg {
namespace gpu {
namespace testing {

const char* const kPhaseUsage =
    "runtime|warp|nvdec|throughput|profile|situations|nvjpeg [--data DIR] [--batch N] "
    "[--iterations N] [--images N] [--sessions 1,2,4,7,14] [--dmon FILE] [--budget-s S] "
    "[--small]";

bool ParsePhaseArgs(int argc, char** argv, PhaseArgs* a) {
  if (argc < 2) return false;
  a->phase = argv[1];
  const char* const kPhases[] = {"runtime", "warp",       "nvdec", "throughput",
                                 "profile", "situations", "nvjpeg"};
  if (std::find(std::begin(kPhases), std::end(kPhases), a->phase) == std::end(kPhases)) {
    return false;
  }
  if (a->phase == "profile") {  // three session counts, fewer images: 7 sets are profiled
    a->images = 2048;
    a->sessions = {1, 7, 14};
  }
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--small") {
      a->small = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (k == "--data") {
      a->data = v;
    } else if (k == "--dmon") {
      a->dmon = v;
    } else if (k == "--batch") {
      a->batch = std::atoi(v.c_str());
    } else if (k == "--iterations") {
      a->iterations = std::atoi(v.c_str());
    } else if (k == "--images") {
      a->images = std::atoi(v.c_str());
    } else if (k == "--budget-s") {
      a->budget_s = std::atof(v.c_str());
    } else if (k == "--sessions") {
      a->sessions.clear();
      std::stringstream list(v);
      for (std::string n; std::getline(list, n, ',');) a->sessions.push_back(std::atoi(n.c_str()));
    } else {
      return false;
    }
  }
  return a->batch > 0 && a->iterations > 0 && a->images > 1 && !a->sessions.empty() &&
         std::all_of(a->sessions.begin(), a->sessions.end(), [](int s) { return s > 0; });
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
