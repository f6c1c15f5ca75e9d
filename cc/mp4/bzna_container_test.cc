#include "cc/mp4/bzna_container.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cc/testing/mp4_testing.h"

namespace tfg {
namespace mp4 {
namespace {

using testing::Be;
using testing::Mp4Box;
using testing::Mp4FullBox;
using testing::Mp4Trak;
using testing::TestTrack;

constexpr uint64_t kPayloadStart = 24 + 8;  // ftyp (24 bytes) + mdat header

// A container of 3 entries (4-byte samples, int64 targets) whose moov/udta
// holds `split_table` as its bzsp box (none when empty).
std::string Container(const std::string& split_table) {
  std::string payload;
  TestTrack input{"bzna_input", {}, {}};
  TestTrack target{"bzna_target", {}, {}};
  for (int i = 0; i < 3; ++i) {
    input.sizes.push_back(4);
    input.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += "img" + std::to_string(i);
  }
  for (int i = 0; i < 3; ++i) {
    target.sizes.push_back(8);
    target.chunk_offsets.push_back(kPayloadStart + payload.size());
    payload += std::string(8, '\0');
  }
  std::string moov = Mp4FullBox("mvhd", std::string(96, '\0')) + Mp4Trak(input, 1) +
                     Mp4Trak(target, 2);
  if (!split_table.empty()) moov += Mp4Box("udta", Mp4Box("bzsp", split_table));
  const std::string ftyp = Mp4Box("ftyp", std::string("isom") + Be(0, 4) + "bznaisom");
  return ftyp + Mp4Box("mdat", payload) + Mp4Box("moov", moov);
}

Status Index(const std::string& split_table, EntryIndex* index) {
  const std::string bytes = Container(split_table);
  Movie movie;
  TFG_RETURN_IF_ERROR(ParseMovie(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                 "x.bzna", &movie));
  return BuildEntryIndex(movie, index);
}

TEST(BznaContainerTest, SplitsWithinTheEntriesAreAccepted) {
  EntryIndex index;
  ASSERT_TRUE(Index("", &index).ok());
  EXPECT_EQ(index.entries, 3u);
  ASSERT_TRUE(Index(R"({"splits": {"train": [0, 2], "val": [2, 3], "none": [3, 3]}})", &index)
                  .ok());
  ASSERT_TRUE(Index(R"({"classes": ["a"]})", &index).ok());  // no splits: nothing to check
}

TEST(BznaContainerTest, SplitsOutsideTheEntriesAndBadClassesAreDataLossNamingThem) {
  for (const auto& [table, needle] : std::vector<std::pair<std::string, std::string>>{
           {R"({"splits": {"train": [0, 2], "val": [2, 5]}})",
            "x.bzna: split 'val' = [2, 5) in the split table (bzsp box at byte offset "},
           {R"({"splits": {"val": [-1, 2]}})", "split 'val' = [-1, 2)"},
           {R"({"splits": {"val": [2, 1]}})", "split 'val' = [2, 1)"},
           {R"({"splits": {"val": [0, 18446744073709551615]}})", "is not within the file's 3"},
           {R"({"splits": {"val": "0:3"}})", "is not a [start, stop] pair of entry indices"},
           {R"({"splits": {"val": [0, 1.5]}})", "is not a [start, stop] pair"},
           {R"({"splits": {"v\u0000": [0, 9]}})", "split 'v\\x00' = [0, 9)"},
           {R"({"splits": [0, 3]})", "\"splits\" in the split table"},
           {R"({"classes": 5})",
            "x.bzna: \"classes\" in the split table (bzsp box at byte offset "},
           {R"({"classes": ["a", null], "splits": {"val": [0, 3]}})",
            "\"classes\"[1] in the split table (bzsp box at byte offset "},
       }) {
    EntryIndex index;
    const Status s = Index(table, &index);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << table;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace mp4
}  // namespace tfg
