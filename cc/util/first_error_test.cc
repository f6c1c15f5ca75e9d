// FirstError under concurrent reporters: one error kept, the first, never
// overwritten; run under ThreadSanitizer it also shows the type is race free.
#include "cc/util/first_error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace {

TEST(FirstErrorTest, KeepsTheFirstErrorAndIgnoresOk) {
  FirstError<Status> first;
  EXPECT_FALSE(first.Note(Status::Ok()));
  EXPECT_FALSE(first.failed());
  EXPECT_TRUE(first.status().ok());
  EXPECT_TRUE(first.Note(InternalError("copy 3 failed")));
  EXPECT_FALSE(first.Note(DataLossError("copy 5 failed")));
  EXPECT_TRUE(first.failed());
  EXPECT_EQ(first.status().code(), StatusCode::kInternal);
  EXPECT_EQ(first.status().message(), "copy 3 failed");
}

// Many threads released at once, each reporting its own error (and some OK):
// exactly one Note wins, and the status kept is the winner's.
TEST(FirstErrorTest, ConcurrentReportersKeepExactlyOne) {
  constexpr int kThreads = 16;
  for (int round = 0; round < 50; ++round) {
    FirstError<Status> first;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<int> won(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ++ready;
        while (!go.load()) std::this_thread::yield();
        for (int k = 0; k < 20; ++k) {
          const Status s = (t + k) % 3 == 0 ? Status::Ok()
                                           : InternalError("thread ", t, " call ", k);
          if (first.Note(s)) ++won[t];
          (void)first.failed();
        }
      });
    }
    while (ready.load() < kThreads) std::this_thread::yield();
    go = true;
    for (auto& t : threads) t.join();
    int winners = 0, winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      winners += won[t];
      if (won[t]) winner = t;
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    EXPECT_EQ(first.status().message().rfind("thread " + std::to_string(winner) + " call ", 0), 0u)
        << first.status().message();
  }
}

}  // namespace
}  // namespace tfg
