#include "cc/gulp/gulp_directory.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "cc/testing/gulp_testing.h"

namespace tfg {
namespace gulp {
namespace {

using testing::MakeJpeg;
using testing::TempDir;
using testing::TestItem;
using testing::WriteChunk;

// An ingest record (.tf_gulp_ingest.json) of one run; the arguments are its fields
// as JSON text, so a test can also write ones of the wrong type.
std::string IngestRecord(const std::string& first_chunk, const std::string& num_chunks,
                         const std::string& complete) {
  return R"({"format": "tf_gulp ingest record", "runs": [{"first_chunk": )" + first_chunk +
         R"(, "num_chunks": )" + num_chunks + R"(, "complete": )" + complete + "}]}";
}

const std::string kFinishedRecord = IngestRecord("0", "2", "true");

// A scratch directory holding chunk 0: one item "a" of one 8x8 frame, a valid
// directory for a test to break.
struct OneItemDir : TempDir {
  OneItemDir() { WriteChunk(path(), 0, {TestItem{"a", {MakeJpeg(8, 8, 0)}}}); }
};

// Loads `dir` expecting an error with `code` whose message holds `fragment`.
void ExpectLoadFails(const TempDir& dir, StatusCode code, const std::string& fragment) {
  GulpDirectory gd;
  Status s = LoadGulpDirectory(dir.path(), "", &gd);
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
  EXPECT_TRUE(gd.chunks.empty());
}

TEST(GulpDirectoryTest, ChunksInNumericOrder) {
  TempDir dir;
  for (int n : {10, 2, 0, 1}) {
    WriteChunk(dir.path(), n,
               {TestItem{"id" + std::to_string(n), {MakeJpeg(8, 8, n)}}});
  }
  testing::WriteFile(dir.Join("README.txt"), "not a chunk");
  GulpDirectory gd;
  Status s = LoadGulpDirectory(dir.path(), "label", &gd);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(gd.chunks.size(), 4u);
  EXPECT_EQ(gd.chunks[0].items[0].id, "id0");
  EXPECT_EQ(gd.chunks[1].items[0].id, "id1");
  EXPECT_EQ(gd.chunks[2].items[0].id, "id2");
  EXPECT_EQ(gd.chunks[3].items[0].id, "id10");
}

TEST(GulpDirectoryTest, MissingDirectoryIsNotFound) {
  GulpDirectory gd;
  EXPECT_EQ(LoadGulpDirectory("/nonexistent/gulps", "", &gd).code(),
            StatusCode::kNotFound);
}

TEST(GulpDirectoryTest, EmptyDirectoryIsNotFound) {
  TempDir dir;
  ExpectLoadFails(dir, StatusCode::kNotFound, "no gulp chunks");
}

TEST(GulpDirectoryTest, DataWithoutIndexAndNoIngestIsNotFoundNamingTheFile) {
  OneItemDir dir;
  testing::WriteFile(dir.Join("data_1.gulp"), "partial");
  ExpectLoadFails(dir, StatusCode::kNotFound, "data_1.gulp");
  // A finished ingest does not excuse a missing index either.
  testing::WriteFile(dir.Join(".tf_gulp_ingest.json"), kFinishedRecord);
  ExpectLoadFails(dir, StatusCode::kNotFound, "data_1.gulp: chunk has no index file");
}

TEST(GulpDirectoryTest, DataWithoutIndexOfAnUnfinishedIngestIsSkipped) {
  OneItemDir dir;
  testing::WriteFile(dir.Join("data_1.gulp"), "partial");
  testing::WriteFile(dir.Join(".tf_gulp_ingest.json"), IngestRecord("0", "2", "false"));
  GulpDirectory gd;
  Status s = LoadGulpDirectory(dir.path(), "", &gd);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(gd.chunks.size(), 1u);
  EXPECT_NE(gd.chunks[0].meta_path.find("meta_0.gmeta"), std::string::npos);

  // Only unfinished chunks: still no chunk.
  TempDir only_data;
  testing::WriteFile(only_data.Join("data_0.gulp"), "partial");
  testing::WriteFile(only_data.Join(".tf_gulp_ingest.json"), IngestRecord("0", "1", "false"));
  s = LoadGulpDirectory(only_data.path(), "", &gd);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("no gulp chunks"), std::string::npos);
}

TEST(GulpDirectoryTest, HugeChunkCountOfAnUnfinishedIngestAllocatesNothing) {
  // A damaged record claiming 10^15 planned chunks: membership is a range
  // test, so this neither allocates per chunk nor loops over the count.
  OneItemDir dir;
  testing::WriteFile(dir.Join("data_7.gulp"), "partial");
  testing::WriteFile(dir.Join(".tf_gulp_ingest.json"),
                     IngestRecord("5", "1000000000000000", "false"));
  GulpDirectory gd;
  Status s = LoadGulpDirectory(dir.path(), "", &gd);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gd.chunks.size(), 1u);
  // Chunk 4 is before the planned range: not skipped.
  testing::WriteFile(dir.Join("data_4.gulp"), "partial");
  EXPECT_EQ(LoadGulpDirectory(dir.path(), "", &gd).code(), StatusCode::kNotFound);
}

TEST(GulpDirectoryTest, IndexWithoutDataIsNotFoundNamingTheFile) {
  OneItemDir dir;
  GulpDirectory gd;
  testing::WriteFile(dir.Join("meta_2.gmeta"), "{}");
  Status s = LoadGulpDirectory(dir.path(), "", &gd);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("meta_2.gmeta"), std::string::npos);
}

