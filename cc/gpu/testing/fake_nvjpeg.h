// A fake nvJPEG (and the few CUDA driver calls a JPEG kernel launch makes) for
// the tests of the GPU JPEG path: it reads real JPEG headers (SOF, the
// components' sampling factors, precision) and decodes real JPEG bytes with
// libjpeg-turbo into planar Y'CbCr at the JPEG's subsampling, what nvJPEG's
// NVJPEG_OUTPUT_YUV gives, into "device" pointers that are host memory.
//
// It keeps nvJPEG's rules and notes every one broken (violations()):
//   - a state, or a parsed stream, used with a handle other than its creator's;
//   - nvjpegDecodeBatched before nvjpegDecodeBatchedInitialize, or with a batch
//     size other than the one initialized (INVALID_PARAMETER), and again after
//     a failed batch without re-initializing (a failed batch resets the state);
//   - the hardware backend refuses, as the hardware does, progressive and
//     non-baseline-Huffman JPEGs, 4 components, 12-bit and 4:1:1 / 4:1:0
//     (nvjpegDecodeBatchedSupported says so, with is_supported == 0 meaning
//     "supported"; nvjpegDecodeBatched returns JPEG_NOT_SUPPORTED); the
//     hardware backend itself is refused when `hardware` is false
//     (ARCH_MISMATCH);
//   - arithmetic-coded JPEGs are JPEG_NOT_SUPPORTED at parse time, bytes that
//     are no JPEG BAD_JPEG, a picture that does not decode BAD_JPEG;
//   - a destination plane null or with a pitch below the plane's width;
//   - stream ordering: a kernel reading planes (its first argument, a
//     codec::YcbcrPicture) that no decode wrote, or that were decoded on
//     another stream;
//   - handles, states and streams left alive (problems()).
// Any call can be failed on its nth use (FailCall).
//
// One fake per process at a time (the tables hold plain function pointers).
#ifndef TF_GULP_CC_GPU_TESTING_FAKE_NVJPEG_H_
#define TF_GULP_CC_GPU_TESTING_FAKE_NVJPEG_H_

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/nvjpeg_api.h"
#include "cc/gpu/testing/fake_call_log.h"

namespace tfg {
namespace gpu {
namespace testing {

// What the fake reads from a JPEG's header (also what tests check against).
struct JpegHeader {
  int sof = 0;        // 0xC0 baseline, 0xC1 extended, 0xC2 progressive, 0xC9.. arithmetic
  int precision = 0;  // bits per sample
  int width = 0, height = 0;
  int components = 0;
  int h[4] = {}, v[4] = {};  // sampling factors
};
// False when `data` holds no SOF marker before its scan.
bool ReadJpegHeader(const unsigned char* data, size_t size, JpegHeader* header);

// calls(), violations(), Find, Count and FailCall: FakeCallLog's.
class FakeNvjpeg
    : public FakeCallLog<int, NVJPEG_STATUS_SUCCESS, NVJPEG_STATUS_INTERNAL_ERROR> {
 public:
  using Kernel = std::function<void(CUstream stream, void** args, const LaunchDims& dims)>;
  // `kernels`: what a launch of each kernel name does. Installs itself.
  explicit FakeNvjpeg(std::map<std::string, Kernel> kernels = {});
  ~FakeNvjpeg();

  const NvjpegApi& api() const { return api_; }
  // cuStreamGetCtx, cuCtxPushCurrent/PopCurrent, cuModuleLoadData (of
  // kFakeJpegFatbin), cuModuleGetFunction, cuLaunchKernel, cuGetErrorName.
  const CudaApi& cuda() const { return cuda_; }

  bool hardware = true;  // the GPU has JPEG engines

  // Violations and objects left alive; empty once a well-behaved user is gone.
  std::vector<std::string> problems() const;

  // ----- for the fake's C functions
  struct Handle {
    int backend = 0;
  };
  struct State {
    NvjpegHandle handle = nullptr;
    int batch_size = 0;  // initialized for (0: not)
  };
  struct Parsed {
    NvjpegHandle handle = nullptr;
    bool valid = false;
    JpegHeader header;
  };
  struct Planes {
    CUstream stream = nullptr;  // decoded on
  };
  // Decodes one picture into `image`'s planes (`format` YUV or Y), recording
  // the stream; a status.
  int DecodeInto(const unsigned char* data, size_t size, int format, const NvjpegImage& image,
                 CUstream stream);
  void KernelRead(CUstream stream, const void* luma);

  std::map<NvjpegHandle, Handle> handles;
  std::map<NvjpegState, State> states;
  std::map<NvjpegStream, Parsed> parsed;
  std::map<const void*, Planes> decoded;  // by luma plane
  std::map<std::string, Kernel> kernels;
  std::vector<std::string> kernel_names;
  uintptr_t next_object = 0x100;

 private:
  NvjpegApi api_;
  CudaApi cuda_;
};

inline const unsigned char kFakeJpegFatbin[] = "fake jpeg fatbin";
inline const CUstream kJpegStream = reinterpret_cast<CUstream>(0x7001);
inline const CUstream kOtherJpegStream = reinterpret_cast<CUstream>(0x7002);
inline const CUcontext kJpegContext = reinterpret_cast<CUcontext>(0xC7);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_FAKE_NVJPEG_H_
