#include "cc/gulp/element_reader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>

#include "cc/gulp/gulp_directory.h"
#include "cc/testing/gulp_testing.h"

namespace tfg {
namespace gulp {
namespace {

// One chunk: "clip" (4 RGB frames of 24x16) and "mixed" (an RGB frame, then a gray 16x8 one).
class ElementReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    jpegs_ = {testing::MakeJpeg(24, 16, 0), testing::MakeJpeg(24, 16, 1),
              testing::MakeJpeg(24, 16, 2), testing::MakeJpeg(24, 16, 3)};
    const std::string gray = testing::MakeJpeg(16, 8, 1, /*channels=*/1);
    testing::WriteChunk(dir_.path(), 0, {{"clip", jpegs_}, {"mixed", {jpegs_[0], gray}}});
    ASSERT_TRUE(LoadGulpDirectory(dir_.path(), "", &gd_).ok());
    ASSERT_TRUE(RandomAccessFile::Open(gd_.chunks[0].data_path, &file_).ok());
  }

  // A reader of item `i` whose frames are read, ready to decode.
  std::unique_ptr<ElementReader> ReadToDecode(const ElementOptions& options, int i) {
    auto reader = std::make_unique<ElementReader>(options);
    EXPECT_TRUE(reader->Select(item(i), "data_0.gulp", "meta_0.gmeta", 0).ok());
    EXPECT_TRUE(reader->ReadForDecode(*file_).ok());
    return reader;
  }

  const Item& item(int i) const { return gd_.chunks[0].items[i]; }
  ElementOptions Indices(std::vector<int64_t> indices) const {
    ElementOptions o;
    o.selection.mode = FrameSelection::Mode::kIndices;
    o.selection.indices = std::move(indices);
    return o;
  }

  testing::TempDir dir_;
  std::vector<std::string> jpegs_;
  GulpDirectory gd_;
  std::unique_ptr<RandomAccessFile> file_;
};

TEST_F(ElementReaderTest, ReadsJpegsIntoCallerMemoryInSelectionOrder) {
  ElementReader reader(Indices({3, -4, 3}));
  ASSERT_TRUE(reader.Select(item(0), "data_0.gulp", "meta_0.gmeta", 0).ok());
  ASSERT_EQ(reader.num_frames(), 3u);
  std::vector<std::string> out(3);
  std::vector<char*> dst;
  for (size_t k = 0; k < 3; ++k) {
    out[k].resize(reader.jpeg_length(k));
    dst.push_back(out[k].data());
  }
  ASSERT_TRUE(reader.ReadJpegs(*file_, dst.data()).ok());
  EXPECT_EQ(out, (std::vector<std::string>{jpegs_[3], jpegs_[0], jpegs_[3]}));
  EXPECT_EQ(reader.frame(1), 0);
}

TEST_F(ElementReaderTest, AnIndexPastTheClipIsOutOfRangeNamingTheIndexFile) {
  ElementReader reader(Indices({4}));
  const Status s = reader.Select(item(0), "data_0.gulp", "meta_0.gmeta", 0);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message().rfind("meta_0.gmeta: id 'clip': frame index 4", 0), 0u) << s.message();
}

TEST_F(ElementReaderTest, DecodesAClipAsTheDatasetDoes) {
  const std::unique_ptr<ElementReader> decoding = ReadToDecode(ElementOptions(), 0);
  const ElementReader& reader = *decoding;
  ClipShape shape;
  ASSERT_TRUE(reader.ClipShape(&shape).ok());
  EXPECT_EQ(shape.num_frames, 4);
  EXPECT_EQ(shape.height, 16);
  EXPECT_EQ(shape.width, 24);
  ASSERT_TRUE(reader.CheckOutputBytes(shape).ok());
  std::vector<uint8_t> clip(4 * shape.frame_bytes());
  ASSERT_TRUE(reader.Decode(shape, nullptr, 1, clip.data()).ok());
  // Frames apart (the Python readers) decode to the same pixels.
  std::vector<FrameShape> shapes;
  ASSERT_TRUE(reader.FrameShapes(&shapes).ok());
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_EQ(shapes[k].bytes(), shape.frame_bytes());
    std::vector<uint8_t> frame(shapes[k].bytes());
    ASSERT_TRUE(reader.DecodeFrame(k, shapes[k], frame.data()).ok());
    EXPECT_TRUE(std::equal(frame.begin(), frame.end(), clip.begin() + k * frame.size()));
  }
}

