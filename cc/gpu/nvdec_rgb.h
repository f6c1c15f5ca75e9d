// decode_hevc's GPU path without TensorFlow: one Annex-B HEVC picture decoded
// by the NVDEC decoder pool of the stream's GPU and converted to 8-bit RGB by
// a kernel on that same stream, into memory the caller allocates once it knows
// the picture's size (TensorFlow's allocate_output, in the op).
//
// Why here and not in the op: the order that makes it correct (decode and map
// on the stream -> allocate -> convert kernel -> event -> unmap once the event
// completed, the picture released on every error path) and the pool per GPU
// are tested against the fake driver tables (nvdec_rgb_test.cc); the op only
// parses the MP4 and hands TensorFlow's stream and allocator over.
//
// One pool per CUDA context, i.e. per GPU device (TensorFlow runs each device
// in its primary context), created at the first picture decoded there with
// the options given (sessions 0 = one per NVDEC engine). Thread safe.
#ifndef TF_GULP_CC_GPU_NVDEC_RGB_H_
#define TF_GULP_CC_GPU_NVDEC_RGB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/kernel_modules.h"
#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/nvdec_picture.h"
#include "cc/gpu/nvdec_pool.h"
#include "cc/gpu/nvdec_ycbcr.h"  // YcbcrOf: the kernels' view of a picture
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

// The part of the decoded picture to convert (decode_hevc's crop).
struct RgbRegion {
  int x = 0, y = 0, width = 0, height = 0;
};

// Called between decoding and converting with the decoded picture's display
// size: sets the region to convert and `dst`, device memory for
// region.height * region.width * 3 bytes on the stream's device. An error
// stops the decode (the picture is released, nothing is launched).
using RgbAllocator =
    std::function<Status(int width, int height, RgbRegion* region, CUdeviceptr* dst)>;

class NvdecRgbDecoder {
 public:
  // `cuda` needs the pool's calls plus cuStreamGetCtx, cuModuleLoadData,
  // cuModuleGetFunction and cuLaunchKernel; `fatbin` holds
  // tfg_ycbcr_to_rgb_u8. Both must outlive the decoder.
  NvdecRgbDecoder(const CudaApi& cuda, const NvdecApi& nvdec, const void* fatbin,
                  size_t fatbin_size, const NvdecPoolOptions& options)
      : cuda_(cuda), nvdec_(nvdec), own_(new KernelModules(cuda, fatbin, fatbin_size)),
        modules_(own_.get()), options_(options) {}
  // The same, loading through a shared loader (KernelModules::Embedded in the
  // op library), which must outlive this.
  NvdecRgbDecoder(const CudaApi& cuda, const NvdecApi& nvdec, KernelModules* modules,
                  const NvdecPoolOptions& options)
      : cuda_(cuda), nvdec_(nvdec), modules_(modules), options_(options) {}

  // The process-wide decoder over the embedded kernels and the driver
  // libraries gpu_runtime loads (once). Unavailable, naming what is missing and
  // how to get it, when the build has no kernels, there is no driver, the
  // driver is too old or libnvcuvid.so.1 cannot be loaded.
  static Status Get(NvdecRgbDecoder** out);

  // Decodes `data` (one Annex-B picture) on `stream`, calls `allocate`, then
  // queues the conversion on `stream`; returns once it is queued. Errors of
  // the pool pass through with their codes: OutOfRange for a picture outside
  // this GPU's NVDEC limits, Unavailable when the GPU's NVDEC cannot decode
  // 8-bit 4:2:0 HEVC (the op then decodes on the CPU).
  Status Decode(const uint8_t* data, size_t size, bool bilinear_chroma, CUstream stream,
                const char* what, const RgbAllocator& allocate);

  // Pools created so far (one per GPU device used).
  int pools() const;
  // Every pool's counts and times (NvdecPool::Stats), summed.
  NvdecPoolStats Stats() const;

  // The largest coded picture the caller is about to decode (a batch's):
  // every pool's decoders are created at least this large from now on, so
  // that smaller pictures reconfigure rather than recreate
  // (NvdecPool::RaiseMaxSize). Only ever raises.
  void RaiseMaxSize(int width, int height);

  // What the kernels that read a decoded picture share (decode_hevc's
  // conversion here, decode_hevc_warped's fused warp in nvdec_warp.cc): decodes
  // `data` on `stream` with the pool of the stream's GPU, calls `use` with the
  // mapped picture and the stream's context (to queue its kernel on `stream`),
  // then releases the picture on every path: an event behind whatever `use`
  // queued, the unmap once that event completed. `use`'s error is returned
  // (the release's otherwise).
  using PictureUse = std::function<Status(CUcontext context, const NvdecPicture& picture)>;
  Status DecodeThen(const uint8_t* data, size_t size, CUstream stream, const char* what,
                    const PictureUse& use);

  // Launches `kernel` (a name in the fatbin) on `stream` over `dims` with
  // `args`, `context` pushed for the call; the fatbin is loaded once per
  // context. Errors name the call and `what`.
  Status Launch(CUcontext context, const char* kernel, const LaunchDims& dims, void** args,
                CUstream stream, const char* what);

 private:
  Status PoolFor(CUcontext context, NvdecPool** pool);
  Status Convert(CUcontext context, const NvdecPicture& picture, const RgbRegion& region,
                 bool bilinear_chroma, CUdeviceptr dst, CUstream stream, const char* what);

  const CudaApi cuda_;
  const NvdecApi nvdec_;
  std::unique_ptr<KernelModules> own_;
  KernelModules* modules_;
  const NvdecPoolOptions options_;
  mutable std::mutex mu_;
  std::map<CUcontext, std::unique_ptr<NvdecPool>> pools_;
  int max_width_ = 0, max_height_ = 0;  // RaiseMaxSize's, for pools made later
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_RGB_H_
