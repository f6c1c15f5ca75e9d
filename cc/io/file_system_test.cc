#include "cc/io/file_system.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cc/testing/memory_file_system.h"
#include "gtest/gtest.h"

namespace tfg {
namespace {

std::string TempDir() {
  char pattern[] = "/tmp/tfg_fs_test_XXXXXX";
  return ::mkdtemp(pattern);
}

TEST(FileSystemTest, SchemesSelectTheFileSystem) {
  EXPECT_TRUE(IsRemotePath("gs://bucket/a"));
  EXPECT_TRUE(IsRemotePath("ram://a"));
  EXPECT_TRUE(IsRemotePath("s3+x.y-z://a"));
  EXPECT_FALSE(IsRemotePath("file:///a"));
  EXPECT_FALSE(IsRemotePath("/a/b"));
  EXPECT_FALSE(IsRemotePath("rel/x://y"));  // '/' is not a scheme character
  EXPECT_FALSE(IsRemotePath("1ab://x"));    // a scheme starts with a letter
  EXPECT_FALSE(IsRemotePath("://x"));
  EXPECT_EQ(LocalPath("file:///a/b"), "/a/b");
  EXPECT_EQ(LocalPath("/a/b"), "/a/b");
  EXPECT_EQ(JoinPath("gs://b/d", "x"), "gs://b/d/x");
  EXPECT_EQ(JoinPath("gs://b/d/", "x"), "gs://b/d/x");
}

TEST(FileSystemTest, LocalStatListAndFileUri) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/a.bin") << "hello";
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  FileInfo info;
  ASSERT_TRUE(StatPath(dir, &info).ok());
  EXPECT_TRUE(info.is_directory);
  ASSERT_TRUE(StatPath("file://" + dir + "/a.bin", &info).ok());
  EXPECT_TRUE(info.is_regular);
  EXPECT_EQ(info.size, 5u);
  ASSERT_TRUE(StatPath(dir + "/fifo", &info).ok());
  EXPECT_FALSE(info.is_regular);
  EXPECT_STREQ(info.kind, "a FIFO (named pipe)");
  EXPECT_EQ(StatPath(dir + "/missing", &info).code(), StatusCode::kNotFound);
  std::vector<std::string> names;
  ASSERT_TRUE(ListDirectory(dir, &names).ok());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a.bin", "fifo", "sub"}));
  std::unique_ptr<RandomAccessFile> file;
  ASSERT_TRUE(RandomAccessFile::Open("file://" + dir + "/a.bin", &file).ok());
  EXPECT_TRUE(file->is_local());
  char buf[5];
  ASSERT_TRUE(file->ReadAt(0, 5, buf).ok());
  EXPECT_EQ(std::string(buf, 5), "hello");
  // A FIFO is refused without blocking, as before.
  EXPECT_EQ(RandomAccessFile::Open(dir + "/fifo", &file).code(), StatusCode::kInvalidArgument);
}

TEST(FileSystemTest, RemotePathsGoToTheRegisteredFileSystemAndReadInParallel) {
  SetRemoteFileSystem(nullptr);
  std::unique_ptr<RandomAccessFile> file;
  const Status missing = RandomAccessFile::Open("mem://x", &file);
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("TensorFlow's file systems"), std::string::npos);

  // 8 reads worth having in flight, each a 5 ms round trip.
  testing::MemoryFileSystem remote(8, std::chrono::milliseconds(5));
  remote.files["mem://x"] = std::string(1000, 'x');
  SetRemoteFileSystem(&remote);
  ASSERT_TRUE(RandomAccessFile::Open("mem://x", &file).ok());
  EXPECT_FALSE(file->is_local());
  EXPECT_EQ(file->size(), 1000u);
  EXPECT_EQ(RandomAccessFile::Open("mem://y", &file).code(), StatusCode::kNotFound);
  ASSERT_TRUE(RandomAccessFile::Open("mem://x", &file).ok());
  std::vector<char> out(1000);
  std::vector<Status> statuses(20);
  ReadInParallel(*file, 20, [&](int64_t i) {
    statuses[i] = file->ReadAt(i * 50, 50, out.data() + i * 50);
  });
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(std::string(out.begin(), out.end()), std::string(1000, 'x'));
  EXPECT_GT(remote.max_in_flight.load(), 1);  // not one round trip after another
  EXPECT_LE(remote.max_in_flight.load(), 8);
  std::string text;
  EXPECT_TRUE(ReadFileToString("mem://x", &text).ok());
  EXPECT_EQ(text.size(), 1000u);
  SetRemoteFileSystem(nullptr);
}

}  // namespace
}  // namespace tfg
