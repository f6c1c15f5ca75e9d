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

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/testing/eventually.h"
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

// What the GPU ops' bodies run on in their tests (decode_hevc_body_test,
// decode_hevc_warped_body_test): the fake driver and NVDEC, the fatbin's
// kernels with the RGB and warp kernels' launches counted, and an
// NvdecRgbDecoder over them.
struct FakeDecoderRig {
  FakeNvdec fake;
  std::atomic<int> rgb_launches{0};   // tfg_ycbcr_to_rgb_u8's (decode_hevc)
  std::atomic<int> warp_launches{0};  // tfg_decode_warp_ycbcr's (decode_hevc_warped)
  FakeKernels kernels;
  std::unique_ptr<NvdecRgbDecoder> decoder;
  std::vector<std::vector<uint8_t>> bytes;  // the samples, kept for the decodes

  // `more`: the fatbin's other kernels (the colour kernel).
  explicit FakeDecoderRig(int sessions = 1, int surfaces = 2,
                          std::map<std::string, FakeKernels::Launch> more = {})
      : kernels(&fake, Counted(std::move(more))) {
    NvdecPoolOptions options;
    options.sessions = sessions;
    options.surfaces = surfaces;
    decoder = std::make_unique<NvdecRgbDecoder>(kernels.cuda(), fake.nvdec(), kFakeFatbin,
                                                sizeof(kFakeFatbin), options);
  }

  std::map<std::string, FakeKernels::Launch> Counted(
      std::map<std::string, FakeKernels::Launch> kernels) {
    kernels["tfg_ycbcr_to_rgb_u8"] = [this](CUstream, void**, const LaunchDims&) {
      ++rgb_launches;
    };
    kernels["tfg_decode_warp_ycbcr"] = [this](CUstream, void**, const LaunchDims&) {
      ++warp_launches;
    };
    return kernels;
  }

  // A new fake sample of a width x height picture, kept until the rig ends.
  const std::vector<uint8_t>& Sample(int width, int height) {
    FakeSample s;
    s.width = width;
    s.height = height;
    bytes.push_back(FakeSampleBytes(s));
    return bytes.back();
  }

  // Issue 44 item 4: `start`, run on a caller thread of its own, hands the
  // body work in which a decode waits in the driver (blocking_waits), and
  // calls its argument from the body's `done`. The wait must hold one of the
  // body's threads, never the caller's: the caller returns while the decode
  // waits, and `done` runs on another thread.
  void ExpectWaitsOffTheCallersThread(const std::function<void(std::function<void()>)>& start) {
    std::atomic<bool> returned{false};
    std::promise<std::thread::id> done_on;
    std::thread caller([&] {
      start([&] { done_on.set_value(std::this_thread::get_id()); });
      returned = true;
    });
    ASSERT_TRUE(Eventually([&] { return fake.waiting() == 1; }));
    EXPECT_TRUE(Eventually([&] { return returned.load(); }))
        << "the caller's thread is held by a decode";
    fake.CompleteStream(kStream);
    caller.join();
    EXPECT_NE(done_on.get_future().get(), caller.get_id());
  }

  // The stream's work completed and the decoder gone: no call out of order.
  void ExpectCleanEnd() {
    fake.CompleteStream(kStream);
    decoder.reset();
    EXPECT_THAT(fake.problems(), ::testing::IsEmpty());
  }
};

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_FAKE_KERNELS_H_