// GulpDataset keeps its readers for element after element: a reused reader
// decodes each clip as a fresh one does (a smaller clip after a larger one
// included), and keeps its buffer instead of allocating one per clip.
TEST_F(ElementReaderTest, AReusedReaderDecodesEachClipAsAFreshOneAndKeepsItsBuffer) {
  auto decode = [](const ElementReader& reader) {
    ClipShape shape;
    EXPECT_TRUE(reader.ClipShape(&shape).ok());
    std::vector<uint8_t> clip(shape.num_frames * shape.frame_bytes());
    EXPECT_TRUE(reader.Decode(shape, nullptr, 1, clip.data()).ok());
    return clip;
  };
  const ElementOptions all;
  ElementReader reused(all);
  ASSERT_TRUE(reused.Select(item(0), "data_0.gulp", "meta_0.gmeta", 0).ok());
  ASSERT_TRUE(reused.ReadForDecode(*file_).ok());
  EXPECT_EQ(decode(reused), decode(*ReadToDecode(all, 0)));
  const size_t four_frames = reused.retained_bytes();
  EXPECT_GE(four_frames, item(0).frames[0].jpeg_length() * 4);

  ASSERT_TRUE(reused.Select(item(1), "data_0.gulp", "meta_0.gmeta", 0).ok());
  ASSERT_TRUE(reused.ReadForDecode(*file_).ok());
  std::vector<FrameShape> shapes;
  ASSERT_TRUE(reused.FrameShapes(&shapes).ok());
  ASSERT_EQ(shapes.size(), 2u);  // item 1's two frames, none of item 0's
  const std::unique_ptr<ElementReader> fresh = ReadToDecode(all, 1);
  for (size_t k = 0; k < 2; ++k) {
    std::vector<uint8_t> got(shapes[k].bytes()), want(shapes[k].bytes());
    ASSERT_TRUE(reused.DecodeFrame(k, shapes[k], got.data()).ok());
    ASSERT_TRUE(fresh->DecodeFrame(k, shapes[k], want.data()).ok());
    EXPECT_EQ(got, want) << "frame " << k;
  }
  EXPECT_EQ(reused.retained_bytes(), four_frames);  // kept, not reallocated smaller
}

TEST_F(ElementReaderTest, FramesApartKeepTheirOwnSizeAndColourSpace) {
  ElementOptions options;
  const std::unique_ptr<ElementReader> decoding = ReadToDecode(options, 1);
  const ElementReader& reader = *decoding;
  ClipShape shape;
  EXPECT_EQ(reader.ClipShape(&shape).code(), StatusCode::kInvalidArgument);  // one tensor: no
  std::vector<FrameShape> shapes;
  ASSERT_TRUE(reader.FrameShapes(&shapes).ok());
  EXPECT_EQ(shapes[0].channels, 3);
  EXPECT_EQ(shapes[1].channels, 1);
  EXPECT_EQ(shapes[1].height, 8);
  EXPECT_EQ(shapes[1].width, 16);
  std::vector<uint8_t> gray(shapes[1].bytes());
  EXPECT_TRUE(reader.DecodeFrame(1, shapes[1], gray.data()).ok());

  options.max_clip_bytes = shapes[0].bytes() + shapes[1].bytes() - 1;
  const Status s = ReadToDecode(options, 1)->FrameShapes(&shapes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("data_0.gulp: id 'mixed': 2 frames decode to 1,280 bytes, over "
                             "the limit of 1,279 bytes per clip (max_clip_bytes)"),
            std::string::npos)
      << s.message();
}

