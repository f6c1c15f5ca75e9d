#include "cc/ffrecord/ffrecord_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "cc/io/file_system.h"
#include "cc/testing/ffrecord_testing.h"
#include "cc/testing/memory_file_system.h"
#include "cc/testing/temp_dir.h"

namespace tfg {
namespace ffrecord {
namespace {

const char kFixtures[] = "tests/data/ffrecord/";

std::string Record(int i) {
  std::string r(static_cast<size_t>((i * 7919) % 5000), '\0');
  for (size_t k = 0; k < r.size(); ++k) r[k] = static_cast<char>((k * 13 + i) & 0xff);
  return r;
}

struct Opened {
  std::unique_ptr<FFRecordReader> reader;
  std::unique_ptr<ReadContext> context;
};

Opened Open(const std::vector<std::string>& files, ReaderOptions options = {},
           IoEngine engine = IoEngine::kAuto, int queue_depth = 8) {
  Opened s;
  Status status = FFRecordReader::Open(files, options, &s.reader);
  EXPECT_TRUE(status.ok()) << status.message();
  BatchReaderOptions io;
  io.engine = engine;
  io.queue_depth = queue_depth;
  status = ReadContext::Create(io, &s.context);
  EXPECT_TRUE(status.ok()) << status.message();
  return s;
}

// Reads records `indices`; returns their bytes, or the first error.
Status ReadAll(Opened& s, const std::vector<int64_t>& indices, std::vector<std::string>* out,
               const ReadParallelism& par = {}) {
  std::vector<RecordLocation> locs(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    TFG_RETURN_IF_ERROR(s.reader->Locate(indices[i], &locs[i]));
  }
  out->assign(indices.size(), "");
  std::vector<char*> dsts;
  for (size_t i = 0; i < indices.size(); ++i) {
    (*out)[i].assign(locs[i].length, '\x55');
    dsts.push_back(&(*out)[i][0]);
  }
  std::vector<Status> statuses(indices.size());
  s.reader->Read(s.context.get(), locs.data(), locs.size(), dsts.data(), statuses.data(), par);
  for (const Status& st : statuses) TFG_RETURN_IF_ERROR(st);
  return Status::Ok();
}

TEST(FFRecordReaderTest, ReadsTheReferenceFixtures) {
  Opened s = Open({std::string(kFixtures) + "three.ffr"});
  ASSERT_EQ(s.reader->num_records(), 3);
  std::vector<std::string> got;
  ASSERT_TRUE(ReadAll(s, {2, 0, 1, 2}, &got).ok());
  EXPECT_EQ(got, (std::vector<std::string>{std::string("\x00\x01\x02\x03\xff", 5), "A", "BBB",
                                           std::string("\x00\x01\x02\x03\xff", 5)}));
  EXPECT_EQ(s.reader->record_bytes(), 1u + 3u + 5u);  // "A", "BBB" and the 5 bytes
  // Two files, one index space.
  Opened m = Open({std::string(kFixtures) + "multi/PART_00000.ffr",
                  std::string(kFixtures) + "multi/PART_00001.ffr"});
  EXPECT_EQ(m.reader->num_records(), 40);
  EXPECT_EQ(m.reader->file_start(1), 25);
  RecordLocation loc;
  ASSERT_TRUE(m.reader->Locate(30, &loc).ok());
  EXPECT_EQ(loc.file, 1);
  EXPECT_EQ(loc.local_index, 5);
  std::vector<int64_t> all;
  for (int i = 0; i < 40; ++i) all.push_back(i);
  ASSERT_TRUE(ReadAll(m, all, &got).ok());
  EXPECT_EQ(got[0].size(), 0u);  // the fixture's sample 0 is empty
  EXPECT_EQ(got[1].size(), 37u);
  uint64_t total = 0;
  for (const std::string& record : got) total += record.size();
  EXPECT_EQ(m.reader->record_bytes(), total);  // both files' records, no header
}

TEST(FFRecordReaderTest, SampleChecksumMismatchNamesFileRecordAndOffset) {
  const std::string path = std::string(kFixtures) + "corrupt_sample.ffr";
  Opened s = Open({path});
  std::vector<std::string> got;
  ASSERT_TRUE(ReadAll(s, {0, 2}, &got).ok());
  Status st = ReadAll(s, {0, 1, 2}, &got);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(path + ": record 1 at offset 49"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("checksum mismatch"), std::string::npos);
  // Not checked when check_data is off.
  ReaderOptions unchecked;
  unchecked.check_data = false;
  Opened u = Open({path}, unchecked);
  EXPECT_TRUE(ReadAll(u, {1}, &got).ok());
}

TEST(FFRecordReaderTest, LegacyHeaderGivesAWarningOnlyWhenChecking) {
  Opened s = Open({std::string(kFixtures) + "old_no_meta_crc.ffr"});
  ASSERT_EQ(s.reader->warnings().size(), 1u);
  EXPECT_NE(s.reader->warnings()[0].find("meta_crc == 0"), std::string::npos);
  ReaderOptions unchecked;
  unchecked.check_data = false;
  EXPECT_TRUE(Open({std::string(kFixtures) + "old_no_meta_crc.ffr"}, unchecked)
                  .reader->warnings()
                  .empty());
}

TEST(FFRecordReaderTest, OutOfRangeIndices) {
  Opened s = Open({std::string(kFixtures) + "three.ffr"});
  RecordLocation loc;
  EXPECT_EQ(s.reader->Locate(3, &loc).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.reader->Locate(-1, &loc).code(), StatusCode::kOutOfRange);
}

TEST(FFRecordReaderTest, LocatesABatchAcrossFilesAsOneByOne) {
  Opened m = Open({std::string(kFixtures) + "multi/PART_00000.ffr",
                  std::string(kFixtures) + "multi/PART_00001.ffr"});
  const std::vector<int64_t> indices = {39, 0, 25, 30, 24, 1, 30};
  std::vector<RecordLocation> batch(indices.size());
  ASSERT_TRUE(m.reader->Locate(indices.data(), indices.size(), batch.data()).ok());
  for (size_t i = 0; i < indices.size(); ++i) {
    RecordLocation one;
    ASSERT_TRUE(m.reader->Locate(indices[i], &one).ok());
    EXPECT_EQ(batch[i].index, indices[i]);
    EXPECT_EQ(batch[i].file, indices[i] < 25 ? 0 : 1) << indices[i];
    EXPECT_EQ(batch[i].local_index, indices[i] < 25 ? indices[i] : indices[i] - 25);
    EXPECT_EQ(batch[i].offset, one.offset) << indices[i];
    EXPECT_EQ(batch[i].length, one.length) << indices[i];
    EXPECT_EQ(batch[i].checksum, one.checksum) << indices[i];
  }
  EXPECT_EQ(batch[5].length, 37u);  // the fixture's sample 1 (see ReadsTheReferenceFixtures)
  const std::vector<int64_t> bad = {3, 40, 2};
  const Status st = m.reader->Locate(bad.data(), bad.size(), batch.data());
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("record index 40"), std::string::npos) << st.message();
}

class EngineTest : public ::testing::TestWithParam<std::tuple<IoEngine, bool>> {};

TEST_P(EngineTest, LargeRandomBatchesAcrossFilesMatch) {
  const IoEngine engine = std::get<0>(GetParam());
  const bool direct = std::get<1>(GetParam());
  if (engine == IoEngine::kIoUring && !IoUringAvailable()) GTEST_SKIP() << "no io_uring";
  testing::TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 300; ++i) records.push_back(Record(i));
  records.push_back(std::string(3 << 20, 'x'));  // one large record
  const std::vector<std::string> first(records.begin(), records.begin() + 120);
  const std::vector<std::string> second(records.begin() + 120, records.end());
  testing::WriteFile(dir.Join("a.ffr"), testing::BuildFFRecord(first));
  testing::WriteFile(dir.Join("b.ffr"), testing::BuildFFRecord(second));
  ReaderOptions options;
  options.direct_io = direct;
  options.access = AccessPattern::kRandom;
  std::unique_ptr<FFRecordReader> reader;
  Status st = FFRecordReader::Open({dir.Join("a.ffr"), dir.Join("b.ffr")}, options, &reader);
  if (direct && st.code() == StatusCode::kInvalidArgument) GTEST_SKIP() << st.message();
  ASSERT_TRUE(st.ok()) << st.message();
  Opened s;
  s.reader = std::move(reader);
  BatchReaderOptions io;
  io.engine = engine;
  io.queue_depth = 16;
  ASSERT_TRUE(ReadContext::Create(io, &s.context).ok());
  // A scheduler with real threads: the pread engine reads and large batches
  // verify checksums in parallel.
  std::vector<std::thread> threads;
  std::mutex mu;
  Scheduler schedule = [&](std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(fn));
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<int64_t> indices;
    for (int i = 0; i < 100; ++i) indices.push_back((i * 37 + round * 11) % 300);
    indices.push_back(300);
    std::vector<std::string> got;
    ReadParallelism par;
    if (round == 1) par = {&schedule, 2};
    Status read = ReadAll(s, indices, &got, par);
    ASSERT_TRUE(read.ok()) << read.message();
    for (size_t i = 0; i < indices.size(); ++i) {
      ASSERT_EQ(got[i], records[indices[i]]) << "record " << indices[i];
    }
  }
  for (auto& t : threads) t.join();
}

