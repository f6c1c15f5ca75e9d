// The similarity warp kernels on a caller's CUDA stream (TensorFlow's, in the
// op library's GPU kernel), through the driver functions gpu_runtime loads at
// run time: no CUDA toolkit header and no link-time CUDA library, so this
// compiles and links on machines without CUDA (types from ffnvcodec's headers).
//
// The kernels come from the fatbin the build embedded (embedded_fatbin.h);
// a build without nvcc embeds an empty one, and StreamWarper::Get then says
// so. The module is loaded once per CUDA context (the stream's).
#ifndef TF_GULP_CC_GPU_STREAM_WARP_H_
#define TF_GULP_CC_GPU_STREAM_WARP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cc/gpu/kernel_modules.h"
#include "cc/gpu/nvdec_api.h"
#include "cc/util/status.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {

// The largest batch one launch takes (the grid's z dimension); Launch splits
// larger batches.
constexpr int64_t kMaxPicturesPerLaunch = 65535;
// The kernel keeps one pixel's channels in registers.
constexpr int64_t kMaxGpuWarpChannels = 4;

class StreamWarper {
 public:
  // `fatbin`/`fatbin_size`: the kernels' image; `api`: the driver functions
  // (cuStreamGetCtx, cuCtxPush/PopCurrent, cuModuleLoadData,
  // cuModuleGetFunction, cuLaunchKernel, cuGetErrorName are used).
  StreamWarper(const CudaApi& api, const void* fatbin, size_t fatbin_size)
      : api_(api), own_(new KernelModules(api, fatbin, fatbin_size)), modules_(own_.get()) {}
  // The same, loading through a shared loader (KernelModules::Embedded in the
  // op library: one module per GPU for every GPU op), which must outlive this.
  StreamWarper(const CudaApi& api, KernelModules* modules) : api_(api), modules_(modules) {}

  // The process-wide warper over the embedded fatbin and the driver
  // gpu_runtime loads (once). Unavailable, naming the reason and the remedy,
  // when this build has no kernels (no nvcc at build time), there is no
  // driver, or the driver is older than the kernels need; the GPU op then
  // takes its fallback.
  static Status Get(const StreamWarper** out);

  // Warps `pictures` uint8 pictures of geometry `g` on `stream`. Device
  // pointers: `src` (pictures `g.in_height * g.in_width * g.channels` bytes
  // apart), `matrices` [pictures, 9], `bias`/`norm`/`oob_color` [channels],
  // `dst` float [pictures, out_height, out_width, channels] (or NCHW).
  // Returns once the launches are queued.
  Status Launch(const warp::WarpGeometry& g, int64_t pictures, CUdeviceptr src,
                CUdeviceptr matrices, CUdeviceptr bias, CUdeviceptr norm,
                CUdeviceptr oob_color, CUdeviceptr dst, CUstream stream) const;

  // Floats of device memory LaunchFromHost needs for its parameters.
  static int64_t ParamFloats(int64_t pictures, int64_t channels) {
    return pictures * 9 + 3 * channels;
  }

  // similarity_warp's GPU body: the parameters from host memory, `matrices`
  // [clips, 9] (each clip's repeated for its `frames` frames, pictures =
  // clips * frames) and `bias`/`norm`/`oob_color` [channels], copied
  // (cuMemcpyHtoDAsync) into `params` (device memory of ParamFloats floats)
  // on `stream`, then the warp launched behind the copy on that stream.
  // Returns once both are queued, without waiting for either: the copy reads
  // pageable host memory, which the driver stages before returning (CUDA
  // driver API, "API synchronization behavior"), so the host arrays may go
  // at once, and the launch is ordered after the copy by the stream.
  Status LaunchFromHost(const warp::WarpGeometry& g, int64_t clips, int64_t frames,
                        const float* matrices, const float* bias, const float* norm,
                        const float* oob_color, CUdeviceptr src, CUdeviceptr params,
                        CUdeviceptr dst, CUstream stream) const;

 private:
  // The kernel in `context`, its module loaded on first use.
  Status KernelFor(CUcontext context, CUfunction* kernel) const;
  Status Check(CUresult result, const char* call) const;

  CudaApi api_;
  std::unique_ptr<KernelModules> own_;
  KernelModules* modules_;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_STREAM_WARP_H_
