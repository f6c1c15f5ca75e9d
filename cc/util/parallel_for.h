// Runs `n` independent tasks on a caller-supplied scheduler, with the calling
// thread working too.
//
// The caller claims tasks from the same counter as the scheduled helpers, so
// the loop finishes even when the scheduler's threads are all busy (for
// example when the caller itself runs on one of them): helpers that start late
// find nothing left and return at once. This keeps the core free of any
// particular thread pool; the TF kernels pass tf.data's runner.
#ifndef TF_GULP_CC_UTIL_PARALLEL_FOR_H_
#define TF_GULP_CC_UTIL_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace tfg {

using Scheduler = std::function<void(std::function<void()>)>;

// Calls task(i) for i in [0, n) using up to `max_parallelism` threads (the
// caller included). Returns when every task has finished.
inline void ParallelFor(int64_t n, int max_parallelism,
                        const Scheduler& schedule,
                        const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  if (n == 1 || max_parallelism <= 1 || !schedule) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  struct State {
    std::atomic<int64_t> next{0};
    int64_t finished = 0;  // guarded by mu
    int64_t total = 0;
    std::mutex mu;
    std::condition_variable all_done;
    std::function<void(int64_t)> task;
  };
  auto state = std::make_shared<State>();
  state->total = n;
  state->task = task;
  auto work = [state]() {
    int64_t done_here = 0;
    for (int64_t i = state->next.fetch_add(1); i < state->total;
         i = state->next.fetch_add(1)) {
      state->task(i);
      ++done_here;
    }
    if (done_here > 0) {
      bool all_finished;
      {
        std::lock_guard<std::mutex> lock(state->mu);
        state->finished += done_here;
        all_finished = state->finished == state->total;
      }
      // After the lock is released, as OrderedReadAhead notifies: the caller
      // woken while it is held would block on it at once. `state` outlives
      // this (the helper holds it).
      if (all_finished) state->all_done.notify_all();
    }
  };
  const int64_t helpers =
      std::min<int64_t>(n, static_cast<int64_t>(max_parallelism)) - 1;
  for (int64_t h = 0; h < helpers; ++h) schedule(work);
  work();
  std::unique_lock<std::mutex> lock(state->mu);
  state->all_done.wait(lock, [&] { return state->finished == state->total; });
}

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_PARALLEL_FOR_H_
