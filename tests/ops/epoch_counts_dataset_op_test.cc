// TfGulp>EpochCountsDataset at the op level: its input's cardinality and elements unchanged, and
// iterator checkpoints that carry the counts of the epoch counters it names, so that a fresh
// session (a restarted process) restored from one continues the epoch count (matched by the
// counters' position, not their names); bad inputs. Through TensorFlow sessions
// (dataset_op_harness.h) over a RangeDataset, with an EpochDataset sharing the counter to count and
// read the epochs.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cc/testing/temp_dir.h"
#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

constexpr int64_t kRangeEnd = 6;  // the input: 0, 1, ..., 5

class EpochCountsDatasetOpTest : public OpLibraryTest {
 protected:
  // EpochCountsDataset(Range(0, kRangeEnd), epoch_counters=`counters`) with iterators "a", "b",
  // "c" ("b" restorable from "a"); for each counter i, a dataset "epochs<i>" =
  // EpochDataset("pass-key", counter i) with iterators "e<i>_1", "e<i>_2", "e<i>_3".
  void Build(DatasetGraph* g, const std::vector<std::string>& counters) {
    TF_Output range = g->AddRange(kRangeEnd);
    g->SetDataset("TfGulp>EpochCountsDataset", {range}, {TF_INT64},
                  [&](TF_OperationDescription* d) {
                    std::vector<const void*> values;
                    std::vector<size_t> lengths;
                    for (const std::string& c : counters) {
                      values.push_back(c.data());
                      lengths.push_back(c.size());
                    }
                    TF_SetAttrStringList(d, "epoch_counters", values.data(), lengths.data(),
                                         static_cast<int>(counters.size()));
                    DatasetGraph::SetElementSpec(d, {TF_INT64});
                  });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
    for (size_t i = 0; i < counters.size(); ++i) {
      const std::string epochs = "epochs" + std::to_string(i);
      TF_Output key = g->StringScalar(epochs + "_key", "pass-key");
      g->AddDataset(epochs, "TfGulp>EpochDataset", {key}, {TF_INT64},
                    [&](TF_OperationDescription* d) {
                      TF_SetAttrString(d, "epoch_counter", counters[i].data(), counters[i].size());
                    });
      for (int j = 1; j <= 3; ++j) {
        g->AddIterator("e" + std::to_string(i) + "_" + std::to_string(j), epochs);
      }
    }
  }

  // The epoch of a new pass of EpochDataset iterator `name`.
  static int64_t NextEpoch(DatasetGraph* g, const std::string& name) {
    g->MakeIterator(name);
    Int64Elements e = g->NextInt64s(name, 2);
    if (e.size() != 1 || e[0].size() != 1) throw std::logic_error("not one epoch: " + name);
    return e[0][0];
  }

  TempDir dir_;
};

TEST_F(EpochCountsDatasetOpTest, CardinalityAndElementsAreTheInputs) {
  DatasetGraph g;
  Build(&g, {"counter-x"});
  EXPECT_EQ(g.Cardinality(), kRangeEnd);
  g.MakeIterator("a");
  EXPECT_EQ(g.NextInt64s("a", kRangeEnd + 1), RangeElements(0, kRangeEnd));
  std::vector<TensorPtr> element;
  EXPECT_FALSE(g.GetNext("a", &element));  // the end stays the end
}

TEST_F(EpochCountsDatasetOpTest, SaveAndRestoreMidwayInTheSameSession) {
  DatasetGraph g;
  Build(&g, {"counter-x"});
  g.MakeIterator("a");
  EXPECT_EQ(g.NextInt64s("a", 2), RangeElements(0, 2));
  g.MakeIterator("b");
  g.Restore("b", "a");
  EXPECT_EQ(g.NextInt64s("b", kRangeEnd), RangeElements(2, kRangeEnd));
  EXPECT_EQ(g.NextInt64s("a", kRangeEnd), RangeElements(2, kRangeEnd));
}

TEST_F(EpochCountsDatasetOpTest, CheckpointCarriesTheEpochCountsIntoAFreshSession) {
  const std::string checkpoint = dir_.Join("ckpt");
  {
    DatasetGraph g;
    Build(&g, {"counter-x", "counter-y"});
    EXPECT_EQ(NextEpoch(&g, "e0_1"), 0);
    EXPECT_EQ(NextEpoch(&g, "e0_2"), 1);
    EXPECT_EQ(NextEpoch(&g, "e1_1"), 0);  // counter-y counts apart
    g.MakeIterator("a");
    EXPECT_EQ(g.NextInt64s("a", 2), RangeElements(0, 2));
    // No EpochDataset iterator is in "a"'s checkpoint: only EpochCountsDataset carries the counts.
    g.SaveCheckpoint("a", checkpoint);
    EXPECT_EQ(NextEpoch(&g, "e0_3"), 2);  // after the checkpoint: not in it
  }
  // A restarted process: fresh counters under new names, matched by position.
  DatasetGraph g;
  Build(&g, {"counter-x-restarted", "counter-y-restarted"});
  g.MakeIterator("b");
  g.RestoreCheckpoint("b", checkpoint);
  EXPECT_EQ(g.NextInt64s("b", kRangeEnd), RangeElements(2, kRangeEnd));
  EXPECT_EQ(NextEpoch(&g, "e0_1"), 2);
  EXPECT_EQ(NextEpoch(&g, "e1_1"), 1);
}

TEST_F(EpochCountsDatasetOpTest, CheckpointOfAnotherNumberOfCountersIsAnError) {
  const std::string checkpoint = dir_.Join("ckpt");
  {
    DatasetGraph g;
    Build(&g, {"counter-x"});
    g.MakeIterator("a");
    g.SaveCheckpoint("a", checkpoint);
  }
  DatasetGraph g;
  Build(&g, {"counter-x", "counter-y"});
  g.MakeIterator("b");
  ExpectTfError([&] { g.RestoreCheckpoint("b", checkpoint); },
                "carries the epoch counts of 1 tf_gulp datasets, but this pipeline has 2",
                TF_FAILED_PRECONDITION);
}

TEST_F(EpochCountsDatasetOpTest, EmptyCounterNameIsAnError) {
  DatasetGraph g;
  TF_Output range = g.AddDataset(
      "range", "RangeDataset",
      {g.Int64Scalar("start", 0), g.Int64Scalar("stop", 1), g.Int64Scalar("step", 1)}, {TF_INT64},
      [](TF_OperationDescription* d) { DatasetGraph::SetElementSpec(d, {TF_INT64}); });
  g.SetDataset("TfGulp>EpochCountsDataset", {range}, {TF_INT64}, [](TF_OperationDescription* d) {
    const void* values[1] = {""};
    const size_t lengths[1] = {0};
    TF_SetAttrStringList(d, "epoch_counters", values, lengths, 1);
    DatasetGraph::SetElementSpec(d, {TF_INT64});
  });
  ExpectTfError([&] { g.Cardinality(); }, "an epoch counter name is empty", TF_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