INSTANTIATE_TEST_SUITE_P(
    Engines, EngineTest,
    ::testing::Combine(::testing::Values(IoEngine::kIoUring, IoEngine::kPread), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<IoEngine, bool>>& info) {
      return std::string(std::get<0>(info.param) == IoEngine::kIoUring ? "IoUring" : "Pread") +
             (std::get<1>(info.param) ? "Direct" : "Buffered");
    });

TEST(FFRecordReaderTest, SlicedParallelReadsReportEachRecordsStatusAtItsIndex) {
  if (!IoUringAvailable()) GTEST_SKIP() << "no io_uring";
  testing::TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 64; ++i) records.push_back(std::string(8192, static_cast<char>('a' + i % 26)));
  std::string bytes = testing::BuildFFRecord(records);
  const size_t corrupt = 12 + 12 * 64 + 8192 * 50 + 17;  // inside record 50
  bytes[corrupt] ^= 1;
  testing::WriteFile(dir.Join("c.ffr"), bytes);
  Opened s = Open({dir.Join("c.ffr")}, {}, IoEngine::kIoUring, 64);
  std::vector<std::thread> threads;
  std::mutex mu;
  Scheduler schedule = [&](std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(fn));
  };
  std::vector<RecordLocation> locs(64);
  std::vector<std::string> out(64, std::string(8192, '\0'));
  std::vector<char*> dsts;
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(s.reader->Locate(63 - i, &locs[i]).ok());
    dsts.push_back(&out[i][0]);
  }
  std::vector<Status> statuses(64);
  s.reader->Read(s.context.get(), locs.data(), 64, dsts.data(), statuses.data(), {&schedule, 4});
  for (auto& t : threads) t.join();
  for (int i = 0; i < 64; ++i) {
    if (63 - i == 50) {
      EXPECT_EQ(statuses[i].code(), StatusCode::kDataLoss);
      EXPECT_NE(statuses[i].message().find("record 50 at offset"), std::string::npos);
    } else {
      EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].message();
      EXPECT_EQ(out[i], records[63 - i]);
    }
  }
}

