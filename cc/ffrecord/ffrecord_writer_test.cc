#include "cc/ffrecord/ffrecord_writer.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>

#include "cc/io/random_access_file.h"
#include "cc/testing/ffrecord_testing.h"
#include "cc/testing/temp_dir.h"

namespace tfg {
namespace ffrecord {
namespace {

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

std::string Slurp(const std::string& path) {
  std::string out;
  EXPECT_TRUE(ReadFileToString(path, &out).ok());
  return out;
}

TEST(FFRecordWriterTest, WritesTheReferenceFixtureByteForByte) {
  testing::TempDir dir;
  const std::string path = dir.Join("three.ffr");
  std::unique_ptr<FFRecordWriter> w;
  ASSERT_TRUE(FFRecordWriter::Create(path, 3, &w).ok());
  ASSERT_TRUE(w->Append("A", 1).ok());
  ASSERT_TRUE(w->Append("BBB", 3).ok());
  ASSERT_TRUE(w->Append("\x00\x01\x02\x03\xff", 5).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(Slurp(path), Slurp("tests/data/ffrecord/three.ffr"));
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"three.ffr"});
}

TEST(FFRecordWriterTest, MatchesIndependentEncodingWithLargeAndEmptyRecords) {
  testing::TempDir dir;
  std::vector<std::string> records = {"", std::string(3 << 20, 'q'), "x", "", std::string(700, 'z')};
  for (int i = 0; i < 2000; ++i) records.push_back(std::string(i % 50, static_cast<char>(i)));
  std::unique_ptr<FFRecordWriter> w;
  ASSERT_TRUE(FFRecordWriter::Create(dir.Join("f.ffr"), records.size(), &w).ok());
  for (const auto& r : records) ASSERT_TRUE(w->Append(r.data(), r.size()).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(Slurp(dir.Join("f.ffr")), testing::BuildFFRecord(records));
}

TEST(FFRecordWriterTest, TooFewRecordsLeavesNoFile) {
  testing::TempDir dir;
  std::unique_ptr<FFRecordWriter> w;
  ASSERT_TRUE(FFRecordWriter::Create(dir.Join("f.ffr"), 3, &w).ok());
  ASSERT_TRUE(w->Append("a", 1).ok());
  EXPECT_EQ(ListDir(dir.path()).size(), 1u);  // the temporary file
  Status s = w->Finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("1 records were written but 3 were promised"), std::string::npos);
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(FFRecordWriterTest, TooManyRecordsIsRefusedWithoutWriting) {
  testing::TempDir dir;
  std::unique_ptr<FFRecordWriter> w;
  ASSERT_TRUE(FFRecordWriter::Create(dir.Join("f.ffr"), 1, &w).ok());
  ASSERT_TRUE(w->Append("a", 1).ok());
  EXPECT_EQ(w->Append("b", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->count(), 1);
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(Slurp(dir.Join("f.ffr")), testing::BuildFFRecord({"a"}));
}

TEST(FFRecordWriterTest, AbandonedWriterLeavesNothingAndKeepsAnOldFile) {
  testing::TempDir dir;
  testing::WriteFile(dir.Join("f.ffr"), "old contents");
  {
    std::unique_ptr<FFRecordWriter> w;
    ASSERT_TRUE(FFRecordWriter::Create(dir.Join("f.ffr"), 2, &w).ok());
    ASSERT_TRUE(w->Append("a", 1).ok());
    ASSERT_TRUE(w->Append("b", 1).ok());
  }  // destroyed without Finish
  EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"f.ffr"});
  EXPECT_EQ(Slurp(dir.Join("f.ffr")), "old contents");
}

// A writer killed mid-file leaves its temporary file (unlocked: its process
// is gone); the next writer of the same path removes it, but never the file
// of a writer that is still running, nor files of other names.
TEST(FFRecordWriterTest, NextWriterRemovesTemporariesOfDeadWritersOnly) {
  testing::TempDir dir;
  const std::string path = dir.Join("f.ffr");
  testing::WriteFile(path + ".tmp-deadbeef", "left by a killed writer");
  testing::WriteFile(path + ".tmp-short", "not a writer's name");
  testing::WriteFile(path + ".tmp-NOT_OURS", "not a writer's name either");
  testing::WriteFile(dir.Join("g.ffr.tmp-deadbeef"), "another file's");
  std::unique_ptr<FFRecordWriter> live;
  ASSERT_TRUE(FFRecordWriter::Create(path, 1, &live).ok());
  std::vector<std::string> names = ListDir(dir.path());
  std::sort(names.begin(), names.end());
  const std::string live_name = live->temp_path().substr(dir.path().size() + 1);
  std::vector<std::string> expected = {"f.ffr.tmp-NOT_OURS", "f.ffr.tmp-short", live_name,
                                       "g.ffr.tmp-deadbeef"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
  std::unique_ptr<FFRecordWriter> second;
  ASSERT_TRUE(FFRecordWriter::Create(path, 1, &second).ok());
  EXPECT_EQ(::access(live->temp_path().c_str(), F_OK), 0) << "a live writer's file was removed";
  ASSERT_TRUE(live->Append("a", 1).ok());
  ASSERT_TRUE(live->Finish().ok());
  ASSERT_TRUE(second->Append("b", 1).ok());
  ASSERT_TRUE(second->Finish().ok());
  names = ListDir(dir.path());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"f.ffr", "f.ffr.tmp-NOT_OURS", "f.ffr.tmp-short",
                                             "g.ffr.tmp-deadbeef"}));
}

TEST(FFRecordWriterTest, BadArguments) {
  testing::TempDir dir;
  std::unique_ptr<FFRecordWriter> w;
  EXPECT_EQ(FFRecordWriter::Create(dir.Join("f.ffr"), -1, &w).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FFRecordWriter::Create(dir.path(), 1, &w).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FFRecordWriter::Create(dir.Join("no/such/dir.ffr"), 1, &w).code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(FFRecordWriter::Create(dir.Join("zero.ffr"), 0, &w).ok());
  ASSERT_TRUE(w->Finish().ok());
  EXPECT_EQ(Slurp(dir.Join("zero.ffr")), testing::BuildFFRecord({}));
}

// A write the file system refuses (here: past RLIMIT_FSIZE, EFBIG, as a full disk
// gives ENOSPC) reports its errno, so that Python raises the matching OSError
// and names the output, and leaves no file behind.
TEST(FFRecordWriterTest, AFailedWriteReportsItsErrnoAndLeavesNoFile) {
  testing::TempDir dir;
  std::unique_ptr<FFRecordWriter> w;
  ASSERT_TRUE(FFRecordWriter::Create(dir.Join("big.ffr"), 2, &w).ok());
  ASSERT_TRUE(w->Append("small", 5).ok());
  EXPECT_EQ(w->os_errno(), 0);
  const std::string record(8192, 'x');
  ASSERT_TRUE(w->Append(record.data(), record.size()).ok());  // buffered: nothing written yet

  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const Status s = w->Finish();
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_FALSE(s.ok());
  EXPECT_EQ(w->os_errno(), EFBIG) << s.message();
  EXPECT_NE(s.message().find("File too large"), std::string::npos) << s.message();
  EXPECT_FALSE(w->open());
  EXPECT_TRUE(ListDir(dir.path()).empty());
  // A later misuse is not a system error.
  EXPECT_EQ(w->Append("x", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->os_errno(), 0);

  int err = 0;
  EXPECT_EQ(FFRecordWriter::Create(dir.Join("no/such/dir.ffr"), 1, &w, &err).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(err, ENOENT);
}

}  // namespace
}  // namespace ffrecord
}  // namespace tfg
