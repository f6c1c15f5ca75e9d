#include "cc/gulp/element_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tfg {
namespace gulp {
namespace {

GulpDirectory MakeDirectory(int chunks, int items_per_chunk) {
  GulpDirectory gd;
  gd.path = "/d";
  for (int c = 0; c < chunks; ++c) {
    ChunkIndex chunk;
    chunk.meta_path = "/d/meta_" + std::to_string(c) + ".gmeta";
    for (int i = 0; i < items_per_chunk; ++i) {
      Item item;
      item.id = std::to_string(c) + "_" + std::to_string(i);
      item.label_json = std::to_string(c);
      chunk.items.push_back(item);
    }
    gd.chunks.push_back(chunk);
  }
  return gd;
}

TEST(ElementOrderTest, BuildsInStorageOrderWithFilterAndLabels) {
  GulpDirectory gd = MakeDirectory(3, 2);
  std::vector<ElementRef> all, some;
  ASSERT_TRUE(BuildElements(gd, {}, nullptr, true, &all).ok());
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[3].chunk, 1);
  EXPECT_EQ(all[3].item, 1);
  EXPECT_EQ(all[3].label, 1);
  ASSERT_TRUE(BuildElements(gd, {"2_0", "0_1"}, nullptr, false, &some).ok());
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].chunk, 0);  // storage order, not filter order
  EXPECT_EQ(some[0].label, -1);  // labels not resolved
  Status missing = BuildElements(gd, {"nope"}, nullptr, true, &some);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("nope"), std::string::npos);
}

TEST(ElementOrderTest, IdentityWithoutShuffle) {
  std::vector<ElementRef> elements;
  ASSERT_TRUE(BuildElements(MakeDirectory(2, 3), {}, nullptr, true, &elements).ok());
  EXPECT_EQ(EpochOrder(elements, false, 1, 0, 4),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(ElementOrderTest, ShuffleIsAPermutationPerSeedAndEpoch) {
  std::vector<ElementRef> elements;
  ASSERT_TRUE(BuildElements(MakeDirectory(10, 7), {}, nullptr, true, &elements).ok());
  auto e0 = EpochOrder(elements, true, 5, 0, 2);
  auto e0_again = EpochOrder(elements, true, 5, 0, 2);
  auto e1 = EpochOrder(elements, true, 5, 1, 2);
  auto other_seed = EpochOrder(elements, true, 6, 0, 2);
  EXPECT_EQ(e0, e0_again);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, other_seed);
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 70; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(ElementOrderTest, ShuffleStaysWithinWindowsOfChunks) {
  std::vector<ElementRef> elements;
  ASSERT_TRUE(BuildElements(MakeDirectory(8, 5), {}, nullptr, true, &elements).ok());
  auto order = EpochOrder(elements, true, 9, 3, 2);
  // Each run of 10 positions (2 chunks x 5 items) holds exactly two chunks.
  for (size_t start = 0; start < order.size(); start += 10) {
    std::set<int32_t> chunks;
    for (size_t p = start; p < start + 10; ++p) {
      chunks.insert(elements[order[p]].chunk);
    }
    EXPECT_EQ(chunks.size(), 2u);
  }
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
