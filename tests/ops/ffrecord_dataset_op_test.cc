// TfGulp>FFRecordDataset at the op level, as TensorFlow tests its own dataset kernels: cardinality,
// GetNext to the end of the sequence, and iterator save/restore in the middle of a shuffled epoch,
// through a TensorFlow session (dataset_op_harness.h) on FFRecord files written here.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cc/testing/ffrecord_testing.h"
#include "cc/testing/temp_dir.h"
#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

constexpr int kRecords = 13;

std::vector<std::string> Records() {
  std::vector<std::string> records;
  for (int i = 0; i < kRecords; ++i) records.push_back("record-" + std::to_string(i) + std::string(i, 'x'));
  return records;
}

class FFRecordDatasetOpTest : public OpLibraryTest {
 protected:
  void SetUp() override {
    OpLibraryTest::SetUp();
    path_ = dir_.Join("part.ffr");
    WriteFile(path_, BuildFFRecord(Records()));
  }

  // FFRecordDataset over `paths` with `shuffle` (seed 7), and iterators "a", "b", "c", with "b"
  // restorable from "a".
  void Build(DatasetGraph* g, const std::vector<std::string>& paths, bool shuffle) {
    TF_Output files = g->StringVector("paths", paths);
    g->SetDataset("TfGulp>FFRecordDataset", {files}, {TF_STRING}, [&](TF_OperationDescription* d) {
      TF_SetAttrBool(d, "shuffle", shuffle);
      TF_SetAttrInt(d, "seed", 7);
    });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
  }

  TempDir dir_;
  std::string path_;
};

TEST_F(FFRecordDatasetOpTest, CardinalityAndGetNextInFileOrder) {
  DatasetGraph g;
  Build(&g, {path_}, /*shuffle=*/false);
  EXPECT_EQ(g.Cardinality(), kRecords);
  g.MakeIterator("a");
  EXPECT_EQ(g.NextStrings("a", kRecords + 1), Records());
  // The end of the sequence stays the end.
  std::vector<TensorPtr> element;
  EXPECT_FALSE(g.GetNext("a", &element));
}

TEST_F(FFRecordDatasetOpTest, TwoFilesInTheOrderGiven) {
  const std::string second = dir_.Join("second.ffr");
  WriteFile(second, BuildFFRecord({"only"}));
  DatasetGraph g;
  Build(&g, {second, path_}, /*shuffle=*/false);
  EXPECT_EQ(g.Cardinality(), kRecords + 1);
  g.MakeIterator("a");
  std::vector<std::string> expected = {"only"};
  for (const std::string& r : Records()) expected.push_back(r);
  EXPECT_EQ(g.NextStrings("a", kRecords + 2), expected);
}

TEST_F(FFRecordDatasetOpTest, ShuffledEpochIsAPermutation) {
  DatasetGraph g;
  Build(&g, {path_}, /*shuffle=*/true);
  g.MakeIterator("a");
  std::vector<std::string> epoch = g.NextStrings("a", kRecords + 1);
  ASSERT_EQ(epoch.size(), static_cast<size_t>(kRecords));
  EXPECT_NE(epoch, Records());
  std::vector<std::string> sorted = epoch, expected = Records();
  std::sort(sorted.begin(), sorted.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
}

TEST_F(FFRecordDatasetOpTest, SaveAndRestoreMidEpochContinueTheSameOrder) {
  DatasetGraph g;
  Build(&g, {path_}, /*shuffle=*/true);
  g.MakeIterator("c");
  const std::vector<std::string> whole = g.NextStrings("c", kRecords);  // never interrupted
  ASSERT_EQ(whole.size(), static_cast<size_t>(kRecords));

  g.MakeIterator("a");
  const std::vector<std::string> head = g.NextStrings("a", 5);
  EXPECT_EQ(head, std::vector<std::string>(whole.begin(), whole.begin() + 5));
  // "b" gets "a"'s state (an iterator is restored into an initialized one, as tf.train.Checkpoint
  // does); then both go on independently from element 5.
  g.MakeIterator("b");
  EXPECT_EQ(g.NextStrings("b", 1), std::vector<std::string>{whole[0]});
  g.Restore("b", "a");
  const std::vector<std::string> tail(whole.begin() + 5, whole.end());
  EXPECT_EQ(g.NextStrings("b", kRecords), tail);
  EXPECT_EQ(g.NextStrings("a", kRecords), tail);
}

TEST_F(FFRecordDatasetOpTest, MissingFileIsNamed) {
  const std::string missing = dir_.Join("missing.ffr");
  DatasetGraph g;
  Build(&g, {missing}, /*shuffle=*/false);
  ExpectTfError([&] { g.Cardinality(); }, missing);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
