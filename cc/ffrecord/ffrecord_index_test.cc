#include "cc/ffrecord/ffrecord_index.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cc/testing/ffrecord_testing.h"
#include "cc/testing/temp_dir.h"

namespace tfg {
namespace ffrecord {
namespace {

const char kFixtures[] = "tests/data/ffrecord/";

Status Load(const std::string& path, FileIndex* index, bool verify = true, bool* legacy = nullptr) {
  std::unique_ptr<RandomAccessFile> file;
  TFG_RETURN_IF_ERROR(RandomAccessFile::Open(path, &file));
  return ReadFileIndex(*file, verify, index, legacy);
}

// Writes `bytes` and loads it, expecting data loss whose message has `what`
// and the file name.
void ExpectDataLoss(const std::string& bytes, const std::string& what, bool verify = true) {
  testing::TempDir dir;
  const std::string path = dir.Join("f.ffr");
  testing::WriteFile(path, bytes);
  FileIndex index;
  Status s = Load(path, &index, verify);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.message();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

TEST(FFRecordIndexTest, ReadsTheReferenceFixture) {
  FileIndex index;
  bool legacy = true;
  Status s = Load(std::string(kFixtures) + "three.ffr", &index, true, &legacy);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(legacy);
  EXPECT_EQ(index.num_records, 3);
  EXPECT_EQ(index.file_size, 57u);
  EXPECT_EQ(index.header_bytes(), 48u);
  EXPECT_EQ(index.offsets, (std::vector<uint64_t>{48, 49, 52, 57}));
  EXPECT_EQ(index.length(0), 1u);
  EXPECT_EQ(index.length(2), 5u);
  EXPECT_EQ(index.checksums[0], 0xd3d99e8bu);  // CRC-32 of "A"
}

TEST(FFRecordIndexTest, OldFilesWithoutMetaCrcAreAcceptedAndFlagged) {
  FileIndex index;
  bool legacy = false;
  ASSERT_TRUE(Load(std::string(kFixtures) + "old_no_meta_crc.ffr", &index, true, &legacy).ok());
  EXPECT_TRUE(legacy);
  EXPECT_EQ(index.num_records, 3);
}

TEST(FFRecordIndexTest, CorruptMetaFixtureIsAMetadataChecksumMismatch) {
  FileIndex index;
  Status s = Load(std::string(kFixtures) + "corrupt_meta.ffr", &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("metadata checksum mismatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("offset 0"), std::string::npos) << s.message();
  // Without checking data the corrupt byte (in the checksum table) passes.
  EXPECT_TRUE(Load(std::string(kFixtures) + "corrupt_meta.ffr", &index, false).ok());
}

TEST(FFRecordIndexTest, EmptyFileAndEmptyRecords) {
  testing::TempDir dir;
  testing::WriteFile(dir.Join("e.ffr"), testing::BuildFFRecord({}));
  FileIndex index;
  ASSERT_TRUE(Load(dir.Join("e.ffr"), &index).ok());
  EXPECT_EQ(index.num_records, 0);
  testing::WriteFile(dir.Join("z.ffr"), testing::BuildFFRecord({"", "x", ""}));
  ASSERT_TRUE(Load(dir.Join("z.ffr"), &index).ok());
  EXPECT_EQ(index.length(0), 0u);
  EXPECT_EQ(index.length(2), 0u);
}

TEST(FFRecordIndexTest, ShorterThanTheFixedHeader) {
  ExpectDataLoss("abc", "shorter than the 12-byte header");
}

TEST(FFRecordIndexTest, CountLargerThanTheFileCanHoldAllocatesNothing) {
  std::string bytes = testing::BuildFFRecord({"abc", "def"});
  testing::PutLE<uint64_t>(&bytes, 4, uint64_t{1} << 40);  // 13 TB of header
  ExpectDataLoss(bytes, "record count at offset 4 is 1099511627776");
  testing::PutLE<uint64_t>(&bytes, 4, ~uint64_t{0} >> 1);  // would overflow 12 + 12 N
  ExpectDataLoss(bytes, "more bytes than any file can hold");
  testing::PutLE<int64_t>(&bytes, 4, -5);
  ExpectDataLoss(bytes, "negative record count");
}

TEST(FFRecordIndexTest, TruncatedFile) {
  const std::string bytes = testing::BuildFFRecord({"hello", "world", "!"});
  // Cut inside the table, and inside the records (the last offset then
  // points past the end).
  ExpectDataLoss(bytes.substr(0, 20), "needs 48 bytes of header");
  ExpectDataLoss(bytes.substr(0, 50), "past the end of the file");
}

TEST(FFRecordIndexTest, BadOffsetsNameTheRecordAndWhereTheOffsetIsStored) {
  const std::vector<std::string> recs = {"aa", "bbb", "c"};
  std::string bytes = testing::BuildFFRecord(recs);
  // The file with record `record`'s stored offset set to `offset`, resealed.
  const auto with_offset = [&bytes](int record, int64_t offset) {
    std::string changed = bytes;
    testing::PutLE<int64_t>(&changed, testing::OffsetField(3, record), offset);
    testing::ResealHeader(&changed);
    return changed;
  };
  ExpectDataLoss(with_offset(2, 49),  // < record 1 at 50
                 "record 2: offset 49 (stored at byte 40) is before record 1");
  ExpectDataLoss(with_offset(1, 1000),
                 "record 1: offset 1000 (stored at byte 32) is past the end");
  ExpectDataLoss(with_offset(0, -1), "record 0: offset -1");
  ExpectDataLoss(with_offset(0, 8), "points into the header");
  // Also without verifying the metadata checksum: structure is always checked.
  std::string unsealed = bytes;
  testing::PutLE<uint64_t>(&unsealed, testing::OffsetField(3, 1), 1000);
  ExpectDataLoss(unsealed, "past the end", /*verify=*/false);
  ExpectDataLoss(unsealed, "metadata checksum mismatch", /*verify=*/true);
}

TEST(FFRecordIndexTest, ForeignFile) {
  ExpectDataLoss("\xff\xd8\xff\xe0 this is a JPEG, not an FFRecord file", "not an FFRecord file");
}

TEST(FFRecordIndexTest, TfRecordFileIsNamed) {
  // What tf.io.TFRecordWriter writes for the one record "one record": its length (uint64 LE),
  // the masked CRC-32C of the length, the data, the masked CRC-32C of the data.
  const std::string tfrecord(
      "\x0a\x00\x00\x00\x00\x00\x00\x00\xae\xa3\xbf\x3a"
      "one record\x6c\x2e\x29\xbd",
      26);
  ExpectDataLoss(tfrecord, "is a TFRecord file, not an FFRecord file");
  // One bit off in the length's checksum: not TFRecord framing, the FFRecord message stays.
  std::string other = tfrecord;
  other[8] ^= 1;
  testing::TempDir dir;
  testing::WriteFile(dir.Join("f.ffr"), other);
  FileIndex index;
  const Status s = Load(dir.Join("f.ffr"), &index);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message().find("TFRecord"), std::string::npos) << s.message();
}

TEST(FFRecordIndexTest, ExpandPathsListsDirectoriesSortedAndKeepsFilesAsGiven) {
  testing::TempDir dir;
  ::mkdir(dir.Join("d").c_str(), 0755);
  ::mkdir(dir.Join("d/sub.ffr").c_str(), 0755);  // a directory: skipped
  for (const char* name : {"d/b.ffr", "d/a.ffr", "d/c.txt", "d/B.ffr", "d/x.ffr.tmp-abc", "f"}) {
    testing::WriteFile(dir.Join(name), "");
  }
  std::vector<std::string> files;
  ASSERT_TRUE(ExpandPaths({dir.Join("f"), dir.Join("d")}, &files).ok());
  EXPECT_EQ(files, (std::vector<std::string>{dir.Join("f"), dir.Join("d/B.ffr"),
                                             dir.Join("d/a.ffr"), dir.Join("d/b.ffr")}));
  EXPECT_EQ(ExpandPaths({dir.Join("missing")}, &files).code(), StatusCode::kNotFound);
  ::mkdir(dir.Join("empty").c_str(), 0755);
  EXPECT_EQ(ExpandPaths({dir.Join("empty")}, &files).code(), StatusCode::kNotFound);
  EXPECT_EQ(ExpandPaths({}, &files).code(), StatusCode::kInvalidArgument);
}

TEST(FFRecordIndexTest, ExpandPathsRefusesDanglingLinksAndFifosAmongTheParts) {
  testing::TempDir dir;
  ::mkdir(dir.Join("d").c_str(), 0755);
  testing::WriteFile(dir.Join("d/a.ffr"), "");
  ASSERT_EQ(::symlink(dir.Join("gone.ffr").c_str(), dir.Join("d/b.ffr").c_str()), 0);
  std::vector<std::string> files;
  Status s = ExpandPaths({dir.Join("d")}, &files);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find(dir.Join("d/b.ffr")), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("dangling"), std::string::npos) << s.message();
  ::unlink(dir.Join("d/b.ffr").c_str());
  ASSERT_EQ(::mkfifo(dir.Join("d/c.ffr").c_str(), 0600), 0);
  s = ExpandPaths({dir.Join("d")}, &files);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(dir.Join("d/c.ffr")), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("FIFO"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ffrecord
}  // namespace tfg
