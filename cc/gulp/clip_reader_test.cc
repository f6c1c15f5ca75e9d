#include "cc/gulp/clip_reader.h"

#include <gtest/gtest.h>

#include "cc/gulp/gulp_directory.h"
#include "cc/testing/gulp_testing.h"

namespace tfg {
namespace gulp {
namespace {

class ClipReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int f = 0; f < 6; ++f) jpegs_.push_back(testing::MakeJpeg(24, 16, f));
    testing::WriteChunk(dir_.path(), 0,
                        {testing::TestItem{"clip", jpegs_},
                         testing::TestItem{"odd", {testing::MakeJpeg(24, 16, 0),
                                                   testing::MakeJpeg(16, 16, 1)}}});
    ASSERT_TRUE(LoadGulpDirectory(dir_.path(), "", &gd_).ok());
    ASSERT_TRUE(RandomAccessFile::Open(gd_.chunks[0].data_path, &file_).ok());
  }

  testing::TempDir dir_;
  std::vector<std::string> jpegs_;
  GulpDirectory gd_;
  std::unique_ptr<RandomAccessFile> file_;
};

TEST_F(ClipReaderTest, ReadsSelectedFramesInSelectionOrder) {
  const Item& item = gd_.chunks[0].items[0];
  ClipBytes clip;
  ASSERT_TRUE(ReadClip(*file_, item, {4, 1, 2, 1}, &clip).ok());
  ASSERT_EQ(clip.frames.size(), 4u);
  const int64_t expected[] = {4, 1, 2, 1};
  for (size_t k = 0; k < 4; ++k) {
    const auto& span = clip.frames[k];
    EXPECT_EQ(std::string(reinterpret_cast<char*>(clip.buffer.data()) + span.begin,
                          span.length),
              jpegs_[expected[k]]);
  }
  std::string one(jpegs_[3].size(), '\0');
  ASSERT_TRUE(ReadFrame(*file_, item, 3, one.data()).ok());
  EXPECT_EQ(one, jpegs_[3]);
}

TEST_F(ClipReaderTest, DecodesAClipIntoOneBuffer) {
  const Item& item = gd_.chunks[0].items[0];
  ClipBytes clip;
  ASSERT_TRUE(ReadClip(*file_, item, {0, 5}, &clip).ok());
  ClipShape shape;
  jpeg::DecodeOptions options;
  ASSERT_TRUE(ClipDecodedShape(clip, options, "d", "clip", &shape).ok());
  EXPECT_EQ(shape.num_frames, 2);
  EXPECT_EQ(shape.height, 16);
  EXPECT_EQ(shape.width, 24);
  EXPECT_EQ(shape.channels, 3);
  std::vector<uint8_t> out(2 * shape.frame_bytes());
  ASSERT_TRUE(DecodeClip(clip, options, shape, "d", "clip", nullptr, 1, out.data()).ok());
  // Frames differ (seed 0 vs 5).
  EXPECT_NE(std::vector<uint8_t>(out.begin(), out.begin() + shape.frame_bytes()),
            std::vector<uint8_t>(out.begin() + shape.frame_bytes(), out.end()));
}

TEST_F(ClipReaderTest, ClipsOverTheByteLimitAreRefusedNamingTheId) {
  const Item& item = gd_.chunks[0].items[0];
  uint64_t jpeg_bytes = 0;
  for (int f : {0, 1, 1}) jpeg_bytes += item.frames[f].jpeg_length();
  EXPECT_TRUE(CheckClipJpegBytes(item, {0, 1, 1}, jpeg_bytes, "d").ok());
  Status s = CheckClipJpegBytes(item, {0, 1, 1}, jpeg_bytes - 1, "data_0.gulp");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data_0.gulp: id 'clip': the 3 selected frames"),
            std::string::npos)
      << s.message();

  ClipShape shape;
  shape.num_frames = 4;
  shape.height = 16;
  shape.width = 24;
  shape.channels = 3;
  EXPECT_TRUE(CheckClipDecodedBytes(shape, 4 * 16 * 24 * 3, "d", "clip").ok());
  s = CheckClipDecodedBytes(shape, 4 * 16 * 24 * 3 - 1, "data_0.gulp", "clip");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data_0.gulp: id 'clip': 4 frames of 24x16x3"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("nothing was decoded"), std::string::npos);
  shape.num_frames = int64_t{1} << 62;  // no overflow in the product
  EXPECT_FALSE(CheckClipDecodedBytes(shape, ~uint64_t{0}, "d", "clip").ok());
}

TEST_F(ClipReaderTest, FramesOfDifferentSizesAreAnErrorNamingTheFrame) {
  const Item& item = gd_.chunks[0].items[1];
  ClipBytes clip;
  ASSERT_TRUE(ReadClip(*file_, item, {0, 1}, &clip).ok());
  ClipShape shape;
  Status s = ClipDecodedShape(clip, jpeg::DecodeOptions(), "data_0.gulp", "odd", &shape);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'odd' frame 1 at byte offset"), std::string::npos);
}

TEST_F(ClipReaderTest, CorruptJpegNamesFileIdFrameAndOffset) {
  // Overwrite the middle of frame 2 with garbage.
  Item item = gd_.chunks[0].items[0];
  std::string data;
  ASSERT_TRUE(ReadFileToString(gd_.chunks[0].data_path, &data).ok());
  const FrameRef& ref = item.frames[2];
  for (uint64_t i = ref.offset + 2; i < ref.offset + ref.jpeg_length(); ++i) data[i] = 'x';
  testing::WriteFile(gd_.chunks[0].data_path, data);
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(RandomAccessFile::Open(gd_.chunks[0].data_path, &file).ok());
  ClipBytes clip;
  ASSERT_TRUE(ReadClip(*file, item, {2}, &clip).ok());
  ClipShape shape;
  Status s = ClipDecodedShape(clip, jpeg::DecodeOptions(), "data_0.gulp", "clip", &shape);
  if (s.ok()) {
    std::vector<uint8_t> out(shape.frame_bytes());
    s = DecodeClip(clip, jpeg::DecodeOptions(), shape, "data_0.gulp", "clip", nullptr, 1,
                   out.data());
  }
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("data_0.gulp: id 'clip' frame 2 at byte offset " +
                             std::to_string(ref.offset)),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