TEST(GulpDirectoryTest, DuplicateIdAcrossChunksNamesBothFiles) {
  TempDir dir;
  WriteChunk(dir.path(), 0, {TestItem{"same", {MakeJpeg(8, 8, 0)}}});
  WriteChunk(dir.path(), 1, {TestItem{"same", {MakeJpeg(8, 8, 1)}}});
  GulpDirectory gd;
  Status s = LoadGulpDirectory(dir.path(), "", &gd);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("meta_0.gmeta"), std::string::npos);
  EXPECT_NE(s.message().find("meta_1.gmeta"), std::string::npos);
}

TEST(LabelTest, ResolvesIntegersStringsAndAbsence) {
  LabelMap labels{{"cat", 0}, {"dog", 1}};
  Item item;
  int64_t label = 99;
  item.label_json = "";
  ASSERT_TRUE(ResolveLabel(item, "m", &labels, &label).ok());
  EXPECT_EQ(label, -1);
  item.label_json = "7";
  ASSERT_TRUE(ResolveLabel(item, "m", nullptr, &label).ok());
  EXPECT_EQ(label, 7);
  item.label_json = "\"dog\"";
  ASSERT_TRUE(ResolveLabel(item, "m", &labels, &label).ok());
  EXPECT_EQ(label, 1);
  item.label_json = "\"cow\"";
  EXPECT_EQ(ResolveLabel(item, "m", &labels, &label).code(),
            StatusCode::kInvalidArgument);
  item.label_json = "\"dog\"";
  EXPECT_EQ(ResolveLabel(item, "m", nullptr, &label).code(),
            StatusCode::kInvalidArgument);
  item.label_json = "1.5";
  EXPECT_EQ(ResolveLabel(item, "m", &labels, &label).code(),
            StatusCode::kInvalidArgument);
}

TEST(LabelTest, LabelsPastInt64AreRefusedNotWrapped) {
  // nlohmann keeps them unsigned; read as int64, 2^64 - 1 was -1 ("no label").
  Item item;
  item.id = "v\x01";
  int64_t label = 99;
  item.label_json = "9223372036854775807";
  ASSERT_TRUE(ResolveLabel(item, "m", nullptr, &label).ok());
  EXPECT_EQ(label, INT64_MAX);
  for (const char* big : {"9223372036854775808", "18446744073709551615"}) {
    item.label_json = big;
    const Status s = ResolveLabel(item, "m", nullptr, &label);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), std::string("m: id 'v\\x01' has label ") + big +
                               ", past the largest int64 label (2^63 - 1)");
  }
  TempDir dir;
  testing::WriteFile(dir.Join("label2idx.json"), R"({"cat": 18446744073709551615})");
  LabelMap labels;
  const Status s = LoadLabelMap(dir.Join("label2idx.json"), &labels);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("index of label 'cat' is 18446744073709551615, past the largest"),
            std::string::npos)
      << s.message();
}

TEST(LabelTest, RequireLabelFieldNamesTheFieldsTheItemsHave) {
  TempDir dir;
  WriteChunk(dir.path(), 0,
             {TestItem{"a", {MakeJpeg(8, 8, 0)}, R"({"label": "x", "caption": "c"})"},
              TestItem{"b", {MakeJpeg(8, 8, 1)}, R"({"idx": 3, "gone": null, "\u0001k": 1})"}});
  GulpDirectory gd;
  ASSERT_TRUE(LoadGulpDirectory(dir.path(), "class", &gd).ok());
  const Status s = RequireLabelField(gd, "class");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Null values do not count; a field name's control bytes are escaped.
  EXPECT_NE(s.message().find(
                R"(: label_field "class": none of the 2 items has it (fields their )"
                R"(meta_data[0] has: "\u0001k", "caption", "idx", "label"); pass one of )"
                R"(those, or label_field=None to read without labels)"),
            std::string::npos)
      << s.message();
  // One item with the field is enough (the others are unlabeled, -1).
  ASSERT_TRUE(LoadGulpDirectory(dir.path(), "idx", &gd).ok());
  EXPECT_TRUE(RequireLabelField(gd, "idx").ok());
  ASSERT_TRUE(LoadGulpDirectory(dir.path(), "gone", &gd).ok());
  EXPECT_EQ(RequireLabelField(gd, "gone").code(), StatusCode::kInvalidArgument);
}

