// TfGulp>GulpDataset at the op level, as TensorFlow tests its own dataset kernels: cardinality,
// GetNext (decoded frames, id, label) to the end of the sequence, and iterator save/restore in the
// middle of a shuffled epoch, through a TensorFlow session (dataset_op_harness.h) on a gulp
// directory written here.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cc/testing/gulp_testing.h"
#include "cc/testing/temp_dir.h"
#include "tests/ops/dataset_op_harness.h"

namespace tfg {
namespace testing {
namespace {

constexpr int kWidth = 16, kHeight = 12, kFrames = 2;

// RGB pixels of `jpeg`, decoded by TurboJPEG directly.
std::vector<uint8_t> Decode(const std::string& jpeg) {
  tjhandle handle = tjInitDecompress();
  std::vector<uint8_t> rgb(kWidth * kHeight * 3);
  const int rc = tjDecompress2(handle, reinterpret_cast<const unsigned char*>(jpeg.data()),
                               jpeg.size(), rgb.data(), kWidth, 0, kHeight, TJPF_RGB, TJFLAG_FASTDCT);
  tjDestroy(handle);
  EXPECT_EQ(rc, 0);
  return rgb;
}

// GulpDataset's components: frames, id, label, metadata.
const std::vector<TF_DataType> kComponents = {TF_UINT8, TF_STRING, TF_INT64, TF_STRING};

// GulpDataset's input: the directory as a scalar string (the one-element vector squeezed).
TF_Output Directory(DatasetGraph* g, const std::string& path) {
  TF_OperationDescription* d = TF_NewOperation(g->graph(), "Squeeze", "directory");
  TF_AddInput(d, g->StringVector("directory_vector", {path}));
  TF_SetAttrType(d, "T", TF_STRING);
  Status status;
  TF_Operation* scalar = TF_FinishOperation(d, status.get());
  status.Check("Squeeze");
  return {scalar, 0};
}

class GulpDatasetOpTest : public OpLibraryTest {
 protected:
  void SetUp() override {
    OpLibraryTest::SetUp();
    // Two chunks: ids v0..v2 in chunk 0, v3..v4 in chunk 1; label = the id's number.
    for (int chunk = 0; chunk < 2; ++chunk) {
      std::vector<TestItem> items;
      for (int i = chunk * 3; i < std::min(5, chunk * 3 + 3); ++i) {
        TestItem item;
        item.id = "v" + std::to_string(i);
        for (int f = 0; f < kFrames; ++f) item.jpegs.push_back(MakeJpeg(kWidth, kHeight, i * 10 + f));
        item.meta_json = "{\"label\": " + std::to_string(i) + "}";
        items.push_back(item);
      }
      WriteChunk(dir_.path(), chunk, items);
    }
  }

  // `first_epoch`: the epoch of the first pass. `counter`: the epoch counter that the iterators
  // of the graph share (each graph runs in its own session, whose counter starts at 0); without
  // one, each iterator's dataset counts its own passes (every iterator gets the first epoch).
  void Build(DatasetGraph* g, bool shuffle, int64_t first_epoch = 0,
             const std::string& counter = "") {
    g->SetDataset("TfGulp>GulpDataset", {Directory(g, dir_.path())}, kComponents,
                  [&](TF_OperationDescription* d) {
      TF_SetAttrBool(d, "shuffle", shuffle);
      TF_SetAttrInt(d, "seed", 3);
      TF_SetAttrInt(d, "first_epoch", first_epoch);
      TF_SetAttrString(d, "epoch_counter", counter.data(), counter.size());
    });
    for (const char* name : {"a", "b", "c"}) g->AddIterator(name);
    g->AddRestore("b", "a");
  }

