#include "cc/gpu/jpeg_warp_gpu.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "cc/gpu/context_scope.h"
#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/nvdec_pool.h"  // CudaCallError
#include "cc/gpu/nvjpeg_loader.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace gpu {

std::vector<std::string> NvjpegSearchDirs(const char* env_dir, const std::string& library_path) {
  std::vector<std::string> dirs;
  if (env_dir != nullptr && *env_dir != '\0') dirs.push_back(env_dir);
  // <site-packages>/tf_gulp/ops/<library>: three components up.
  std::string site = library_path;
  for (int up = 0; up < 3; ++up) {
    const size_t slash = site.rfind('/');
    if (slash == std::string::npos) return dirs;
    site.resize(slash);
  }
  if (!site.empty()) dirs.push_back(site + "/nvidia/nvjpeg/lib");
  return dirs;
}

namespace {

// The file this code was loaded from (the op library), or "".
std::string ThisLibrary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&NvjpegSearchDirs), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  return info.dli_fname;
}

struct Process {
  Status ready;
  NvjpegApi nvjpeg;
  GpuRuntime runtime;
  KernelModules* modules = nullptr;
  std::mutex mu;
  // Per CUDA context (GPU); never destroyed: the handles may be in use by a
  // stream until the process ends.
  std::map<CUcontext, std::unique_ptr<JpegWarpGpu>> gpus;
  std::map<CUcontext, Status> failed;
};

Process& Loaded() {
  static Process* p = [] {
    auto* p = new Process;
    std::string missing;
    auto note = [&](const Status& s) {
      if (s.ok()) return;
      if (!missing.empty()) missing += "; ";
      missing += s.message();
    };
    std::string from;
    note(LoadNvjpegFrom(
        NvjpegCandidates(NvjpegSearchDirs(std::getenv("TF_GULP_NVJPEG_DIR"), ThisLibrary())),
        DlopenOps(), &p->nvjpeg, &from));
    note(KernelModules::EmbeddedPresent("to decode JPEG on the GPU"));
    // NVDEC's library is not needed here: only the driver and the kernels.
    const Status driver = LoadGpuRuntime(kKernelsMinDriverVersion, &p->runtime);
    if (p->runtime.path == GpuPath::kCpuOnly) note(driver);
    if (missing.empty()) {
      p->modules = KernelModules::Embedded(p->runtime.cuda);
    } else {
      p->ready = UnavailableError(missing);
    }
    return p;
  }();
  return *p;
}

}  // namespace

Status NvjpegReady() { return Loaded().ready; }

Status JpegWarpGpuFor(CUstream stream, const JpegWarpGpu** out) {
  Process& p = Loaded();
  if (!p.ready.ok()) return p.ready;
  CUcontext context = nullptr;
  const CUresult got = p.runtime.cuda.cuStreamGetCtx(stream, &context);
  if (got != CUDA_SUCCESS) {
    return CudaCallError(p.runtime.cuda, got, "cuStreamGetCtx", "decode_jpeg_warped");
  }
  std::lock_guard<std::mutex> lock(p.mu);
  auto it = p.gpus.find(context);
  if (it != p.gpus.end()) {
    *out = it->second.get();
    return Status::Ok();
  }
  auto failed = p.failed.find(context);
  if (failed != p.failed.end()) return failed->second;
  auto gpu = std::make_unique<JpegWarpGpu>();
  gpu->cuda = p.runtime.cuda;
  gpu->modules = p.modules;
  // nvJPEG's handles and buffers belong to the GPU current when they are made.
  auto* decoder = new NvjpegDecoder(p.nvjpeg);
  Status init;
  {
    ContextScope scope(p.runtime.cuda, context);
    init = scope.pushed() ? decoder->Init()
                          : CudaCallError(p.runtime.cuda, scope.result(), "cuCtxPushCurrent",
                                          "decode_jpeg_warped");
  }
  if (!init.ok()) {
    p.failed.emplace(context, init);  // the decoder is leaked: Init may have half-made handles
    return init;
  }
  gpu->decoder = decoder;
  *out = gpu.get();
  p.gpus.emplace(context, std::move(gpu));
  return Status::Ok();
}

void PlanElementWarp(const warp::TransformSpec& spec, uint64_t seed, uint64_t epoch,
                     int64_t element, int width, int height, const JpegWarpOutput& out,
                     RegionWarp* warp) {
  static const float kZero[3] = {0, 0, 0}, kOne[3] = {1, 1, 1};
  PlanClipWarp(spec, HashKey({seed, epoch, static_cast<uint64_t>(element)}), width, height,
               out.out_height, out.out_width, out.u8_output ? kZero : out.bias,
               out.u8_output ? kOne : out.norm, out.oob_color, warp);
  warp->u8_output = out.u8_output ? 1 : 0;
}

}  // namespace gpu
}  // namespace tfg
