// Opens nvJPEG (libnvjpeg.so.12) at run time and fills the NvjpegApi table:
// the op library links no CUDA library, as for libcuda and libnvcuvid
// (gpu_runtime.h).
//
// Where it looks, in order: the directories the caller names (the Python side
// passes site-packages' nvidia/nvjpeg/lib, where PyPI's nvidia-nvjpeg-cu12
// wheel puts it: TensorFlow's `and-cuda` extra does not bring it), then the
// dynamic loader's own search (LD_LIBRARY_PATH, the CUDA toolkit's
// ld.so.conf entry) for libnvjpeg.so.12 and libnvjpeg.so.
#ifndef TF_GULP_CC_GPU_NVJPEG_LOADER_H_
#define TF_GULP_CC_GPU_NVJPEG_LOADER_H_

#include <functional>
#include <string>
#include <vector>

#include "cc/gpu/nvjpeg_api.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

// The library names tried, in order, for `dirs` (each "<dir>/libnvjpeg.so.12").
std::vector<std::string> NvjpegCandidates(const std::vector<std::string>& dirs);

// How a library is opened and searched: dlopen/dlsym, or a test's stand-in.
struct LibraryOps {
  std::function<void*(const std::string& name)> open;
  std::function<void*(void* library, const char* symbol)> symbol;
};
LibraryOps DlopenOps();

// Opens the first of `candidates` that loads and has every entry point of
// NvjpegApi; `loaded_from` gets its name. Unavailable otherwise, naming each
// place tried and why, and how to install the library.
Status LoadNvjpegFrom(const std::vector<std::string>& candidates, const LibraryOps& ops,
                      NvjpegApi* api, std::string* loaded_from);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVJPEG_LOADER_H_
