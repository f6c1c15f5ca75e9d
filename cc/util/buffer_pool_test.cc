#include "cc/util/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace tfg {
namespace {

TEST(BufferPoolTest, BuffersAreAlignedAndWritable) {
  BufferPool pool(4, 64);
  for (size_t bytes : {1, 63, 64, 65, 1 << 20}) {
    void* p = pool.Acquire(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 0xab, bytes);
    pool.Release(p, bytes);
  }
}

TEST(BufferPoolTest, HugePageSizedBuffersStartOnHugePageBoundaries) {
  // So that transparent huge pages can back them (buffer_pool.cc).
  BufferPool pool(4, 64);
  constexpr size_t kHugePage = size_t{2} << 20;
  for (size_t bytes : {kHugePage, kHugePage + 1, size_t{3686400}}) {
    void* p = pool.Acquire(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePage, 0u) << bytes;
    std::memset(p, 0xcd, bytes);
    pool.Release(p, bytes);
  }
  void* small = pool.Acquire(kHugePage - 1);  // below: the pool's own alignment only
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  pool.Release(small, kHugePage - 1);
}

TEST(BufferPoolTest, ReleasedBufferIsHandedOutAgainForTheSameSize) {
  BufferPool pool(4, 64);
  void* a = pool.Acquire(1000);
  pool.Release(a, 1000);
  EXPECT_EQ(pool.cached(), 1u);
  EXPECT_EQ(pool.Acquire(1000), a);
  EXPECT_EQ(pool.cached(), 0u);
  EXPECT_EQ(pool.allocations(), 1);
  pool.Release(a, 1000);
}

TEST(BufferPoolTest, OtherSizesGetNewBuffers) {
  BufferPool pool(4, 64);
  void* a = pool.Acquire(1000);
  pool.Release(a, 1000);
  void* b = pool.Acquire(2000);
  EXPECT_EQ(pool.allocations(), 2);
  EXPECT_EQ(pool.cached(), 1u);  // a is still there for its size
  pool.Release(b, 2000);
}

TEST(BufferPoolTest, CacheIsBoundedAndKeepsTheNewest) {
  BufferPool pool(2, 64);
  void* a = pool.Acquire(100);
  void* b = pool.Acquire(200);
  void* c = pool.Acquire(300);
  pool.Release(a, 100);
  pool.Release(b, 200);
  pool.Release(c, 300);  // evicts a, the oldest
  EXPECT_EQ(pool.cached(), 2u);
  const int64_t before = pool.allocations();
  EXPECT_EQ(pool.Acquire(300), c);
  EXPECT_EQ(pool.Acquire(200), b);
  void* a2 = pool.Acquire(100);  // a was freed: a new allocation
  EXPECT_EQ(pool.allocations(), before + 1);
  pool.Release(a2, 100);
  pool.Release(b, 200);
  pool.Release(c, 300);
}

TEST(BufferPoolTest, ZeroCapacityCachesNothing) {
  BufferPool pool(0, 64);
  void* a = pool.Acquire(100);
  pool.Release(a, 100);
  EXPECT_EQ(pool.cached(), 0u);
  pool.Release(nullptr, 100);  // ignored
}

TEST(BufferPoolTest, ManyThreadsNeverShareABuffer) {
  BufferPool pool(8, 64);
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, &failures, t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t bytes = 4096 * (1 + i % 3);
        auto* p = static_cast<uint8_t*>(pool.Acquire(bytes));
        std::memset(p, t, bytes);
        for (size_t k = 0; k < bytes; k += 512) {
          if (p[k] != t) ++failures[t];  // someone else wrote here meanwhile
        }
        pool.Release(p, bytes);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << t;
  EXPECT_LE(pool.cached(), 8u);
}

}  // namespace
}  // namespace tfg
