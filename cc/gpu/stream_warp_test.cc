// StreamWarper (the op library's GPU warp launcher) against a fake driver
// whose cuLaunchKernel runs the kernels' own source on the host over the
// launch it is given (testing/cuda_launch_stand_in.h): the argument packing,
// the batch split past the grid's z limit, the per-picture offsets, the
// module loaded once per context, the context pushed and popped on every path,
// and failed driver calls as statuses. "Device pointers" are host pointers.
#include "cc/gpu/testing/kernels_on_host.h"  // first: the kernels' source on the host

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cc/gpu/stream_warp.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace {

const unsigned char kFakeFatbin[] = "fake fatbin";

// cuda.h's values; ffnvcodec's header names only a few codes.
const CUresult kInvalidImage = static_cast<CUresult>(200);
const CUresult kInvalidContext = static_cast<CUresult>(201);
const CUresult kInvalidHandle = static_cast<CUresult>(400);
const CUresult kNotFound = static_cast<CUresult>(500);
const CUresult kLaunchOutOfResources = static_cast<CUresult>(701);

// The fake driver's state (one test at a time).
struct Fake {
  std::map<CUstream, CUcontext> stream_context;
  std::vector<CUcontext> current;  // the context stack
  int pushes = 0, pops = 0, loads = 0, launches = 0;
  std::vector<unsigned> grid_z;
  CUresult fail_load = CUDA_SUCCESS, fail_launch = CUDA_SUCCESS;
  std::string error;  // the first rule broken
  std::vector<std::string> order;  // "copy <stream>", "launch <stream>"
};
Fake* fake = nullptr;

void Broke(const std::string& what) {
  if (fake->error.empty()) fake->error = what;
}

CUresult CUDAAPI StreamGetCtx(CUstream stream, CUcontext* context) {
  auto it = fake->stream_context.find(stream);
  if (it == fake->stream_context.end()) return kInvalidHandle;
  *context = it->second;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI PushCurrent(CUcontext context) {
  ++fake->pushes;
  fake->current.push_back(context);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI PopCurrent(CUcontext* context) {
  ++fake->pops;
  if (fake->current.empty()) {
    Broke("pop without push");
    return kInvalidContext;
  }
  *context = fake->current.back();
  fake->current.pop_back();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ModuleLoadData(CUmodule* module, const void* image) {
  if (fake->current.empty()) Broke("cuModuleLoadData without a current context");
  if (image != kFakeFatbin) Broke("cuModuleLoadData of another image");
  if (fake->fail_load != CUDA_SUCCESS) return fake->fail_load;
  ++fake->loads;
  // The module remembers its context: a function of it may only launch there.
  *module = reinterpret_cast<CUmodule>(fake->current.back());
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  if (std::strcmp(name, "tfg_similarity_warp_u8") != 0) return kNotFound;
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, CUstream stream,
                              void** args, void** extra) {
  if (fake->fail_launch != CUDA_SUCCESS) return fake->fail_launch;
  if (fake->current.empty() || reinterpret_cast<CUcontext>(f) != fake->current.back()) {
    Broke("kernel launched outside its module's context");
  }
  if (fake->stream_context.at(stream) != fake->current.back()) {
    Broke("kernel launched on a stream of another context");
  }
  if (gz > 65535) Broke("grid z above 65535");
  if (extra != nullptr || shared != 0) Broke("unexpected extra/shared memory");
  ++fake->launches;
  fake->grid_z.push_back(gz);
  fake->order.push_back("launch " + std::to_string(reinterpret_cast<intptr_t>(stream)));
  // The kernel's parameters, in its signature's order.
  const auto src = *static_cast<CUdeviceptr*>(args[0]);
  const auto stride = *static_cast<long long*>(args[1]);
  const int in_h = *static_cast<int*>(args[2]), in_w = *static_cast<int*>(args[3]);
  const int channels = *static_cast<int*>(args[4]);
  const auto matrices = *static_cast<CUdeviceptr*>(args[5]);
  const auto bias = *static_cast<CUdeviceptr*>(args[6]);
  const auto norm = *static_cast<CUdeviceptr*>(args[7]);
  const auto oob = *static_cast<CUdeviceptr*>(args[8]);
  const int out_h = *static_cast<int*>(args[9]), out_w = *static_cast<int*>(args[10]);
  const int nchw = *static_cast<int*>(args[11]);
  const auto dst = *static_cast<CUdeviceptr*>(args[12]);
  testing::LaunchOnHost({gx, gy, gz, bx, by, bz}, [&] {
    tfg_similarity_warp_u8(reinterpret_cast<const uint8_t*>(src), stride, in_h, in_w, channels,
                           reinterpret_cast<const float*>(matrices),
                           reinterpret_cast<const float*>(bias),
                           reinterpret_cast<const float*>(norm),
                           reinterpret_cast<const float*>(oob), out_h, out_w, nchw,
                           reinterpret_cast<float*>(dst));
  });
  return CUDA_SUCCESS;
}
// A pageable host -> device copy: the driver stages the source before
// returning, so the fake copies it now; the copy is queued on `stream`.
CUresult CUDAAPI MemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  if (fake->current.empty()) Broke("cuMemcpyHtoDAsync without a current context");
  if (fake->stream_context.at(stream) != fake->current.back()) {
    Broke("cuMemcpyHtoDAsync on a stream of another context");
  }
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  fake->order.push_back("copy " + std::to_string(reinterpret_cast<intptr_t>(stream)));
  return CUDA_SUCCESS;
}
// The launcher never waits for the GPU: a host round trip per call.
CUresult CUDAAPI StreamSynchronize(CUstream) {
  Broke("cuStreamSynchronize: a host round trip");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI CtxSynchronize() {
  Broke("cuCtxSynchronize: a host round trip");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI EventSynchronize(CUevent) {
  Broke("cuEventSynchronize: a host round trip");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI ErrorName(CUresult result, const char** name) {
  *name = result == kLaunchOutOfResources ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
                                                       : "CUDA_ERROR_INVALID_IMAGE";
  return CUDA_SUCCESS;
}

CudaApi FakeApi() {
  CudaApi api;
  api.cuStreamGetCtx = StreamGetCtx;
  api.cuCtxPushCurrent = PushCurrent;
  api.cuCtxPopCurrent = PopCurrent;
  api.cuModuleLoadData = ModuleLoadData;
  api.cuModuleGetFunction = ModuleGetFunction;
  api.cuLaunchKernel = LaunchKernel;
  api.cuGetErrorName = ErrorName;
  api.cuMemcpyHtoDAsync = MemcpyHtoDAsync;
  api.cuStreamSynchronize = StreamSynchronize;
  api.cuCtxSynchronize = CtxSynchronize;
  api.cuEventSynchronize = EventSynchronize;
  return api;
}

CUdeviceptr Ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUcontext Context(int i) { return reinterpret_cast<CUcontext>(static_cast<intptr_t>(0x1000 * i)); }
CUstream Stream(int i) { return reinterpret_cast<CUstream>(static_cast<intptr_t>(0x10 * i)); }

class StreamWarpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake = &state_;
    state_.stream_context = {{Stream(1), Context(1)}, {Stream(2), Context(2)},
                             {Stream(3), Context(1)}};
  }
  void TearDown() override {
    EXPECT_EQ(state_.error, "");
    EXPECT_TRUE(state_.current.empty()) << "a context left pushed";
    EXPECT_EQ(state_.pushes, state_.pops);
    fake = nullptr;
  }
  Fake state_;
  StreamWarper warper_{FakeApi(), kFakeFatbin, sizeof(kFakeFatbin)};
};

struct Batch {
  warp::WarpGeometry g;
  std::vector<uint8_t> src;
  std::vector<float> matrices, bias, norm, oob, out;

  Batch(int64_t pictures, int in_h, int in_w, int channels, int out_h, int out_w,
        warp::Layout layout, unsigned seed) {
    g.layout = layout;
    g.in_height = in_h;
    g.in_width = in_w;
    g.channels = channels;
    g.out_height = out_h;
    g.out_width = out_w;
    std::mt19937 rng(seed);
    src.resize(pictures * in_h * in_w * channels);
    for (auto& v : src) v = static_cast<uint8_t>(rng() & 0xFF);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    matrices.resize(9 * pictures);
    for (int64_t p = 0; p < pictures; ++p) {  // a different shift per picture
      const float m[9] = {static_cast<float>(in_w) / out_w, 0.1f * u(rng), in_w * u(rng),
                          0.1f * u(rng), static_cast<float>(in_h) / out_h, in_h * u(rng),
                          0, 0, 1};
      std::copy(m, m + 9, &matrices[9 * p]);
    }
    for (int c = 0; c < channels; ++c) {
      bias.push_back(3.f * c);
      norm.push_back(0.5f + c);
      oob.push_back(-7.f - c);
    }
    out.assign(pictures * out_h * out_w * channels, std::nanf(""));
  }

  Status Launch(const StreamWarper& w, int64_t pictures, CUstream stream) {
    return w.Launch(g, pictures, Ptr(src.data()), Ptr(matrices.data()), Ptr(bias.data()),
                    Ptr(norm.data()), Ptr(oob.data()), Ptr(out.data()), stream);
  }

  // Every picture against the CPU warp with its own matrix: within 1 level
  // (times the channel's norm), every element written.
  void ExpectMatchesCpu(int64_t pictures) const {
    const int64_t in = g.in_height * g.in_width * g.channels;
    const int64_t n = g.out_height * g.out_width * g.channels;
    std::vector<float> want(n);
    int64_t off = 0, unwritten = 0;
    for (int64_t p = 0; p < pictures; ++p) {
      warp::WarpRows(g, src.data() + p * in, &matrices[9 * p], bias.data(), norm.data(),
                     oob.data(), 0, g.out_height, want.data());
      for (int64_t i = 0; i < n; ++i) {
        const float got = out[p * n + i];
        if (std::isnan(got)) {
          ++unwritten;
          continue;
        }
        const int64_t c = g.layout == warp::Layout::kNHWC
                              ? i % g.channels
                              : i / (g.out_height * g.out_width);
        off += std::fabs(got - want[i]) > 1.01f * norm[c];
      }
    }
    EXPECT_EQ(unwritten, 0);
    EXPECT_EQ(off, 0);
  }
};

TEST_F(StreamWarpTest, PicturesMatchTheCpuWarpInBothLayouts) {
  for (warp::Layout layout : {warp::Layout::kNHWC, warp::Layout::kNCHW}) {
    Batch b(5, 13, 17, 3, 9, 35, layout, 1);
    ASSERT_TRUE(b.Launch(warper_, 5, Stream(1)).ok());
    b.ExpectMatchesCpu(5);
  }
  EXPECT_EQ(state_.loads, 1) << "the module is loaded once per context";
}

TEST_F(StreamWarpTest, BatchesPastTheGridLimitAreSplitWithTheRightOffsets) {
  const int64_t pictures = kMaxPicturesPerLaunch + 2;
  Batch b(pictures, 2, 3, 1, 1, 2, warp::Layout::kNHWC, 2);
  ASSERT_TRUE(b.Launch(warper_, pictures, Stream(1)).ok());
  EXPECT_EQ(state_.grid_z, (std::vector<unsigned>{65535, 2}));
  b.ExpectMatchesCpu(pictures);
}

TEST_F(StreamWarpTest, OneModulePerContext) {
  Batch b(2, 8, 8, 4, 4, 4, warp::Layout::kNHWC, 3);
  for (int s : {1, 2, 3, 2, 1}) ASSERT_TRUE(b.Launch(warper_, 2, Stream(s)).ok());
  EXPECT_EQ(state_.loads, 2);
  EXPECT_EQ(state_.launches, 5);
}

TEST_F(StreamWarpTest, NothingToWarpLaunchesNothing) {
  Batch b(1, 4, 4, 3, 2, 2, warp::Layout::kNHWC, 4);
  ASSERT_TRUE(b.Launch(warper_, 0, Stream(1)).ok());
  EXPECT_EQ(state_.launches, 0);
}

TEST_F(StreamWarpTest, TooManyChannelsIsInvalidArgument) {
  Batch b(1, 4, 4, 5, 2, 2, warp::Layout::kNHWC, 5);
  const Status s = b.Launch(warper_, 1, Stream(1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 4 channels, got 5"), std::string::npos) << s.message();
}

TEST_F(StreamWarpTest, FailedCallsAreStatusesAndLeaveNoContextPushed) {
  Batch b(1, 4, 4, 3, 2, 2, warp::Layout::kNHWC, 6);
  state_.fail_load = kInvalidImage;
  Status s = b.Launch(warper_, 1, Stream(1));
  EXPECT_NE(s.message().find("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE"),
            std::string::npos) << s.message();
  // Not cached: the next call loads again.
  state_.fail_load = CUDA_SUCCESS;
  ASSERT_TRUE(b.Launch(warper_, 1, Stream(1)).ok());
  EXPECT_EQ(state_.loads, 1);
  state_.fail_launch = kLaunchOutOfResources;
  s = b.Launch(warper_, 1, Stream(1));
  EXPECT_NE(s.message().find("cuLaunchKernel(tfg_similarity_warp_u8) failed: "
                             "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
            std::string::npos) << s.message();
  s = b.Launch(warper_, 1, Stream(9));  // a stream the driver does not know
  EXPECT_NE(s.message().find("cuStreamGetCtx failed"), std::string::npos) << s.message();
}

// Issue 44 item 6: similarity_warp's body takes its parameters from host
// memory and queues their copy and the warp on the stream, in that order,
// with no host wait; each clip's matrix serves all its frames.
TEST_F(StreamWarpTest, LaunchFromHostQueuesTheCopyThenTheWarpWithoutWaiting) {
  const int64_t clips = 2, frames = 3;
  Batch b(clips * frames, 11, 9, 3, 7, 5, warp::Layout::kNHWC, 8);
  std::vector<float> clip_matrices(b.matrices.begin(), b.matrices.begin() + 9 * clips);
  std::vector<float> params(StreamWarper::ParamFloats(clips * frames, 3), std::nanf(""));
  {
    // Host arrays that are gone once the call returns, as the op's may be.
    std::vector<float> m = clip_matrices, bias = b.bias, norm = b.norm, oob = b.oob;
    const Status s = warper_.LaunchFromHost(b.g, clips, frames, m.data(), bias.data(),
                                            norm.data(), oob.data(), Ptr(b.src.data()),
                                            Ptr(params.data()), Ptr(b.out.data()), Stream(3));
    ASSERT_TRUE(s.ok()) << s.message();
    std::fill(m.begin(), m.end(), std::nanf(""));
  }
  EXPECT_EQ(state_.order, (std::vector<std::string>{"copy 48", "launch 48"}))
      << "the copy, then the warp behind it, on the op's stream";
  for (int64_t p = 0; p < clips * frames; ++p) {  // the clip's matrix for each of its frames
    std::copy(clip_matrices.begin() + 9 * (p / frames), clip_matrices.begin() + 9 * (p / frames) + 9,
              b.matrices.begin() + 9 * p);
  }
  b.ExpectMatchesCpu(clips * frames);
}

TEST_F(StreamWarpTest, LaunchFromHostErrorsAreStatuses) {
  Batch b(1, 4, 4, 5, 2, 2, warp::Layout::kNHWC, 9);
  std::vector<float> params(64);
  Status s = warper_.LaunchFromHost(b.g, 1, 1, b.matrices.data(), b.bias.data(), b.norm.data(),
                                    b.oob.data(), Ptr(b.src.data()), Ptr(params.data()),
                                    Ptr(b.out.data()), Stream(1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  Batch c(1, 4, 4, 3, 2, 2, warp::Layout::kNHWC, 10);
  s = warper_.LaunchFromHost(c.g, 1, 1, c.matrices.data(), c.bias.data(), c.norm.data(),
                             c.oob.data(), Ptr(c.src.data()), Ptr(params.data()),
                             Ptr(c.out.data()), Stream(9));
  EXPECT_NE(s.message().find("cuStreamGetCtx failed"), std::string::npos) << s.message();
  EXPECT_TRUE(state_.order.empty());
}

}  // namespace
}  // namespace gpu
}  // namespace tfg
