// A batch of JPEGs decoded by nvJPEG into planar Y'CbCr in device memory, on
// the caller's stream: what the GPU's JPEG engines take through the hardware
// backend's batched API, the rest per picture through nvJPEG's CUDA backend,
// and what neither takes handed back for the CPU path.
//
// Per picture, from nvjpegJpegStreamParse's reading of its header:
//   - not a JPEG nvJPEG can read: DataLoss naming the picture (the batch goes
//     on);
//   - 4 components (CMYK, YCCK), not 8-bit, or an encoding nvJPEG does not
//     take (arithmetic coding: the parse says JPEG_NOT_SUPPORTED): OutOfRange,
//     for the CPU path;
//   - refused by the hardware (nvjpegDecodeBatchedSupported: progressive, 4:1:0,
//     4:1:1, or no hardware backend on this GPU): nvJPEG's CUDA backend;
//   - else the hardware backend, the batch's hardware pictures in one
//     nvjpegDecodeBatched call (re-initialized when the count changes, as
//     nvJPEG requires). When that call fails, its pictures are decoded one by
//     one on the CUDA backend, so that a damaged picture is found by name.
// Each reason a picture leaves the hardware is logged once per decoder.
//
// The planes come from the caller's allocator (TensorFlow's allocate_temp in
// the op: stream-ordered, so the kernel queued on the same stream after the
// decode reads them before they are reused). Thread safe: one batch at a time.
#ifndef TF_GULP_CC_GPU_NVJPEG_DECODER_H_
#define TF_GULP_CC_GPU_NVJPEG_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/nvjpeg_api.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

enum class JpegRoute { kHardware, kCuda, kCpu };
const char* JpegRouteName(JpegRoute route);

struct JpegInput {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string what;  // names the picture in errors ("item 3 frame 2 of ...")
};

// One decoded picture: planar Y'CbCr (gray: no chroma) in device memory, as
// the warp kernels read it (full-range BT.601, JFIF's).
struct DecodedJpeg {
  JpegRoute route = JpegRoute::kCpu;
  int width = 0, height = 0;
  codec::YcbcrPicture planes;
};

// Device memory of `bytes` bytes for one picture's planes, usable on the
// decode's stream.
using PlaneAllocator = std::function<Status(size_t bytes, CUdeviceptr* ptr)>;

class NvjpegDecoder {
 public:
  // `log` receives each reason a picture leaves the hardware, once (stderr
  // when empty). `api` must outlive the decoder.
  explicit NvjpegDecoder(const NvjpegApi& api,
                         std::function<void(const std::string&)> log = nullptr);
  ~NvjpegDecoder();
  NvjpegDecoder(const NvjpegDecoder&) = delete;
  NvjpegDecoder& operator=(const NvjpegDecoder&) = delete;

  // Creates the handles: the CUDA backend's (needed), the hardware backend's
  // (a GPU without JPEG engines refuses it: then every picture goes to the
  // CUDA backend, logged). Unavailable when nvJPEG cannot start at all.
  Status Init();
  bool has_hardware() const { return hw_handle_ != nullptr; }

  // Decodes `inputs` on `stream`; (*out)[i] and (*statuses)[i] per picture
  // (see the file comment). Returns once everything is queued.
  void DecodeBatch(const std::vector<JpegInput>& inputs, CUstream stream,
                   const PlaneAllocator& allocate, std::vector<DecodedJpeg>* out,
                   std::vector<Status>* statuses);

  // The reasons logged so far, in order.
  std::vector<std::string> reasons() const;

 private:
  Status Inspect(const JpegInput& in, DecodedJpeg* out, std::vector<unsigned>* plane_widths,
                 std::vector<unsigned>* plane_heights);
  Status DecodeOnCuda(const JpegInput& in, DecodedJpeg* out, CUstream stream);
  void Note(const std::string& reason);

  const NvjpegApi api_;
  std::function<void(const std::string&)> log_;
  std::mutex mu_;
  NvjpegHandle hw_handle_ = nullptr, cuda_handle_ = nullptr;
  NvjpegState hw_state_ = nullptr, cuda_state_ = nullptr;
  NvjpegStream parsed_ = nullptr;
  int hw_batch_size_ = 0;  // what nvjpegDecodeBatchedInitialize was last given (0: none)
  mutable std::mutex log_mu_;
  std::set<std::string> noted_;
  std::vector<std::string> reasons_;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVJPEG_DECODER_H_