  TempDir dir_;
};

TEST_F(GulpDatasetOpTest, CardinalityAndElementsInChunkOrder) {
  DatasetGraph g;
  Build(&g, /*shuffle=*/false);
  EXPECT_EQ(g.Cardinality(), 5);
  g.MakeIterator("a");
  std::vector<TensorPtr> element;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(g.GetNext("a", &element)) << i;
    ASSERT_EQ(element.size(), kComponents.size());
    EXPECT_EQ(ScalarString(element[1].get()), "v" + std::to_string(i));
    EXPECT_EQ(*static_cast<const int64_t*>(TF_TensorData(element[2].get())), i);
    // Frames: [kFrames, kHeight, kWidth, 3] uint8, each the JPEG as TurboJPEG decodes it with the
    // op's defaults (dct_method "fast", fancy upsampling).
    TF_Tensor* frames = element[0].get();
    ASSERT_EQ(TF_NumDims(frames), 4);
    EXPECT_EQ(TF_Dim(frames, 0), kFrames);
    EXPECT_EQ(TF_Dim(frames, 1), kHeight);
    EXPECT_EQ(TF_Dim(frames, 2), kWidth);
    EXPECT_EQ(TF_Dim(frames, 3), 3);
    const auto* pixels = static_cast<const uint8_t*>(TF_TensorData(frames));
    for (int f = 0; f < kFrames; ++f) {
      EXPECT_EQ(std::vector<uint8_t>(pixels + f * kHeight * kWidth * 3,
                                     pixels + (f + 1) * kHeight * kWidth * 3),
                Decode(MakeJpeg(kWidth, kHeight, i * 10 + f)))
          << "element " << i << " frame " << f;
    }
  }
  EXPECT_FALSE(g.GetNext("a", &element));
}

TEST_F(GulpDatasetOpTest, SaveAndRestoreMidEpochContinueTheSameOrder) {
  DatasetGraph g;
  Build(&g, /*shuffle=*/true);
  g.MakeIterator("c");
  const std::vector<std::string> whole = g.NextStrings("c", 5, /*component=*/1);
  ASSERT_EQ(whole.size(), 5u);
  std::vector<std::string> sorted = whole;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"v0", "v1", "v2", "v3", "v4"}));

  g.MakeIterator("a");
  EXPECT_EQ(g.NextStrings("a", 2, 1), std::vector<std::string>(whole.begin(), whole.begin() + 2));
  g.MakeIterator("b");
  g.Restore("b", "a");
  const std::vector<std::string> tail(whole.begin() + 2, whole.end());
  EXPECT_EQ(g.NextStrings("b", 5, 1), tail);
  EXPECT_EQ(g.NextStrings("a", 5, 1), tail);
}

TEST_F(GulpDatasetOpTest, MissingDirectoryIsNamed) {
  DatasetGraph g;
  g.SetDataset("TfGulp>GulpDataset", {Directory(&g, dir_.Join("nope"))}, kComponents,
               [](TF_OperationDescription*) {});
  ExpectTfError([&] { g.Cardinality(); }, dir_.Join("nope"));
}

// A dataset made to start at epoch 2, checkpointed inside its first pass and restored in a fresh
// session (a restarted process): the rest of that pass and the passes after it are epochs 2, 3, 4
// as in an uninterrupted run (epoch_cursor.h: the restored counter goes on after the restored
// pass, counted from the start epoch). Every other restore test ends inside the restored pass.
TEST_F(GulpDatasetOpTest, PassesAfterARestoredOneAreThoseOfAnUninterruptedRun) {
  std::vector<std::vector<std::string>> uninterrupted;  // epochs 2, 3, ..., 6
  {
    DatasetGraph g;
    Build(&g, /*shuffle=*/true, /*first_epoch=*/2, "passes");
    for (int pass = 0; pass < 5; ++pass) {
      g.MakeIterator("c");
      uninterrupted.push_back(g.NextStrings("c", 6, /*component=*/1));
      ASSERT_EQ(uninterrupted.back().size(), 5u);
    }
  }
  // Epochs 3 and 4 differ from 5 and 6 (what a restore counting without the start epoch gives).
  ASSERT_NE(uninterrupted[1], uninterrupted[3]);
  ASSERT_NE(uninterrupted[2], uninterrupted[4]);
  TempDir checkpoints;
  const std::string checkpoint = checkpoints.Join("iterator");
  {
    DatasetGraph g;
    Build(&g, /*shuffle=*/true, /*first_epoch=*/2, "passes");
    g.MakeIterator("a");
    EXPECT_EQ(g.NextStrings("a", 2, 1),
              std::vector<std::string>(uninterrupted[0].begin(), uninterrupted[0].begin() + 2));
    g.SaveCheckpoint("a", checkpoint);
  }
  DatasetGraph g;
  Build(&g, /*shuffle=*/true, /*first_epoch=*/2, "passes");
  g.MakeIterator("b");
  g.RestoreCheckpoint("b", checkpoint);
  EXPECT_EQ(g.NextStrings("b", 6, 1),
            std::vector<std::string>(uninterrupted[0].begin() + 2, uninterrupted[0].end()));
  g.MakeIterator("c");
  EXPECT_EQ(g.NextStrings("c", 6, 1), uninterrupted[1]);
  g.MakeIterator("c");
  EXPECT_EQ(g.NextStrings("c", 6, 1), uninterrupted[2]);
}

}  // namespace
}  // namespace testing
}  // namespace tfg
