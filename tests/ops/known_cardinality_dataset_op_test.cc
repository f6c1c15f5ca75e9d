// TfGulp>KnownCardinalityDataset at the op level: the cardinality it states (not its input's),
// its input's elements unchanged to the end of the sequence, iterator save/restore, and a bad
// cardinality, through a TensorFlow session (dataset_op_harness.h) over a RangeDataset.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

constexpr int64_t kRangeEnd = 6;  // the input: 0, 1, ..., 5

class KnownCardinalityDatasetOpTest : public OpLibraryTest {
 protected:
  // KnownCardinalityDataset(Range(0, kRangeEnd), cardinality) and iterators "a", "b", "c", with
  // "b" restorable from "a".
  void Build(DatasetGraph* g, int64_t cardinality) {
    TF_Output range = g->AddRange(kRangeEnd);
    g->SetDataset("TfGulp>KnownCardinalityDataset", {range, g->Int64Scalar("cardinality", cardinality)},
                  {TF_INT64},
                  [](TF_OperationDescription* d) { DatasetGraph::SetElementSpec(d, {TF_INT64}); });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
  }
};

TEST_F(KnownCardinalityDatasetOpTest, CardinalityIsTheStatedOneAndElementsTheInputs) {
  // 9, not the input's 6: the count is stated, never inferred or checked (under tf.data service
  // a worker's stream is shorter than the dataset).
  DatasetGraph g;
  Build(&g, 9);
  EXPECT_EQ(g.Cardinality(), 9);
  g.MakeIterator("a");
  EXPECT_EQ(g.NextInt64s("a", kRangeEnd + 1), RangeElements(0, kRangeEnd));
  std::vector<TensorPtr> element;
  EXPECT_FALSE(g.GetNext("a", &element));  // the end stays the end
}

TEST_F(KnownCardinalityDatasetOpTest, InfiniteAndZeroAreCounts) {
  for (int64_t cardinality : {int64_t{-1}, int64_t{0}}) {
    DatasetGraph g;
    Build(&g, cardinality);
    EXPECT_EQ(g.Cardinality(), cardinality);
  }
}

TEST_F(KnownCardinalityDatasetOpTest, SaveAndRestoreMidwayContinueTheInput) {
  DatasetGraph g;
  Build(&g, kRangeEnd);
  g.MakeIterator("a");
  EXPECT_EQ(g.NextInt64s("a", 2), RangeElements(0, 2));
  g.MakeIterator("b");
  EXPECT_EQ(g.NextInt64s("b", 1), RangeElements(0, 1));
  g.Restore("b", "a");
  EXPECT_EQ(g.NextInt64s("b", kRangeEnd), RangeElements(2, kRangeEnd));
  EXPECT_EQ(g.NextInt64s("a", kRangeEnd), RangeElements(2, kRangeEnd));
}

TEST_F(KnownCardinalityDatasetOpTest, NegativeCardinalityOtherThanInfiniteIsAnError) {
  DatasetGraph g;
  Build(&g, -5);
  ExpectTfError([&] { g.Cardinality(); },
                "cardinality must be >= 0 or -1 (infinite), got -5", TF_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
