#include "cc/util/parallel_for.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tfg {
namespace {

TEST(ParallelForTest, RunsEveryTaskOnceWithThreads) {
  std::vector<std::thread> threads;
  std::mutex mu;
  Scheduler schedule = [&](std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(fn));
  };
  std::vector<std::atomic<int>> hits(1000);
  ParallelFor(1000, 4, schedule, [&](int64_t i) { hits[i]++; });
  for (auto& t : threads) t.join();
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ParallelForTest, FinishesWhenTheSchedulerNeverRuns) {
  // A scheduler whose threads are all busy: the caller does all the work.
  std::vector<std::function<void()>> never_run;
  Scheduler schedule = [&](std::function<void()> fn) {
    never_run.push_back(std::move(fn));
  };
  int sum = 0;
  ParallelFor(10, 8, schedule, [&](int64_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum, 45);
  for (auto& fn : never_run) fn();  // late helpers find nothing to do
  EXPECT_EQ(sum, 45);
}

TEST(ParallelForTest, ZeroTasksIsANoOp) {
  ParallelFor(0, 4, nullptr, [](int64_t) { FAIL(); });
}

}  // namespace
}  // namespace tfg
