#include "cc/gpu/nvjpeg_loader.h"

#include <dlfcn.h>

namespace tfg {
namespace gpu {

const char* NvjpegStatusName(int status) {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
      return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "an unknown nvJPEG status";
}

std::vector<std::string> NvjpegCandidates(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const std::string& dir : dirs) {
    if (!dir.empty()) names.push_back(dir + "/libnvjpeg.so.12");
  }
  names.push_back("libnvjpeg.so.12");
  names.push_back("libnvjpeg.so");
  return names;
}

LibraryOps DlopenOps() {
  LibraryOps ops;
  // RTLD_LOCAL: the library's symbols stay out of the process's namespace
  // (TensorFlow may hold another CUDA runtime).
  ops.open = [](const std::string& name) { return dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL); };
  ops.symbol = [](void* library, const char* symbol) { return dlsym(library, symbol); };
  return ops;
}

namespace {

template <typename F>
bool Bind(const LibraryOps& ops, void* library, const char* name, F** f, std::string* missing) {
  *f = reinterpret_cast<F*>(ops.symbol(library, name));
  if (*f == nullptr) {
    if (!missing->empty()) missing->append(", ");
    missing->append(name);
  }
  return *f != nullptr;
}

// Every entry point of the table from `library`; the names missing otherwise.
std::string BindAll(const LibraryOps& ops, void* library, NvjpegApi* a) {
  std::string missing;
#define TFG_BIND(name) Bind(ops, library, #name, &a->name, &missing)
  TFG_BIND(nvjpegCreateEx);
  TFG_BIND(nvjpegDestroy);
  TFG_BIND(nvjpegJpegStateCreate);
  TFG_BIND(nvjpegJpegStateDestroy);
  TFG_BIND(nvjpegJpegStreamCreate);
  TFG_BIND(nvjpegJpegStreamDestroy);
  TFG_BIND(nvjpegJpegStreamParse);
  TFG_BIND(nvjpegJpegStreamGetJpegEncoding);
  TFG_BIND(nvjpegJpegStreamGetFrameDimensions);
  TFG_BIND(nvjpegJpegStreamGetComponentsNum);
  TFG_BIND(nvjpegJpegStreamGetComponentDimensions);
  TFG_BIND(nvjpegJpegStreamGetSamplePrecision);
  TFG_BIND(nvjpegDecodeBatchedSupported);
  TFG_BIND(nvjpegDecodeBatchedInitialize);
  TFG_BIND(nvjpegDecodeBatched);
  TFG_BIND(nvjpegDecode);
#undef TFG_BIND
  return missing;
}

}  // namespace

Status LoadNvjpegFrom(const std::vector<std::string>& candidates, const LibraryOps& ops,
                      NvjpegApi* api, std::string* loaded_from) {
  std::string tried;
  for (const std::string& name : candidates) {
    if (!tried.empty()) tried.append("; ");
    void* library = ops.open(name);
    if (library == nullptr) {
      tried.append(name + ": not found");
      continue;
    }
    NvjpegApi table;
    const std::string missing = BindAll(ops, library, &table);
    if (!missing.empty()) {
      // Kept open: dlclose of a CUDA library can run its teardown while
      // another part of the process still uses CUDA.
      tried.append(name + ": lacks " + missing + " (older than nvJPEG 12?)");
      continue;
    }
    *api = table;
    *loaded_from = name;
    return Status::Ok();
  }
  return UnavailableError("nvJPEG unavailable, decoding JPEG on the CPU: no usable "
                          "libnvjpeg.so.12 (", tried, "); install it with `pip install "
                          "nvidia-nvjpeg-cu12` or put the CUDA toolkit's lib64 on "
                          "LD_LIBRARY_PATH");
}

}  // namespace gpu
}  // namespace tfg
