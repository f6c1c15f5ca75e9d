// TfGulp>EpochDataset at the op level: its cardinality, its one element per pass (the pass's epoch,
// from the epoch counter named by the `epoch_counter` attr), iterator save/restore, and a bad attr,
// through a TensorFlow session (dataset_op_harness.h).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

using Elements = std::vector<std::vector<int64_t>>;

class EpochDatasetOpTest : public OpLibraryTest {
 protected:
  // EpochDataset("pass-key") with `elements`, and iterators "a", "b", "c", with "b" restorable
  // from "a". Each graph runs in its own session, so its epoch counter starts at 0.
  void Build(DatasetGraph* g, int64_t elements) {
    TF_Output key = g->StringScalar("key", "pass-key");
    g->SetDataset("TfGulp>EpochDataset", {key}, {TF_INT64}, [&](TF_OperationDescription* d) {
      TF_SetAttrString(d, "epoch_counter", kCounter, sizeof(kCounter) - 1);
      TF_SetAttrInt(d, "elements", elements);
    });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
  }

  static constexpr char kCounter[] = "epoch_op_test_counter";
};

TEST_F(EpochDatasetOpTest, CardinalityIsOneElementPerPass) {
  for (int64_t elements : {-1, 0, 4}) {
    DatasetGraph g;
    Build(&g, elements);
    EXPECT_EQ(g.Cardinality(), 1) << "elements=" << elements;
  }
}

TEST_F(EpochDatasetOpTest, EachIteratorGetsTheNextEpochThenEndOfSequence) {
  DatasetGraph g;
  Build(&g, /*elements=*/-1);
  g.MakeIterator("a");
  std::vector<TensorPtr> element;
  ASSERT_TRUE(g.GetNext("a", &element));
  EXPECT_EQ(TF_NumDims(element[0].get()), 0);  // a scalar
  EXPECT_EQ(*static_cast<const int64_t*>(TF_TensorData(element[0].get())), 0);
  EXPECT_FALSE(g.GetNext("a", &element));
  EXPECT_FALSE(g.GetNext("a", &element));  // the end stays the end
  g.MakeIterator("c");
  EXPECT_EQ(g.NextInt64s("c", 2), (Elements{{1}}));
  g.MakeIterator("a");  // a new pass of an existing iterator is a new epoch too
  EXPECT_EQ(g.NextInt64s("a", 2), (Elements{{2}}));
}

TEST_F(EpochDatasetOpTest, WithElementsAPlainPassIsOnePairEpochMinusOne) {
  DatasetGraph g;
  Build(&g, /*elements=*/4);
  g.MakeIterator("a");
  g.MakeIterator("c");
  std::vector<TensorPtr> element;
  ASSERT_TRUE(g.GetNext("c", &element));
  ASSERT_EQ(TF_NumDims(element[0].get()), 1);
  EXPECT_EQ(TF_Dim(element[0].get(), 0), 2);
  const auto* pair = static_cast<const int64_t*>(TF_TensorData(element[0].get()));
  EXPECT_EQ(pair[0], 1);
  EXPECT_EQ(pair[1], -1);  // the whole pass, not one position
  EXPECT_FALSE(g.GetNext("c", &element));
  EXPECT_EQ(g.NextInt64s("a", 2), (Elements{{0, -1}}));
}

TEST_F(EpochDatasetOpTest, RestoreGivesTheSavedPassEpochAndPosition) {
  DatasetGraph g;
  Build(&g, /*elements=*/-1);
  g.MakeIterator("a");  // epoch 0
  g.MakeIterator("b");  // epoch 1
  // Before "a"'s element: "b" takes "a"'s epoch, not its own.
  g.Restore("b", "a");
  EXPECT_EQ(g.NextInt64s("b", 2), (Elements{{0}}));
  EXPECT_EQ(g.NextInt64s("a", 2), (Elements{{0}}));
  // After "a"'s element: a fresh pass restored from it is at its end.
  g.MakeIterator("b");
  g.Restore("b", "a");
  std::vector<TensorPtr> element;
  EXPECT_FALSE(g.GetNext("b", &element));
  // Later passes continue after the restored epochs (0, 1, 2 were handed out).
  g.MakeIterator("c");
  EXPECT_EQ(g.NextInt64s("c", 1), (Elements{{3}}));
}

TEST_F(EpochDatasetOpTest, ElementsBelowMinusOneIsAnError) {
  DatasetGraph g;
  Build(&g, /*elements=*/-2);
  ExpectTfError([&] { g.Cardinality(); },
                "elements must be -1 or >= 0, got -2", TF_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
