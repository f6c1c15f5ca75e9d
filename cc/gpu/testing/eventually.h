// Waiting for a state in the GPU code's tests: never for a time (a sleep is
// flaky on a loaded machine and slow on an idle one), with a generous limit
// that only a broken program reaches.
#ifndef TF_GULP_CC_GPU_TESTING_EVENTUALLY_H_
#define TF_GULP_CC_GPU_TESTING_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace tfg {
namespace gpu {
namespace testing {

// True once `done()` is; false if it is still false after 60 s.
template <typename Done>
bool Eventually(Done done) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_EVENTUALLY_H_
