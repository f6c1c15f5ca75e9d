#include "cc/mp4/entry_index_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cc/testing/mp4_testing.h"
#include "cc/testing/temp_dir.h"

namespace tfg {
namespace mp4 {
namespace {

using testing::Be;
using testing::Mp4Box;
using testing::Mp4Moov;
using testing::TestTrack;

constexpr uint64_t kPayloadStart = 24 + 8;  // ftyp (24 bytes) + mdat header

// A container of `targets.size()` entries: 4-byte samples, then int64 targets.
std::string Container(const std::vector<int64_t>& targets) {
  std::string payload;
  TestTrack input{"bzna_input", {}, {}};
  TestTrack target{"bzna_target", {}, {}};
  for (size_t i = 0; i < targets.size(); ++i) {
    input.sizes.push_back(4);
    input.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += "img" + std::to_string(i % 10);
  }
  for (int64_t t : targets) {
    target.sizes.push_back(8);
    target.chunk_offsets.push_back(kPayloadStart + payload.size());
    for (int b = 0; b < 8; ++b) payload += static_cast<char>((t >> (8 * b)) & 0xff);
  }
  const std::string ftyp = Mp4Box("ftyp", std::string("isom") + Be(0, 4) + "bznaisom");
  return ftyp + Mp4Box("mdat", payload) + Mp4Moov({input, target});
}

// Moves the file's modification time `seconds` on (file times can be coarser
// than two writes in a test are apart).
void Touch(const std::string& path, int seconds) {
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += seconds;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

TEST(EntryIndexCacheTest, ReadsAFileOnceUntilItChanges) {
  testing::TempDir dir;
  const std::string path = dir.Join("a.bzna");
  testing::WriteFile(path, Container({1, 2, 3}));
  EntryIndexCache cache(4);
  std::shared_ptr<const EntryIndex> first, second, third;
  ASSERT_TRUE(cache.Get(path, &first).ok());
  ASSERT_TRUE(cache.Get(path, &second).ok());
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(cache.reads(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(first->entries, 3u);

  // Rewritten with the same size: its time changed, so it is read again.
  testing::WriteFile(path, Container({7, 8, 9}));
  Touch(path, 5);
  ASSERT_TRUE(cache.Get(path, &third).ok());
  EXPECT_EQ(cache.reads(), 2u);
  EXPECT_NE(third.get(), first.get());
  EXPECT_EQ(third->target_offsets, first->target_offsets);  // same layout, other bytes
}

TEST(EntryIndexCacheTest, ErrorsAreNotCachedAndTheLeastRecentlyUsedGoesFirst) {
  testing::TempDir dir;
  EntryIndexCache cache(2);
  std::shared_ptr<const EntryIndex> index;
  EXPECT_EQ(cache.Get(dir.Join("missing.bzna"), &index).code(), StatusCode::kNotFound);
  const std::string bad = dir.Join("bad.bzna");
  testing::WriteFile(bad, "not an mp4 at all");
  EXPECT_EQ(cache.Get(bad, &index).code(), StatusCode::kDataLoss);
  EXPECT_EQ(cache.Get(bad, &index).code(), StatusCode::kDataLoss);
  EXPECT_EQ(cache.reads(), 0u);

  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    paths.push_back(dir.Join("f" + std::to_string(i) + ".bzna"));
    testing::WriteFile(paths.back(), Container({i}));
    ASSERT_TRUE(cache.Get(paths.back(), &index).ok());
  }
  EXPECT_EQ(cache.reads(), 3u);
  ASSERT_TRUE(cache.Get(paths[2], &index).ok());  // kept
  ASSERT_TRUE(cache.Get(paths[1], &index).ok());  // kept
  EXPECT_EQ(cache.reads(), 3u);
  ASSERT_TRUE(cache.Get(paths[0], &index).ok());  // evicted by the third file
  EXPECT_EQ(cache.reads(), 4u);
}

}  // namespace
}  // namespace mp4
}  // namespace tfg
