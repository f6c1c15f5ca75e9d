#include "cc/io/batch_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cc/testing/temp_dir.h"

namespace tfg {
namespace {

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 31 + seed * 7 + i / 251) & 0xff);
  return s;
}

// io_uring with and without the page-cache-first copy, and pread.
enum class Mode { kIoUring, kIoUringRingOnly, kPread };

class BatchReaderTest : public ::testing::TestWithParam<Mode> {
 protected:
  IoEngine engine() const { return GetParam() == Mode::kPread ? IoEngine::kPread : IoEngine::kIoUring; }
  void SetUp() override {
    if (engine() == IoEngine::kIoUring && !IoUringAvailable()) {
      GTEST_SKIP() << "io_uring is not available on this machine";
    }
    a_ = Pattern(1 << 20, 1);
    b_ = Pattern(12345, 2);
    testing::WriteFile(dir_.Join("a"), a_);
    testing::WriteFile(dir_.Join("b"), b_);
    fa_ = ::open(dir_.Join("a").c_str(), O_RDONLY);
    fb_ = ::open(dir_.Join("b").c_str(), O_RDONLY);
    ASSERT_GE(fa_, 0);
    ASSERT_GE(fb_, 0);
  }
  void TearDown() override {
    if (fa_ >= 0) ::close(fa_);
    if (fb_ >= 0) ::close(fb_);
  }
  std::unique_ptr<BatchReader> Make(int queue_depth) {
    BatchReaderOptions options;
    options.engine = engine();
    options.queue_depth = queue_depth;
    options.page_cache_first = GetParam() == Mode::kIoUring;
    std::unique_ptr<BatchReader> reader;
    Status s = BatchReader::Create(options, &reader);
    EXPECT_TRUE(s.ok()) << s.message();
    return reader;
  }

  testing::TempDir dir_;
  std::string a_, b_;
  int fa_ = -1, fb_ = -1;
};

TEST_P(BatchReaderTest, ReadsManyRangesOfTwoFilesIntoTheirBuffers) {
  // More requests than the queue depth, of many sizes, from two files.
  std::vector<ReadRequest> requests;
  std::vector<std::string> buffers;
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) {
    const bool use_a = i % 3 != 0;
    const std::string& src = use_a ? a_ : b_;
    const uint64_t length = (i * 977) % 9000;
    const uint64_t offset = (static_cast<uint64_t>(i) * 104729) % (src.size() - length);
    buffers.emplace_back(length, '\xee');
    expected.push_back(src.substr(offset, length));
    requests.push_back({use_a ? fa_ : fb_, offset, length, nullptr});
  }
  for (size_t i = 0; i < requests.size(); ++i) requests[i].dst = &buffers[i][0];
  auto reader = Make(16);
  ASSERT_EQ(reader->engine(), engine());
  std::vector<int> calls(requests.size(), 0);
  reader->Read(requests.data(), requests.size(),
               [&](size_t i, const Status& s, uint64_t got) {
                 EXPECT_TRUE(s.ok()) << s.message();
                 EXPECT_EQ(got, requests[i].length);
                 calls[i]++;
               });
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    EXPECT_EQ(buffers[i], expected[i]) << i;
  }
}

TEST_P(BatchReaderTest, ReadingPastTheEndIsDataLossAndOthersStillComplete) {
  std::string good(100, '\0'), bad(100, '\0');
  std::vector<ReadRequest> requests = {
      {fb_, 0, 100, &good[0]},
      {fb_, b_.size() - 40, 100, &bad[0]},
  };
  std::vector<Status> statuses(2);
  std::vector<uint64_t> got(2);
  Make(4)->Read(requests.data(), 2, [&](size_t i, const Status& s, uint64_t n) {
    statuses[i] = s;
    got[i] = n;
  });
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(good, b_.substr(0, 100));
  EXPECT_EQ(statuses[1].code(), StatusCode::kDataLoss);
  EXPECT_NE(statuses[1].message().find("end of file"), std::string::npos) << statuses[1].message();
  EXPECT_NE(statuses[1].message().find("offset " + std::to_string(b_.size() - 40)),
            std::string::npos);
  EXPECT_EQ(got[1], 40u);
}

TEST_P(BatchReaderTest, StopAtEofEndsEarlyWithoutError) {
  std::string buf(4096, '\0');
  ReadRequest r{fb_, 12288, 4096, &buf[0], /*stop_at_eof=*/true};
  Status status = InternalError("not called");
  uint64_t got = 0;
  Make(2)->Read(&r, 1, [&](size_t, const Status& s, uint64_t n) {
    status = s;
    got = n;
  });
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(got, b_.size() - 12288);
  EXPECT_EQ(buf.substr(0, got), b_.substr(12288));
}

