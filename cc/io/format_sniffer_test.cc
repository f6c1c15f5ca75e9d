#include "cc/io/format_sniffer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "cc/testing/temp_dir.h"

namespace tfg {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string Le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// An FFRecord file of `n` one-byte records: [crc][n][crc * n][offset * n][records].
std::string FFRecord(uint64_t n) {
  std::string s(4, '\x01');
  s += Le64(n) + std::string(4 * n, '\x02');
  for (uint64_t i = 0; i < n; ++i) s += Le64(12 + 12 * n + i);
  return s + std::string(n, 'r');
}

TEST(FormatSnifferTest, NamesEachFileFormat) {
  TempDir dir;
  WriteFile(dir.Join("a.ffr"), FFRecord(3));
  WriteFile(dir.Join("b.bin"), std::string("\0\0\0\x18" "ftypisom\0\0\0\0bznaisom", 24));
  WriteFile(dir.Join("c.mp4"), std::string("\0\0\0\x18" "ftypisom\0\0\x02\0isomiso2", 24));
  WriteFile(dir.Join("d.jpg"), std::string("\xFF\xD8\xFF\xE0\0\x10JFIF", 10));
  WriteFile(dir.Join("e.png"), std::string("\x89PNG\r\n\x1A\n\0\0\0\x0DIHDR", 16));
  WriteFile(dir.Join("f.rec"), std::string("\x83\xAF\x70\xD1\x0D\x88\x4A\x3F", 8) +
                                   std::string(56, '\0'));
  // TFRecord: length 3, its masked CRC-32C (computed for these 8 bytes), data, data CRC.
  WriteFile(dir.Join("g.tfrecord"), Le64(3) + std::string("\xb0\x99\x49\x0e", 4) + "abc" +
                                        std::string(4, '\0'));
  WriteFile(dir.Join("h.txt"), "hello, not a dataset");
  EXPECT_EQ(SniffPath(dir.Join("a.ffr")), DataFormat::kFFRecordFile);
  EXPECT_EQ(SniffPath(dir.Join("b.bin")), DataFormat::kBenzina);
  EXPECT_EQ(SniffPath(dir.Join("c.mp4")), DataFormat::kVideoFile);
  EXPECT_EQ(SniffPath(dir.Join("d.jpg")), DataFormat::kImageFile);
  EXPECT_EQ(SniffPath(dir.Join("e.png")), DataFormat::kImageFile);
  EXPECT_EQ(SniffPath(dir.Join("f.rec")), DataFormat::kArrayRecord);
  EXPECT_EQ(SniffPath(dir.Join("g.tfrecord")), DataFormat::kTFRecord);
  EXPECT_EQ(SniffPath(dir.Join("h.txt")), DataFormat::kOtherFile);
  EXPECT_EQ(SniffPath(dir.Join("missing")), DataFormat::kMissing);
}

TEST(FormatSnifferTest, NamesEachFolder) {
  TempDir dir;
  EXPECT_EQ(SniffPath(dir.path()), DataFormat::kEmptyFolder);
  mkdir(dir.Join("videos").c_str(), 0755);
  mkdir(dir.Join("videos/cats").c_str(), 0755);
  WriteFile(dir.Join("videos/cats/1.MP4"), "x");
  EXPECT_EQ(SniffPath(dir.Join("videos")), DataFormat::kVideoFolder);
  mkdir(dir.Join("images").c_str(), 0755);
  WriteFile(dir.Join("images/1.jpeg"), "x");
  EXPECT_EQ(SniffPath(dir.Join("images")), DataFormat::kImageFolder);
  mkdir(dir.Join("gulp").c_str(), 0755);
  WriteFile(dir.Join("gulp/data_0.gulp"), "");
  EXPECT_EQ(SniffPath(dir.Join("gulp")), DataFormat::kGulpDirectory);
  mkdir(dir.Join("ffr").c_str(), 0755);
  WriteFile(dir.Join("ffr/PART_00000.ffr"), FFRecord(1));
  EXPECT_EQ(SniffPath(dir.Join("ffr")), DataFormat::kFFRecordDirectory);
}

TEST(FormatSnifferTest, WrongReaderIsNamedWithTheRightOne) {
  TempDir dir;
  WriteFile(dir.Join("x.ffr"), FFRecord(2));
  Status s = CheckReaderFits(dir.Join("x.ffr"), DataReader::kGulp);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), dir.Join("x.ffr") +
                             " is an FFRecord file, not a gulp directory (data_N.gulp + "
                             "meta_N.gmeta): read it with tf_gulp.FFRecordDataset");
  EXPECT_TRUE(CheckReaderFits(dir.Join("x.ffr"), DataReader::kFFRecord).ok());
  // What the sniffer cannot judge is left to the reader's own error.
  WriteFile(dir.Join("y"), "?");
  EXPECT_TRUE(CheckReaderFits(dir.Join("y"), DataReader::kBenzina).ok());
  const Status failure = DataLossError("bad");
  EXPECT_EQ(ExplainOpenFailure(failure, dir.Join("y"), DataReader::kBenzina).message(), "bad");
  EXPECT_NE(ExplainOpenFailure(failure, dir.Join("x.ffr"), DataReader::kBenzina)
                .message()
                .find("read it with tf_gulp.FFRecordDataset"),
            std::string::npos);
}

}  // namespace
}  // namespace tfg
