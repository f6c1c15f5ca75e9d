#include "cc/util/ordered_read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tfg {
namespace {

// A scheduler backed by real threads, joined at the end of the test.
class Threads {
 public:
  ~Threads() { Join(); }
  Scheduler scheduler() {
    return [this](std::function<void()> fn) {
      std::lock_guard<std::mutex> lock(mu_);
      threads_.emplace_back(std::move(fn));
    };
  }
  void Join() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

TEST(ReadAheadThreadsWithinTest, OnePerCoreWhileTheWindowFitsTheBudget) {
  constexpr double kMiB = 1 << 20;
  // 4 KiB records in batches of 64: every core.
  EXPECT_EQ(ReadAheadThreadsWithin(64, 64 * 4096.0, 256 * kMiB, 2), 64);
  EXPECT_EQ(ReadAheadThreadsWithin(2, 64 * 4096.0, 256 * kMiB, 2), 2);
  // 64 MiB batches: 4 fit in 256 MiB, so 2 threads (+ 2 more units).
  EXPECT_EQ(ReadAheadThreadsWithin(64, 64 * kMiB, 256 * kMiB, 2), 2);
  EXPECT_EQ(ReadAheadThreadsWithin(64, 60 * kMiB, 256 * kMiB, 2), 2);
  // Larger than the budget on their own: still one thread.
  EXPECT_EQ(ReadAheadThreadsWithin(64, 1024 * kMiB, 256 * kMiB, 2), 1);
  // No cores reported, or no size known: one thread / one per core.
  EXPECT_EQ(ReadAheadThreadsWithin(0, 4096.0, 256 * kMiB, 2), 1);
  EXPECT_EQ(ReadAheadThreadsWithin(8, 0.0, 256 * kMiB, 2), 8);
}

TEST(OrderedReadAheadTest, ResultsComeInOrderAndEachIsProducedOnce) {
  std::atomic<int> calls{0};
  Threads threads;
  {
    OrderedReadAhead<int64_t> ahead(threads.scheduler(), 4, [&](int64_t p) {
      calls++;
      return p * p;
    }, 0, 50);
    for (int64_t p = 0; p < 50; ++p) EXPECT_EQ(ahead.Take(p), p * p);
  }
  EXPECT_EQ(calls.load(), 50);
}

TEST(OrderedReadAheadTest, WorksWhenTheSchedulerNeverRunsAnything) {
  std::vector<std::function<void()>> queued;
  Scheduler never = [&](std::function<void()> fn) { queued.push_back(fn); };
  std::vector<int64_t> got;
  {
    OrderedReadAhead<int64_t> ahead(never, 3, [](int64_t p) { return p + 100; }, 0, 10);
    for (int64_t p = 0; p < 10; ++p) got.push_back(ahead.Take(p));
  }
  for (auto& fn : queued) fn();  // late tasks after destruction do nothing
  for (int64_t p = 0; p < 10; ++p) EXPECT_EQ(got[p], p + 100);
}

TEST(OrderedReadAheadTest, SkipAndResetChangeThePositionAndTheProducerInput) {
  Threads threads;
  std::atomic<int64_t> offset{0};
  OrderedReadAhead<int64_t> ahead(threads.scheduler(), 4,
                                  [&](int64_t p) { return p + offset.load(); }, 0, 100);
  EXPECT_EQ(ahead.Take(0), 0);
  ahead.SkipTo(10);
  EXPECT_EQ(ahead.Take(10), 10);
  ahead.Reset(3);  // waits for running tasks: now safe to change the producer's input
  offset = 1000;
  EXPECT_EQ(ahead.Take(3), 1003);
  EXPECT_EQ(ahead.Take(4), 1004);
}

TEST(OrderedReadAheadTest, TasksRunInReverseStillProduceTheLowestPositionFirst) {
  // A scheduler that queues tasks and runs the newest first, as a LIFO work
  // queue would: the position each task produces must still follow the order.
  std::vector<std::function<void()>> queued;
  Scheduler lifo = [&](std::function<void()> fn) { queued.push_back(std::move(fn)); };
  std::vector<int64_t> produced;
  OrderedReadAhead<int64_t> ahead(lifo, 4, [&](int64_t p) {
    produced.push_back(p);
    return p;
  }, 0, 4);
  // Take(0) schedules positions 0..3 and, as none has started, produces 0
  // inline; then the queued tasks run newest first.
  EXPECT_EQ(ahead.Take(0), 0);
  while (!queued.empty()) {
    auto fn = std::move(queued.back());
    queued.pop_back();
    fn();
  }
  EXPECT_EQ(produced, (std::vector<int64_t>{0, 1, 2, 3}));
  for (int64_t p = 1; p < 4; ++p) EXPECT_EQ(ahead.Take(p), p);
  EXPECT_EQ(produced.size(), 4u);  // nothing produced twice
}

TEST(OrderedReadAheadTest, PrepareRunsOnTheConsumersThreadAndFillCompletesIt) {
  // Output buffers are allocated by the thread that frees them (the
  // consumer's); the scheduler's threads only fill them.
  const std::thread::id consumer = std::this_thread::get_id();
  std::atomic<int> prepared_elsewhere{0}, fills{0};
  Threads threads;
  {
    OrderedReadAhead<std::vector<int64_t>> ahead(
        threads.scheduler(), 4,
        [&](int64_t p) {
          if (std::this_thread::get_id() != consumer) prepared_elsewhere++;
          return std::vector<int64_t>{p};
        },
        [&](int64_t p, std::vector<int64_t>* v) {
          fills++;
          ASSERT_EQ(v->size(), 1u);  // what prepare made for this position
          ASSERT_EQ((*v)[0], p);
          v->push_back(p * 10);
        },
        0, 40);
    for (int64_t p = 0; p < 40; ++p) EXPECT_EQ(ahead.Take(p), (std::vector<int64_t>{p, p * 10}));
  }
  EXPECT_EQ(prepared_elsewhere.load(), 0);
  EXPECT_EQ(fills.load(), 40);
}

}  // namespace
}  // namespace tfg
