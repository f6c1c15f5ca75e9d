// A CPU stand-in for a CUDA kernel launch, so that a .cu file's kernels can be
// compiled as C++ and run on the host: __global__ becomes nothing and
// threadIdx / blockIdx / blockDim are thread-local variables that
// LaunchOnHost sets for every block and thread of the grid before calling the
// kernel. Blocks run in a shuffled order (a GPU gives no order); threads of a
// block run one after another, which is enough for kernels that neither share
// memory nor synchronize (the warp kernels). A kernel that does (__shared__,
// __syncthreads: the colour kernel) runs under LaunchOnHostSynced: each block's
// threads at once, one host thread each, __syncthreads a barrier among them.
#ifndef TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_
#define TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_

#ifdef __CUDACC__
#error "the stand-in is for host compilers; nvcc has the real thing"
#endif

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "cc/gpu/launch_geometry.h"

#define __global__
// One block runs at a time (LaunchOnHostSynced), so its threads' statics are its shared memory.
#define __shared__ static

struct StandInDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local StandInDim3 threadIdx, blockIdx, blockDim;

namespace tfg {
namespace gpu {
namespace testing {

// A reusable barrier for one block's threads.
class StandInBarrier {
 public:
  explicit StandInBarrier(unsigned threads) : threads_(threads) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned long long generation = generation_;
    if (++arrived_ == threads_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned threads_, arrived_ = 0;
  unsigned long long generation_ = 0;
};

inline thread_local StandInBarrier* t_block_barrier = nullptr;

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

inline void __syncthreads() {
  if (tfg::gpu::testing::t_block_barrier == nullptr) {
    std::fprintf(stderr, "stand-in: a kernel that synchronizes needs LaunchOnHostSynced\n");
    std::abort();
  }
  tfg::gpu::testing::t_block_barrier->Wait();
}

namespace tfg {
namespace gpu {
namespace testing {

// Runs `kernel()` (a call of the kernel with its arguments bound) once per
// thread of the launch `d`.
template <typename Kernel>
void LaunchOnHost(const LaunchDims& d, Kernel kernel, unsigned seed = 1) {
  std::vector<StandInDim3> blocks;
  for (unsigned z = 0; z < d.grid_z; ++z)
    for (unsigned y = 0; y < d.grid_y; ++y)
      for (unsigned x = 0; x < d.grid_x; ++x) blocks.push_back({x, y, z});
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(seed));
  blockDim = {d.block_x, d.block_y, d.block_z};
  for (const StandInDim3& b : blocks) {
    blockIdx = b;
    for (unsigned tz = 0; tz < d.block_z; ++tz)
      for (unsigned ty = 0; ty < d.block_y; ++ty)
        for (unsigned tx = 0; tx < d.block_x; ++tx) {
          threadIdx = {tx, ty, tz};
          kernel();
        }
  }
}

// The same for a kernel with shared memory and __syncthreads: every block's
// threads run at once on host threads; blocks (and launches, process-wide:
// the shared memory is static) one after another.
template <typename Kernel>
void LaunchOnHostSynced(const LaunchDims& d, Kernel kernel, unsigned seed = 1) {
  static std::mutex one_block_at_a_time;
  std::lock_guard<std::mutex> lock(one_block_at_a_time);
  std::vector<StandInDim3> blocks;
  for (unsigned z = 0; z < d.grid_z; ++z)
    for (unsigned y = 0; y < d.grid_y; ++y)
      for (unsigned x = 0; x < d.grid_x; ++x) blocks.push_back({x, y, z});
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(seed));
  const StandInDim3 dims{d.block_x, d.block_y, d.block_z};
  for (const StandInDim3& b : blocks) {
    StandInBarrier barrier(d.block_x * d.block_y * d.block_z);
    std::vector<std::thread> threads;
    for (unsigned tz = 0; tz < d.block_z; ++tz)
      for (unsigned ty = 0; ty < d.block_y; ++ty)
        for (unsigned tx = 0; tx < d.block_x; ++tx) {
          threads.emplace_back([&, b, tx, ty, tz] {
            blockDim = dims;
            blockIdx = b;
            threadIdx = {tx, ty, tz};
            t_block_barrier = &barrier;
            kernel();
          });
        }
    for (std::thread& t : threads) t.join();
  }
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_CUDA_LAUNCH_STAND_IN_H_
