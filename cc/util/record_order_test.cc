#include "cc/util/record_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tfg {
namespace {

std::vector<int64_t> Order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
  RecordOrder order(n, shuffle, seed, epoch);
  std::vector<int64_t> out;
  for (int64_t p = 0; p < order.size(); ++p) out.push_back(order[p]);
  return out;
}

TEST(RecordOrderTest, IdentityWithoutShuffle) {
  EXPECT_EQ(Order(5, false, 1, 3), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(RecordOrderTest, ShuffleIsAPermutationForEverySize) {
  for (int64_t n : {0, 1, 2, 3, 4, 5, 15, 16, 17, 100, 1000, 4097}) {
    std::vector<int64_t> got = Order(n, true, 42, 0);
    std::vector<int64_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "n=" << n;
  }
}

TEST(RecordOrderTest, DependsOnSeedAndEpochOnly) {
  const auto a = Order(1000, true, 7, 0);
  EXPECT_EQ(a, Order(1000, true, 7, 0));
  EXPECT_NE(a, Order(1000, true, 7, 1));
  EXPECT_NE(a, Order(1000, true, 8, 0));
  int fixed_points = 0;
  for (int64_t i = 0; i < 1000; ++i) fixed_points += a[i] == i;
  EXPECT_LT(fixed_points, 10);  // about 1 expected for a random permutation
}

TEST(RecordOrderTest, LooksUniform) {
  // Where record 0 lands, over many epochs, is spread over all positions.
  const int64_t n = 10;
  std::vector<int> hits(n, 0);
  for (int64_t epoch = 0; epoch < 5000; ++epoch) {
    RecordOrder order(n, true, 3, epoch);
    for (int64_t p = 0; p < n; ++p) {
      if (order[p] == 0) hits[p]++;
    }
  }
  for (int h : hits) {
    EXPECT_GT(h, 350);
    EXPECT_LT(h, 650);
  }
}

TEST(RecordOrderTest, HugeDatasetsNeedNoMemory) {
  RecordOrder order(int64_t{1} << 40, true, 1, 0);
  for (int64_t p : {int64_t{0}, int64_t{1} << 39, (int64_t{1} << 40) - 1}) {
    const int64_t r = order[p];
    EXPECT_GE(r, 0);
    EXPECT_LT(r, int64_t{1} << 40);
  }
}

}  // namespace
}  // namespace tfg
