#include "cc/gulp/frame_selection.h"

#include <gtest/gtest.h>

namespace tfg {
namespace gulp {
namespace {

using V = std::vector<int64_t>;

V Select(const FrameSelection& s, int64_t t, uint64_t key = 0) {
  V out;
  Status status = SelectFrames(s, t, key, &out);
  EXPECT_TRUE(status.ok()) << status.message();
  return out;
}

FrameSelection Slice(bool has_start, int64_t start, bool has_stop, int64_t stop,
                     int64_t step) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSlice;
  s.has_start = has_start;
  s.start = start;
  s.has_stop = has_stop;
  s.stop = stop;
  s.step = step;
  return s;
}

TEST(FrameSelectionTest, AllFrames) {
  EXPECT_EQ(Select(FrameSelection(), 4), (V{0, 1, 2, 3}));
}

TEST(FrameSelectionTest, SlicesFollowPython) {
  EXPECT_EQ(Select(Slice(true, 1, true, 5, 2), 10), (V{1, 3}));
  EXPECT_EQ(Select(Slice(false, 0, false, 0, -1), 4), (V{3, 2, 1, 0}));
  EXPECT_EQ(Select(Slice(true, -3, false, 0, 1), 5), (V{2, 3, 4}));
  EXPECT_EQ(Select(Slice(true, 2, true, 100, 1), 4), (V{2, 3}));
  EXPECT_EQ(Select(Slice(true, 8, true, 9, 1), 4), (V{}));
  EXPECT_EQ(Select(Slice(true, -100, true, 2, 1), 4), (V{0, 1}));
  EXPECT_EQ(Select(Slice(true, 5, true, -100, -2), 4), (V{3, 1}));
}

TEST(FrameSelectionTest, IndicesWithNegativesAndRangeErrors) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kIndices;
  s.indices = {0, -1, 2};
  EXPECT_EQ(Select(s, 5), (V{0, 4, 2}));
  V out;
  EXPECT_EQ(SelectFrames(s, 2, 0, &out).code(), StatusCode::kOutOfRange);
}

TEST(FrameSelectionTest, SegmentsAtCentresInEval) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSegments;
  s.num_frames = 4;
  EXPECT_EQ(Select(s, 16), (V{2, 6, 10, 14}));
  EXPECT_EQ(Select(s, 4), (V{0, 1, 2, 3}));
}

TEST(FrameSelectionTest, ShortClipsLoop) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSegments;
  s.num_frames = 5;
  EXPECT_EQ(Select(s, 2), (V{0, 1, 0, 1, 0}));
  V out;
  EXPECT_EQ(SelectFrames(s, 0, 0, &out).code(), StatusCode::kOutOfRange);
}

TEST(FrameSelectionTest, RandomOffsetsStayInTheirSegmentAndFollowTheKey) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSegments;
  s.num_frames = 4;
  s.random_offsets = true;
  bool differs = false;
  V first = Select(s, 40, 1);
  for (uint64_t key = 1; key < 50; ++key) {
    V frames = Select(s, 40, key);
    for (int i = 0; i < 4; ++i) {
      EXPECT_GE(frames[i], 10 * i);
      EXPECT_LT(frames[i], 10 * (i + 1));
    }
    differs |= frames != first;
    EXPECT_EQ(frames, Select(s, 40, key));  // a function of the key
  }
  EXPECT_TRUE(differs);
}

// Lengths that num_frames does not divide. Expectations from the definition
// in exact integer arithmetic: segment i of a T-frame clip is the real
// interval [i T / n, (i + 1) T / n); its centre frame is
// floor((2 i + 1) T / (2 n)), and a random offset picks one of the frames
// floor(i T / n) .. ceil((i + 1) T / n) - 1, each of them for some key.
TEST(FrameSelectionTest, SegmentsOfLengthsThatDoNotDivideEvenly) {
  for (int64_t n : V{2, 3, 4, 7}) {
    for (int64_t t : V{n + 1, 2 * n - 1, 10, 11, 25, 3 * n + 2}) {
      if (t < n || t % n == 0) continue;
      FrameSelection s;
      s.mode = FrameSelection::Mode::kSegments;
      s.num_frames = n;
      V centres;
      for (int64_t i = 0; i < n; ++i) centres.push_back((2 * i + 1) * t / (2 * n));
      EXPECT_EQ(Select(s, t), centres) << t << " frames, " << n << " segments";

      s.random_offsets = true;
      std::vector<std::vector<bool>> seen(n, std::vector<bool>(t, false));
      for (uint64_t key = 0; key < 400; ++key) {
        V frames = Select(s, t, key);
        for (int64_t i = 0; i < n; ++i) seen[i][frames[i]] = true;
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t first = i * t / n, last = ((i + 1) * t + n - 1) / n - 1;
        for (int64_t f = 0; f < t; ++f) {
          EXPECT_EQ(seen[i][f], f >= first && f <= last)
              << "segment " << i << " of " << n << " over " << t << " frames, frame " << f;
        }
      }
    }
  }
}

TEST(FrameSelectionTest, ValidationRejectsBadOptions) {
  EXPECT_FALSE(ValidateFrameSelection(Slice(false, 0, false, 0, 0)).ok());
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSegments;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());
  s.mode = FrameSelection::Mode::kIndices;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
