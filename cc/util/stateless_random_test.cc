#include "cc/util/stateless_random.h"

#include <gtest/gtest.h>

namespace tfg {
namespace {

TEST(StatelessRandomTest, SameKeySameStream) {
  KeyedRandom a(HashKey({1, 2, 3})), b(HashKey({1, 2, 3}));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.Next(), b.Next());
}

TEST(StatelessRandomTest, KeysDependOnEveryPartAndOrder) {
  EXPECT_NE(HashKey({1, 2, 3}), HashKey({1, 2, 4}));
  EXPECT_NE(HashKey({1, 2}), HashKey({2, 1}));
}

TEST(StatelessRandomTest, RangesAreRespected) {
  KeyedRandom r(7);
  int counts[5] = {0};
  for (int i = 0; i < 5000; ++i) {
    double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    uint64_t k = r.Below(5);
    ASSERT_LT(k, 5u);
    counts[k]++;
  }
  for (int c : counts) EXPECT_GT(c, 800);  // roughly uniform
}

}  // namespace
}  // namespace tfg
