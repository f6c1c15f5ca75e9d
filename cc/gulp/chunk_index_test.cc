#include "cc/gulp/chunk_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tfg {
namespace gulp {
namespace {

constexpr char kMeta[] =
    R"({"b": {"frame_info": [[0, 1, 8], [8, 0, 4]], "meta_data": [{"label": "dog", "x": 1}]},)"
    R"( "a": {"frame_info": [[12, 3, 8]], "meta_data": []}})";

TEST(ChunkIndexTest, ParsesInStorageOrder) {
  ChunkIndex index;
  Status s = ParseChunkIndex(kMeta, "m.gmeta", "d.gulp", 20, "label", &index);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(index.items.size(), 2u);
  EXPECT_EQ(index.items[0].id, "b");  // file order, not sorted
  EXPECT_EQ(index.items[1].id, "a");
  ASSERT_EQ(index.items[0].frames.size(), 2u);
  EXPECT_EQ(index.items[0].frames[0].jpeg_length(), 7u);
  EXPECT_EQ(index.items[0].frames[1].offset, 8u);
  EXPECT_EQ(index.items[0].meta_json, R"({"label":"dog","x":1})");
  EXPECT_EQ(index.items[0].label_json, R"("dog")");
  EXPECT_EQ(index.items[1].meta_json, "{}");
  EXPECT_EQ(index.items[1].label_json, "");
}

TEST(ChunkIndexTest, TrailingBytesAfterTheLastFrameAreAccepted) {
  // An interrupted append leaves bytes the index does not describe.
  ChunkIndex index;
  EXPECT_TRUE(ParseChunkIndex(kMeta, "m", "d", 1000, "label", &index).ok());
}

TEST(ChunkIndexTest, FramePastTheEndIsDataLossNamingIdAndOffset) {
  ChunkIndex index;
  Status s = ParseChunkIndex(kMeta, "m.gmeta", "d.gulp", 19, "label", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("d.gulp"), std::string::npos);
  EXPECT_NE(s.message().find("'a'"), std::string::npos);
  EXPECT_NE(s.message().find("[12, 20)"), std::string::npos);
}

TEST(ChunkIndexTest, HugeOffsetsDoNotOverflow) {
  ChunkIndex index;
  Status s = ParseChunkIndex(
      R"({"a": {"frame_info": [[18446744073709551615, 0, 8]], "meta_data": []}})",
      "m", "d", 100, "", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
}

TEST(ChunkIndexTest, FramesSharingBytesAreDataLoss) {
  // Writers put frames back to back, so no two share a byte. One id listing
  // the same bytes many times would otherwise size reads and clips far beyond
  // the file; two frames overlapping even within the file mean damage.
  ChunkIndex index;
  Status s = ParseChunkIndex(
      R"({"a": {"frame_info": [[0, 0, 8]], "meta_data": []},)"
      R"( "b": {"frame_info": [[4, 0, 8]], "meta_data": []}})",
      "m.gmeta", "d.gulp", 100, "", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("d.gulp: id 'b' frame 0 at byte offset 4: shares bytes with id "
                             "'a' frame 0 (bytes [0, 8))"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(index.items.empty());
  // Back to back they fit, in any storage order.
  EXPECT_TRUE(ParseChunkIndex(R"({"a": {"frame_info": [[4, 0, 8], [0, 0, 4]], "meta_data": []}})",
                              "m", "d", 12, "", &index)
                  .ok());
}

TEST(ChunkIndexTest, IdListedTwiceIsDataLoss) {
  // Which of the two entries a JSON parser keeps is arbitrary.
  ChunkIndex index;
  Status s = ParseChunkIndex(R"({"a": {"frame_info": [[0, 0, 4]]},)"
                             R"( "a": {"frame_info": [[4, 0, 4]]}})",
                             "m.gmeta", "d", 8, "", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("m.gmeta: id 'a': listed twice"), std::string::npos) << s.message();
}

TEST(ChunkIndexTest, FrameWithoutJpegBytesIsDataLoss) {
  ChunkIndex index;
  for (const char* frame : {"[0, 0, 0]", "[0, 4, 4]", "[0, 5, 4]"}) {
    Status s = ParseChunkIndex(std::string(R"({"a": {"frame_info": [)") + frame + "]}}",
                               "m.gmeta", "d", 8, "", &index);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << frame;
    EXPECT_NE(s.message().find("leaves no JPEG bytes"), std::string::npos) << s.message();
  }
}

TEST(ChunkIndexTest, CheckListsEveryFindingAndReadersStopAtTheFirstError) {
  const std::string text =
      R"({"a": {"frame_info": [[0, 0, 4]], "meta_data": []},)"
      R"( "b": {"frame_info": [[4, 4, 4]], "meta_data": [{}]},)"
      R"( "c": {"frame_info": [], "meta_data": [{}]},)"
      R"( "d": {"frame_info": [[8, 0, 4], [99, 0, 4]], "meta_data": [{}]}})";
  std::vector<Problem> found;
  ChunkIndex index;
  IndexOptions options;
  CheckChunkIndex(text, "m.gmeta", "d.gulp", 20, options, &index, CollectProblems(&found));
  std::vector<std::string> seen;
  for (const Problem& p : found) seen.push_back((p.error ? "E " : "W ") + p.Describe());
  ASSERT_EQ(found.size(), 4u) << ::testing::PrintToString(seen);
  EXPECT_FALSE(found[0].error);  // a: no meta_data
  EXPECT_EQ(found[0].id, "a");
  EXPECT_TRUE(found[1].error);  // b: no JPEG bytes
  EXPECT_EQ(found[1].id, "b");
  EXPECT_FALSE(found[2].error);  // c: no frames
  EXPECT_TRUE(found[3].error);  // d frame 1: past the end
  EXPECT_EQ(found[3].frame, 1);
  ASSERT_EQ(index.items.size(), 2u);  // a and c; b and d are refused
  // A reader stops at b, the first error.
  Status first;
  CheckChunkIndex(text, "m.gmeta", "d.gulp", 20, options, &index, StopAtFirstError(&first));
  EXPECT_NE(first.message().find("id 'b'"), std::string::npos) << first.message();
}

TEST(ChunkIndexTest, UnindexedTrailingBytesAreAWarning) {
  std::vector<Problem> found;
  ChunkIndex index;
  CheckChunkIndex(R"({"a": {"frame_info": [[0, 0, 4]], "meta_data": [{}]}})", "m", "d", 10,
                  IndexOptions(), &index, CollectProblems(&found));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].error);
  EXPECT_NE(found[0].message.find("6 unindexed trailing bytes"), std::string::npos);
  EXPECT_EQ(index.items.size(), 1u);
}

TEST(ChunkIndexTest, ManyIdsParseInLinearTime) {
  // 200,000 ids once took minutes (an ordered object searched per key).
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) {
    if (i) text += ",";
    text += "\"id" + std::to_string(i) + "\": {\"frame_info\": [[" + std::to_string(4 * i) +
            ", 0, 4]], \"meta_data\": [{}]}";
  }
  text += "}";
  ChunkIndex index;
  ASSERT_TRUE(ParseChunkIndex(text, "m", "d", 800000, "", &index).ok());
  ASSERT_EQ(index.items.size(), 200000u);
  EXPECT_EQ(index.items[123456].id, "id123456");  // storage order
}

TEST(ChunkIndexTest, InvalidJsonNamesFileAndByteOffset) {
  ChunkIndex index;
  Status s = ParseChunkIndex(R"({"a": {"frame_info": [[0, 0,)", "meta_3.gmeta",
                             "d", 100, "", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("meta_3.gmeta"), std::string::npos);
  EXPECT_NE(s.message().find("byte offset"), std::string::npos);
}

TEST(ChunkIndexTest, MalformedEntriesAreDataLoss) {
  ChunkIndex index;
  for (const char* bad : {
           R"([1, 2])",
           R"({"a": 5})",
           R"({"a": {"meta_data": []}})",
           R"({"a": {"frame_info": [[0, 0]], "meta_data": []}})",
           R"({"a": {"frame_info": [[-4, 0, 4]], "meta_data": []}})",
           R"({"a": {"frame_info": [[0, 4, 4]], "meta_data": []}})",
           R"({"a": {"frame_info": [], "meta_data": 3}})",
       }) {
    EXPECT_EQ(ParseChunkIndex(bad, "m", "d", 100, "", &index).code(),
              StatusCode::kDataLoss)
        << bad;
  }
}

// Issue 13: these indexes crashed GulpDataset (stack overflow, uncaught
// out_of_range) instead of failing with a status.
TEST(ChunkIndexTest, DeeplyNestedJsonIsDataLossNotAStackOverflow) {
  ChunkIndex index;
  const size_t depth = 300000;
  for (const std::string& text :
       {std::string(depth, '[') + std::string(depth, ']'),
        R"({"a": {"frame_info": [], "meta_data": [)" + std::string(depth, '[') +
            std::string(depth, ']') + "]}}"}) {
    Status s = ParseChunkIndex(text, "meta_0.gmeta", "d", 100, "", &index);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("meta_0.gmeta"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("nested deeper than"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("byte offset"), std::string::npos) << s.message();
  }
}

TEST(ChunkIndexTest, MetaNestedWithinTheLimitStillParses) {
  ChunkIndex index;
  const std::string meta = std::string(900, '[') + std::string(900, ']');
  Status s = ParseChunkIndex(
      R"({"a": {"frame_info": [[0, 0, 4]], "meta_data": [)" + meta + "]}}", "m", "d", 100, "",
      &index);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(index.items[0].meta_json, meta);
}

TEST(ChunkIndexTest, NumberOutOfRangeIsDataLossNotACrash) {
  ChunkIndex index;
  for (const std::string& text :
       {std::string("1e400"),
        std::string(R"({"a": {"frame_info": [[0, 0, 1e400]], "meta_data": []}})"),
        std::string(R"({"a": {"frame_info": [], "meta_data": [{"x": -1e400}]}})")}) {
    Status s = ParseChunkIndex(text, "meta_2.gmeta", "d", 100, "", &index);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << text;
    EXPECT_NE(s.message().find("meta_2.gmeta"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("byte offset"), std::string::npos) << s.message();
  }
}

TEST(ChunkIndexTest, PythonsNanAndInfinityInMetaReadAsWritten) {
  // json.dump(float("nan")) writes NaN (not JSON); gulpio2 writes and reads it.
  ChunkIndex index;
  IndexOptions options;
  options.label_field = "label";
  options.keep_all_meta = true;
  Status first;
  CheckChunkIndex(R"({"a": {"frame_info": [[0, 0, 4]], "meta_data": [{"x": NaN, "s": "NaN",)"
                  R"( "label": -Infinity, "y": [Infinity]}]}})",
                  "m", "d", 4, options, &index, StopAtFirstError(&first));
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(index.items.size(), 1u);
  EXPECT_EQ(index.items[0].meta_json,
            R"({"x":NaN,"s":"NaN","label":-Infinity,"y":[Infinity]})");
  EXPECT_EQ(index.items[0].label_json, "-Infinity");
  // Not a number where a number must be.
  EXPECT_EQ(ParseChunkIndex(R"({"a": {"frame_info": [[NaN, 0, 4]]}})", "m", "d", 4, "", &index)
                .code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
