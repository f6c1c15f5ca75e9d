// The launch side of the fake CUDA driver, for the tests of the launchers that
// run kernels on NVDEC's pictures (nvdec_rgb_test, nvdec_warp_test): streams
// of two GPU contexts, the module loaded from a fake fatbin (counted), kernels
// looked up by name, and launches handed to a per-kernel callback after the
// fake NVDEC is told which picture the kernel reads (so an unmap before the
// kernel's event is a violation). The pool's own calls are FakeNvdec's.
//
// One FakeKernels per process at a time (the table holds plain functions).
#ifndef TF_GULP_CC_GPU_TESTING_FAKE_KERNELS_H_
#define TF_GULP_CC_GPU_TESTING_FAKE_KERNELS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/testing/fake_nvdec.h"

namespace tfg {
namespace gpu {
namespace testing {

// cuda.h's values; ffnvcodec's header names only a few codes.
inline const CUresult kInvalidValue = static_cast<CUresult>(1);
inline const CUresult kNotFound = static_cast<CUresult>(500);

inline const unsigned char kFakeFatbin[] = "fake fatbin";
inline const CUcontext kOtherContext = reinterpret_cast<CUcontext>(0xC1);
inline const CUstream kStream = reinterpret_cast<CUstream>(0x5001);  // FakeNvdec::context()
inline const CUstream kOtherDeviceStream = reinterpret_cast<CUstream>(0x5002);

class FakeKernels {
 public:
  // What a kernel's launch does in the test: its stream, arguments, launch.
  using Launch = std::function<void(CUstream stream, void** args, const LaunchDims& dims)>;

  // `kernels`: the fatbin's kernels by name. Installs itself.
  FakeKernels(FakeNvdec* fake, std::map<std::string, Launch> kernels)
      : fake_(fake), kernels_(std::move(kernels)) {
    for (const auto& kernel : kernels_) names_.push_back(kernel.first);
    current() = this;
  }
  ~FakeKernels() { current() = nullptr; }

  // The fake's table with this launch side.
  CudaApi cuda() const {
    CudaApi cuda = fake_->cuda();
    cuda.cuStreamGetCtx = StreamGetCtx;
    cuda.cuModuleLoadData = ModuleLoadData;
    cuda.cuModuleGetFunction = ModuleGetFunction;
    cuda.cuLaunchKernel = LaunchKernel;
    return cuda;
  }

  int loads = 0;                       // modules loaded
  std::vector<std::string> looked_up;  // kernels looked up, in order
  CUresult fail_launch = CUDA_SUCCESS;  // every launch fails with this, when set
  std::string fail_only;                // ...or only this kernel's, when named

 private:
  static FakeKernels*& current() {
    static FakeKernels* kernels = nullptr;
    return kernels;
  }
  static CUresult CUDAAPI StreamGetCtx(CUstream stream, CUcontext* context) {
    if (stream == kStream) {
      *context = current()->fake_->context();
    } else if (stream == kOtherDeviceStream) {
      *context = kOtherContext;
    } else {
      return kInvalidValue;
    }
    return CUDA_SUCCESS;
  }
  static CUresult CUDAAPI ModuleLoadData(CUmodule* module, const void* image) {
    if (image != kFakeFatbin) return kInvalidValue;
    ++current()->loads;
    *module = reinterpret_cast<CUmodule>(0xD0);
    return CUDA_SUCCESS;
  }
  static CUresult CUDAAPI ModuleGetFunction(CUfunction* function, CUmodule, const char* name) {
    FakeKernels* k = current();
    k->looked_up.push_back(name);
    for (size_t i = 0; i < k->names_.size(); ++i) {
      if (k->names_[i] == name) {
        *function = reinterpret_cast<CUfunction>(0xF0 + i);
        return CUDA_SUCCESS;
      }
    }
    return kNotFound;
  }
  // Every kernel here takes the picture (codec::YcbcrPicture) first, except
  // the colour kernel, which reads only its output slot.
  static CUresult CUDAAPI LaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                                       unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                       unsigned, CUstream stream, void** args, void**) {
    FakeKernels* k = current();
    const size_t i = reinterpret_cast<size_t>(function) - 0xF0;
    if (i >= k->names_.size()) return kInvalidValue;
    if (k->fail_launch != CUDA_SUCCESS && (k->fail_only.empty() || k->fail_only == k->names_[i])) {
      return k->fail_launch;
    }
    if (k->names_[i] != "tfg_color_levels") {
      const auto* picture = static_cast<const codec::YcbcrPicture*>(args[0]);
      k->fake_->LaunchKernel(stream, reinterpret_cast<unsigned long long>(picture->y));
    }
    k->kernels_.at(k->names_[i])(stream, args, LaunchDims{gx, gy, gz, bx, by, bz});
    return CUDA_SUCCESS;
  }

  FakeNvdec* fake_;
  std::map<std::string, Launch> kernels_;
  std::vector<std::string> names_;
};

// The order an NVDEC kernel path keeps for its first picture: the picture
// mapped, the kernel launched behind the map, the kernel's event recorded
// behind the kernel, and the picture not unmapped yet (the kernel has not
// finished). "" when the calls keep it, else what is out of order; `record`
// gets the event record's index in calls().
inline std::string KernelOrderProblem(const FakeNvdec& fake, int* record) {
  const int map = fake.Find("cuvidMapVideoFrame");
  const int kernel = fake.Find("kernel(stream=", map);
  *record = fake.Find("cuEventRecord", map);
  if (map < 0) return "no picture mapped";
  if (kernel <= map) return "the kernel does not read the mapped picture";
  if (*record <= kernel) return "the event is not recorded behind the kernel";
  if (fake.Count("cuvidUnmapVideoFrame") != 0) return "unmapped before the kernel finished";
  return "";
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_FAKE_KERNELS_H_