TEST_P(BatchReaderTest, ZeroLengthAndBadDescriptor) {
  char c = 0;
  std::vector<ReadRequest> requests = {{fa_, 5, 0, &c}, {-1, 0, 10, &c}};
  std::vector<Status> statuses(2, InternalError("not called"));
  Make(8)->Read(requests.data(), 2, [&](size_t i, const Status& s, uint64_t) { statuses[i] = s; });
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(statuses[1].code(), StatusCode::kDataLoss);
}

TEST_P(BatchReaderTest, ReusableAcrossCalls) {
  auto reader = Make(4);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::string> bufs(10, std::string(1000, '\0'));
    std::vector<ReadRequest> requests;
    for (int i = 0; i < 10; ++i) {
      requests.push_back({fa_, static_cast<uint64_t>(round * 10000 + i * 1000), 1000, &bufs[i][0]});
    }
    reader->Read(requests.data(), requests.size(),
                 [&](size_t, const Status& s, uint64_t) { EXPECT_TRUE(s.ok()); });
    for (int i = 0; i < 10; ++i) EXPECT_EQ(bufs[i], a_.substr(round * 10000 + i * 1000, 1000));
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, BatchReaderTest,
                         ::testing::Values(Mode::kIoUring, Mode::kIoUringRingOnly, Mode::kPread),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           switch (info.param) {
                             case Mode::kIoUring:
                               return std::string("IoUring");
                             case Mode::kIoUringRingOnly:
                               return std::string("IoUringRingOnly");
                             default:
                               return std::string("Pread");
                           }
                         });

TEST(BatchReaderColdTest, ReadsEvictedPagesThroughTheRing) {
  // Pages dropped from the cache: the page-cache-first copy misses (or only
  // partly hits) and the ring reads the rest.
  if (!IoUringAvailable()) GTEST_SKIP() << "no io_uring";
  testing::TempDir dir;
  const std::string data = Pattern(4 << 20, 9);
  testing::WriteFile(dir.Join("f"), data);
  const int fd = ::open(dir.Join("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  BatchReaderOptions options;
  options.engine = IoEngine::kIoUring;
  options.queue_depth = 16;
  std::unique_ptr<BatchReader> reader;
  ASSERT_TRUE(BatchReader::Create(options, &reader).ok());
  for (int round = 0; round < 12; ++round) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    std::vector<std::string> bufs(40, std::string(30000, '\0'));
    std::vector<ReadRequest> requests;
    for (int i = 0; i < 40; ++i) {
      requests.push_back({fd, static_cast<uint64_t>((i * 7 + round) % 130) * 30000 + 5, 30000,
                          &bufs[i][0]});
    }
    int ok = 0;
    reader->Read(requests.data(), requests.size(),
                 [&](size_t, const Status& s, uint64_t) { ok += s.ok(); });
    EXPECT_EQ(ok, 40);
    for (int i = 0; i < 40; ++i) EXPECT_EQ(bufs[i], data.substr(requests[i].offset, 30000));
  }
  ::close(fd);
}

TEST(BatchReaderPreadTest, SpreadsReadsOverTheScheduler) {
  testing::TempDir dir;
  const std::string data = Pattern(100000, 3);
  testing::WriteFile(dir.Join("f"), data);
  const int fd = ::open(dir.Join("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<std::thread> threads;
  std::mutex mu;
  Scheduler schedule = [&](std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(fn));
  };
  BatchReaderOptions options;
  options.engine = IoEngine::kPread;
  options.queue_depth = 4;
  std::unique_ptr<BatchReader> reader;
  ASSERT_TRUE(BatchReader::Create(options, &reader).ok());
  std::vector<std::string> bufs(50, std::string(2000, '\0'));
  std::vector<ReadRequest> requests;
  for (int i = 0; i < 50; ++i) requests.push_back({fd, i * 2000ull, 2000, &bufs[i][0]});
  std::atomic<int> ok{0};
  reader->Read(requests.data(), requests.size(),
               [&](size_t, const Status& s, uint64_t) { ok += s.ok(); }, {&schedule, 4});
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 50);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(bufs[i], data.substr(i * 2000, 2000));
  ::close(fd);
}

TEST(BatchReaderOptionsTest, ValidatesQueueDepthAndEngineNames) {
  std::unique_ptr<BatchReader> reader;
  BatchReaderOptions options;
  options.queue_depth = 0;
  EXPECT_EQ(BatchReader::Create(options, &reader).code(), StatusCode::kInvalidArgument);
  IoEngine engine;
  EXPECT_TRUE(ParseIoEngine("io_uring", &engine).ok());
  EXPECT_EQ(engine, IoEngine::kIoUring);
  EXPECT_EQ(ParseIoEngine("aio", &engine).code(), StatusCode::kInvalidArgument);
  options.queue_depth = 8;
  options.engine = IoEngine::kAuto;
  ASSERT_TRUE(BatchReader::Create(options, &reader).ok());
  EXPECT_EQ(reader->engine(), IoUringAvailable() ? IoEngine::kIoUring : IoEngine::kPread);
}

}  // namespace
}  // namespace tfg