TEST(LabelTest, LoadsLabel2Idx) {
  TempDir dir;
  testing::WriteFile(dir.Join("label2idx.json"), R"({"cat": 0, "dog": 1})");
  LabelMap labels;
  ASSERT_TRUE(LoadLabelMap(dir.Join("label2idx.json"), &labels).ok());
  EXPECT_EQ(labels.at("dog"), 1);
  testing::WriteFile(dir.Join("bad.json"), R"({"cat": "zero"})");
  EXPECT_EQ(LoadLabelMap(dir.Join("bad.json"), &labels).code(),
            StatusCode::kDataLoss);
}

TEST(LabelTest, Label2IdxOutOfRangeOrTooDeepIsDataLossNotACrash) {
  TempDir dir;
  for (const std::string& text :
       {std::string(R"({"cat": 1e400})"), std::string(100000, '[')}) {
    testing::WriteFile(dir.Join("label2idx.json"), text);
    LabelMap labels;
    Status s = LoadLabelMap(dir.Join("label2idx.json"), &labels);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("label2idx.json"), std::string::npos) << s.message();
  }
}

TEST(GulpDirectoryTest, MalformedIngestRecordIsIgnoredNotACrash) {
  // Wrong types (value() would throw), huge numbers, too deep: each reads as
  // "no unfinished ingest", so the unindexed chunk is an error, not a crash.
  for (const std::string& record :
       {IngestRecord("0", "2", R"("no")"), IngestRecord("9223372036854775807", "2", "false"),
        IngestRecord("1e400", "2", "false"), std::string(100000, '[')}) {
    OneItemDir dir;
    testing::WriteFile(dir.Join("data_1.gulp"), "partial");
    testing::WriteFile(dir.Join(".tf_gulp_ingest.json"), record);
    GulpDirectory gd;
    EXPECT_EQ(LoadGulpDirectory(dir.path(), "", &gd).code(), StatusCode::kNotFound) << record;
  }
}

TEST(GulpDirectoryTest, TwoFilesForOneChunkNumberAreRefused) {
  // data_1.gulp and data_01.gulp both claim chunk 1: reading either would
  // silently drop the other's items.
  TempDir dir;
  WriteChunk(dir.path(), 1, {TestItem{"a", {MakeJpeg(8, 8, 0)}}});
  testing::WriteFile(dir.Join("data_01.gulp"), "other");
  ExpectLoadFails(dir, StatusCode::kInvalidArgument,
                  "data_1.gulp: same chunk number as data_01.gulp");
}

TEST(GulpDirectoryTest, ChunkOfAFinishedIngestThatIsMissingIsDataLoss) {
  OneItemDir dir;
  testing::WriteFile(dir.Join(".tf_gulp_ingest.json"), kFinishedRecord);
  ExpectLoadFails(dir, StatusCode::kDataLoss, "meta_1.gmeta: missing");
}

TEST(GulpDirectoryTest, CheckCollectsWarningsReadersIgnore) {
  OneItemDir dir;
  testing::WriteFile(dir.Join("data_1.gulp.tmp"), "interrupted");
  std::vector<Problem> found;
  GulpDirectory gd;
  ChunkScan scan;
  IndexOptions options;
  CheckGulpDirectory(dir.path(), options, &gd, &scan, CollectProblems(&found));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].error);
  EXPECT_NE(found[0].file.find("data_1.gulp.tmp"), std::string::npos);
  ASSERT_EQ(gd.chunks.size(), 1u);
  EXPECT_TRUE(LoadGulpDirectory(dir.path(), "", &gd).ok());
}

TEST(GulpDirectoryTest, EmptyDirectoryIsFineWhenChunksAreNotRequired) {
  TempDir dir;
  GulpDirectory gd;
  IndexOptions options;
  options.require_chunks = false;
  EXPECT_TRUE(LoadGulpDirectory(dir.path(), options, &gd).ok());
  EXPECT_TRUE(gd.chunks.empty());
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
