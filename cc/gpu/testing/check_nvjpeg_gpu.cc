// nvJPEG on the GPU machine, opened as the op library would open it: the
// directory $TFG_NVJPEG_DIR names (a site-packages nvidia/nvjpeg/lib), the
// CUDA toolkit's lib64, then the library path.
#include <cstdlib>

#include "cc/gpu/nvjpeg_loader.h"
#include "cc/gpu/testing/extra_phases.h"

namespace tfg {
namespace gpu {
namespace testing {

Status LoadCheckNvjpeg(const PhaseArgs&, NvjpegApi* api, std::string* from) {
  std::vector<std::string> dirs;
  if (const char* dir = std::getenv("TFG_NVJPEG_DIR")) dirs.push_back(dir);
  dirs.push_back("/usr/local/cuda/lib64");
  std::vector<std::string> names = NvjpegCandidates(dirs);
  // The toolkit of CUDA 13 ships libnvjpeg.so.13, whose entry points this path
  // calls are those of 12.
  names.push_back("/usr/local/cuda/lib64/libnvjpeg.so");
  names.push_back("libnvjpeg.so.13");
  return LoadNvjpegFrom(names, DlopenOps(), api, from);
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