TEST_F(ElementReaderTest, AJpegSelectionOverTheLimitIsRefusedBeforeReading) {
  ElementOptions options = Indices({0, 0});
  options.max_clip_bytes = 2 * item(0).frames[0].jpeg_length() - 1;
  ElementReader reader(options);
  const Status s = reader.Select(item(0), "data_0.gulp", "meta_0.gmeta", 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bytes of JPEG data (max_clip_bytes)"), std::string::npos);
}

TEST_F(ElementReaderTest, AFramePastTheEndOfAShrunkFileIsNamed) {
  const FrameRef& last = item(0).frames[3];
  ASSERT_EQ(truncate(gd_.chunks[0].data_path.c_str(), static_cast<off_t>(last.offset + 5)), 0);
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(RandomAccessFile::Open(gd_.chunks[0].data_path, &file).ok());
  for (bool decode : {true, false}) {
    ElementOptions options;
    options.decode = decode;
    ElementReader reader(options);
    ASSERT_TRUE(reader.Select(item(0), "data_0.gulp", "meta_0.gmeta", 0).ok());
    Status s;
    std::vector<std::string> out(4);
    std::vector<char*> dst;
    for (size_t k = 0; k < 4; ++k) {
      out[k].resize(reader.jpeg_length(k));
      dst.push_back(out[k].data());
    }
    s = decode ? reader.ReadForDecode(*file) : reader.ReadJpegs(*file, dst.data());
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("id 'clip' frame 3 at byte offset " + std::to_string(last.offset) +
                               ": offset " + std::to_string(last.offset) + " + length"),
              std::string::npos)
        << s.message();
  }
}

// target_fps reads each video's frame rate from its meta's "fps" (what tf-gulp ingest records):
// 100 frames, clip_len 4, interval 2, target 15 fps, one test clip. At 30 fps the clip spans 16
// frames (max_offset 84, offset 42, frames linspace(0, 15, 4)); without a rate (absent, null,
// 0) it is taken as 15 fps: 8 frames (offset 46, linspace(0, 7, 4)); a rate that is not a
// number is an error naming the index file, the id and the field.
TEST(ElementReaderFpsTest, TargetFpsReadsTheMetasFrameRate) {
  testing::TempDir dir;
  const std::vector<std::string> frames(100, testing::MakeJpeg(8, 8, 0));
  testing::WriteChunk(dir.path(), 0,
                      {{"at30", frames, R"({"fps": 30.0})"},
                       {"absent", frames, R"({"label": "a"})"},
                       {"null", frames, R"({"fps": null})"},
                       {"zero", frames, R"({"fps": 0})"},
                       {"text", frames, R"({"fps": "30"})"},
                       {"negative", frames, R"({"fps": -25})"}});
  GulpDirectory gd;
  ASSERT_TRUE(LoadGulpDirectory(dir.path(), "", &gd).ok());
  ElementOptions o;
  o.selection.mode = FrameSelection::Mode::kClips;
  o.selection.clip_len = 4;
  o.selection.frame_interval = 2;
  o.selection.target_fps = 15;
  auto selected = [&](size_t i) {
    ElementReader reader(o);
    const Status s = reader.Select(gd.chunks[0].items[i], "data_0.gulp", "meta_0.gmeta", 0);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<int64_t> out;
    for (size_t k = 0; k < reader.num_frames(); ++k) out.push_back(reader.frame(k));
    return out;
  };
  EXPECT_EQ(selected(0), (std::vector<int64_t>{42, 47, 52, 57}));
  for (size_t unknown : {1, 2, 3}) {
    EXPECT_EQ(selected(unknown), (std::vector<int64_t>{46, 48, 50, 53})) << unknown;
  }
  for (size_t bad : {4, 5}) {
    ElementReader reader(o);
    const Item& item = gd.chunks[0].items[bad];
    const Status s = reader.Select(item, "data_0.gulp", "meta_0.gmeta", 0);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message().rfind("meta_0.gmeta: id '" + item.id + "': meta field \"fps\"", 0),
              0u)
        << s.message();
  }
  // Without target_fps the meta's rate is not read: the bad ones select as any other.
  o.selection.target_fps = 0;
  ElementReader reader(o);
  EXPECT_TRUE(reader.Select(gd.chunks[0].items[4], "data_0.gulp", "meta_0.gmeta", 0).ok());
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
