// TfGulp>BznaDataset at the op level, as TensorFlow tests its own dataset kernels: cardinality
// of a split, GetNext (epoch, index, label, sample) to the end of the sequence, and iterator
// save/restore in the middle of a shuffled epoch, through a TensorFlow session
// (dataset_op_harness.h) on a container written here.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cc/testing/mp4_testing.h"
#include "cc/testing/temp_dir.h"
#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

constexpr int kEntries = 6;
// BenzinaDataset's components: epoch, index, label, sample.
const std::vector<TF_DataType> kComponents = {TF_INT64, TF_INT64, TF_INT64, TF_STRING};

std::string Sample(int i) { return "mp4-" + std::to_string(i) + std::string(i, '#'); }

// A container of kEntries entries, sample i Sample(i), target 10 * i (int64 LE).
std::string Container() {
  constexpr uint64_t kPayloadStart = 24 + 8;  // ftyp + mdat header
  std::string payload;
  TestTrack input{"bzna_input", {}, {}};
  TestTrack target{"bzna_target", {}, {}};
  for (int i = 0; i < kEntries; ++i) {
    input.sizes.push_back(Sample(i).size());
    input.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += Sample(i);
  }
  for (int i = 0; i < kEntries; ++i) {
    target.sizes.push_back(8);
    target.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += std::string(1, static_cast<char>(10 * i)) + std::string(7, '\0');
  }
  return Mp4Box("ftyp", std::string("isom") + Be(0, 4) + "bznaisom") + Mp4Box("mdat", payload) +
         Mp4Box("moov", Mp4FullBox("mvhd", std::string(96, '\0')) + Mp4Trak(input, 1) +
                            Mp4Trak(target, 2));
}

class BenzinaDatasetOpTest : public OpLibraryTest {
 protected:
  void SetUp() override {
    OpLibraryTest::SetUp();
    path_ = dir_.Join("data.bzna");
    WriteFile(path_, Container());
  }

  // BznaDataset over entries [start, stop) (shuffled with seed 5), with iterators "a", "b", "c",
  // "b" restorable from "a".
  void Build(DatasetGraph* g, int64_t start, int64_t stop, bool shuffle) {
    const std::vector<std::pair<const char*, int64_t>> ints = {
        {"start", start}, {"stop", stop}, {"seed", 5}};
    g->SetDataset("TfGulp>BznaDataset", {g->StringScalar("path", path_)}, kComponents,
                  [&](TF_OperationDescription* d) {
                    for (const auto& [name, value] : ints) TF_SetAttrInt(d, name, value);
                    TF_SetAttrBool(d, "shuffle", shuffle);
                  });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
  }

  TempDir dir_;
  std::string path_;
};

int64_t Int64(const TensorPtr& t) { return *static_cast<const int64_t*>(TF_TensorData(t.get())); }

TEST_F(BenzinaDatasetOpTest, ASplitInFileOrder) {
  DatasetGraph g;
  Build(&g, 1, 5, /*shuffle=*/false);
  EXPECT_EQ(g.Cardinality(), 4);
  g.MakeIterator("a");
  // (epoch, index, label) and the sample of every element, to the end of the sequence.
  std::vector<std::vector<int64_t>> keys, expected_keys;
  std::vector<std::string> samples, expected_samples;
  std::vector<TensorPtr> element;
  while (g.GetNext("a", &element)) {
    ASSERT_EQ(element.size(), kComponents.size());
    keys.push_back({Int64(element[0]), Int64(element[1]), Int64(element[2])});
    samples.push_back(ScalarString(element[3].get()));
  }
  for (int i = 1; i < 5; ++i) {
    expected_keys.push_back({0, i, 10 * i});  // the first epoch; the entry; its target
    expected_samples.push_back(Sample(i));
  }
  EXPECT_EQ(keys, expected_keys);
  EXPECT_EQ(samples, expected_samples);
  EXPECT_FALSE(g.GetNext("a", &element));  // the end stays the end
}

TEST_F(BenzinaDatasetOpTest, SaveAndRestoreMidEpochContinueTheSameOrder) {
  DatasetGraph g;
  Build(&g, 0, kEntries, /*shuffle=*/true);
  g.MakeIterator("c");
  const std::vector<std::string> whole = g.NextStrings("c", kEntries + 1, /*component=*/3);
  ASSERT_EQ(whole.size(), static_cast<size_t>(kEntries));
  std::vector<std::string> sorted = whole, expected;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < kEntries; ++i) expected.push_back(Sample(i));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);

  g.MakeIterator("a");
  EXPECT_EQ(g.NextStrings("a", 2, 3), std::vector<std::string>(whole.begin(), whole.begin() + 2));
  g.MakeIterator("b");
  g.Restore("b", "a");
  const std::vector<std::string> tail(whole.begin() + 2, whole.end());
  EXPECT_EQ(g.NextStrings("b", kEntries, 3), tail);
  EXPECT_EQ(g.NextStrings("a", kEntries, 3), tail);
}

TEST_F(BenzinaDatasetOpTest, ASplitPastTheFileIsNamed) {
  DatasetGraph g;
  Build(&g, 0, kEntries + 1, /*shuffle=*/false);
  ExpectTfError([&] { g.Cardinality(); },
                path_ + ": the split [0, 7) is past the end of the file (6 entries)",
                TF_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