TEST(FFRecordReaderTest, ReadsAfterCloseFail) {
  Opened s = Open({std::string(kFixtures) + "three.ffr"});
  s.reader->Close();
  EXPECT_TRUE(s.reader->closed());
  std::vector<std::string> got;
  EXPECT_FALSE(ReadAll(s, {0}, &got).ok());
}

TEST(FFRecordReaderTest, ValidateMetadataRecomputesChecksums) {
  Opened s = Open({std::string(kFixtures) + "three.ffr"});
  EXPECT_TRUE(s.reader->ValidateMetadata().ok());
  ReaderOptions unchecked;
  unchecked.check_data = false;
  Opened bad = Open({std::string(kFixtures) + "corrupt_meta.ffr"}, unchecked);
  EXPECT_EQ(bad.reader->ValidateMetadata().code(), StatusCode::kDataLoss);
}

TEST(FFRecordReaderTest, RemoteFilesAreCheckedToo) {
  testing::MemoryFileSystem remote;
  const std::string path = "mem://bucket/corrupt_sample.ffr";
  ASSERT_TRUE(ReadFileToString(std::string(kFixtures) + "corrupt_sample.ffr",
                               &remote.files[path]).ok());
  SetRemoteFileSystem(&remote);
  {
    Opened s = Open({path});
    std::vector<std::string> got;
    ASSERT_TRUE(ReadAll(s, {0, 2}, &got).ok());
    Status st = ReadAll(s, {0, 1, 2}, &got);
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.message();
    EXPECT_NE(st.message().find(path + ": record 1 at offset 49"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("checksum mismatch"), std::string::npos) << st.message();
    ReaderOptions unchecked;
    unchecked.check_data = false;
    Opened u = Open({path}, unchecked);
    EXPECT_TRUE(ReadAll(u, {1}, &got).ok());
  }
  SetRemoteFileSystem(nullptr);
}

}  // namespace
}  // namespace ffrecord
}  // namespace tfg
