// The GPU bodies' own threads: where NVDEC decodes run and wait (for a free
// decode surface, for a kernel's event), so that no thread of the caller's
// (TensorFlow's executor or its inter-op / intra-op pools) is ever held by a
// decode. A fixed set of threads taking tasks in order.
#ifndef TF_GULP_CC_GPU_TASK_THREADS_H_
#define TF_GULP_CC_GPU_TASK_THREADS_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tfg {
namespace gpu {

class TaskThreads {
 public:
  explicit TaskThreads(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
  }
  // Runs the tasks already scheduled, then joins.
  ~TaskThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  TaskThreads(const TaskThreads&) = delete;
  TaskThreads& operator=(const TaskThreads&) = delete;

  void Schedule(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  // Whether the calling thread is one of these.
  bool IsOwnThread() const {
    for (const std::thread& t : threads_) {
      if (t.get_id() == std::this_thread::get_id()) return true;
    }
    return false;
  }

  // The process's threads for the GPU ops' decodes (never destroyed: tasks
  // may still run while the process exits). Enough for two sessions per
  // NVDEC engine of the largest GPUs (7 engines) to decode while others wait.
  static TaskThreads* ForDecodes() {
    static TaskThreads* threads = new TaskThreads(16);
    return threads;
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, nothing left
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TASK_THREADS_H_
