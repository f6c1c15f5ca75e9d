#include "cc/mp4/bzna_reader.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "cc/testing/mp4_testing.h"
#include "cc/testing/temp_dir.h"

namespace tfg {
namespace mp4 {
namespace {

using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kPayloadStart = 24 + 8;  // ftyp (24 bytes) + mdat header

// A container of 3 entries: samples "img0", "sample1", "s2" and targets 7,
// -2, then none for entry 2 (a target track shorter than the input track).
std::string Container() {
  std::string payload;
  testing::TestTrack input{"bzna_input", {}, {}};
  testing::TestTrack target{"bzna_target", {}, {}};
  for (const std::string sample : {"img0", "sample1", "s2"}) {
    input.sizes.push_back(sample.size());
    input.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += sample;
  }
  for (const int64_t t : {int64_t{7}, int64_t{-2}}) {
    target.sizes.push_back(8);
    target.chunk_offsets.push_back(kPayloadStart + payload.size());
    for (int k = 0; k < 8; ++k) {
      payload += static_cast<char>((static_cast<uint64_t>(t) >> (8 * k)) & 0xff);
    }
  }
  const std::string moov = testing::Mp4FullBox("mvhd", std::string(96, '\0')) +
                           testing::Mp4Trak(input, 1) + testing::Mp4Trak(target, 2);
  const std::string ftyp =
      testing::Mp4Box("ftyp", std::string("isom") + testing::Be(0, 4) + "bznaisom");
  return ftyp + testing::Mp4Box("mdat", payload) + testing::Mp4Box("moov", moov);
}

// `s` is an error of `code` whose message holds `needle`.
void ExpectError(const Status& s, StatusCode code, const std::string& needle) {
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message() << "\nlacks " << needle;
}

std::string ReadSample(const EntryReader& reader, uint64_t entry, int64_t* target, Status* s) {
  std::string sample(reader.sample_size(entry), '\0');
  *s = reader.Read(entry, sample.data(), target);
  return sample;
}

TEST(BznaReaderTest, ReadsEachEntryByPosition) {
  TempDir dir;
  WriteFile(dir.Join("a.bzna"), Container());
  std::unique_ptr<EntryReader> reader;
  ASSERT_TRUE(EntryReader::Open(dir.Join("a.bzna"), &reader).ok());
  ASSERT_EQ(reader->entries(), 3u);
  Status s;
  int64_t target = 0;
  // Any order: each entry is one positional read.
  EXPECT_EQ(ReadSample(*reader, 2, &target, &s), "s2");
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(target, -1);  // past the end of the target track
  EXPECT_EQ(ReadSample(*reader, 0, &target, &s), "img0");
  EXPECT_EQ(target, 7);
  EXPECT_EQ(ReadSample(*reader, 1, &target, &s), "sample1");
  EXPECT_EQ(target, -2);
  EXPECT_EQ(reader->sample_offset(1), kPayloadStart + 4);
  EXPECT_EQ(reader->Describe(1), dir.Join("a.bzna") + ": sample 1 (byte offset 36)");
}

TEST(BznaReaderTest, AnEntryOutsideTheFileIsInvalidArgument) {
  TempDir dir;
  WriteFile(dir.Join("a.bzna"), Container());
  std::unique_ptr<EntryReader> reader;
  ASSERT_TRUE(EntryReader::Open(dir.Join("a.bzna"), &reader).ok());
  char byte;
  int64_t target;
  const Status s = reader->Read(3, &byte, &target);
  ExpectError(s, StatusCode::kInvalidArgument,
              "a.bzna: entry 3 is outside the file's 3 entries");
}

// The index read from the whole file, the file then cut: the entries that
// lie past the new end are DataLoss naming the file, the entry and the
// offset; the others still read.
TEST(BznaReaderTest, ATruncatedFileIsDataLossNamingFileEntryAndOffset) {
  TempDir dir;
  const std::string bytes = Container();
  Movie movie;
  ASSERT_TRUE(
      ParseMovie(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "a", &movie).ok());
  auto index = std::make_shared<EntryIndex>();
  ASSERT_TRUE(BuildEntryIndex(movie, index.get()).ok());
  const std::string cut = dir.Join("cut.bzna");
  WriteFile(cut, bytes.substr(0, kPayloadStart + 6));  // "img0" and 2 bytes of "sample1"
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(RandomAccessFile::Open(cut, &file).ok());
  const EntryReader reader(std::move(file), index);
  Status s;
  int64_t target = 0;
  ReadSample(reader, 1, &target, &s);
  ExpectError(s, StatusCode::kDataLoss,
              cut + ": sample 1 (byte offset 36): 7 bytes at byte offset 36 run past the end "
                    "of the file (38 bytes)");
  // Entry 0's sample is whole, its target is not.
  ReadSample(reader, 0, &target, &s);
  ExpectError(s, StatusCode::kDataLoss,
              cut + ": target of entry 0: 8 bytes at byte offset 45");
}

TEST(BznaReaderTest, AnIndexOffsetPastTheEndIsDataLoss) {
  TempDir dir;
  const std::string path = dir.Join("a.bzna");
  WriteFile(path, Container());
  auto index = std::make_shared<EntryIndex>();
  index->entries = 1;
  index->offsets = {uint64_t{1} << 40};
  index->sizes = {4};
  index->target_offsets = {-1};
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(RandomAccessFile::Open(path, &file).ok());
  const EntryReader reader(std::move(file), index);
  char sample[4];
  int64_t target;
  const Status s = reader.Read(0, sample, &target);
  ExpectError(s, StatusCode::kDataLoss,
              path + ": sample 0 (byte offset 1099511627776): 4 bytes at byte offset "
                     "1099511627776 run past the end of the file");
}

TEST(BznaReaderTest, AFileOfAnotherFormatIsRefusedWhenOpened) {
  TempDir dir;
  WriteFile(dir.Join("x.bzna"), std::string(64, 'x'));
  std::unique_ptr<EntryReader> reader;
  EXPECT_FALSE(EntryReader::Open(dir.Join("x.bzna"), &reader).ok());
  EXPECT_FALSE(EntryReader::Open(dir.Join("missing.bzna"), &reader).ok());
}

}  // namespace
}  // namespace mp4
}  // namespace tfg
