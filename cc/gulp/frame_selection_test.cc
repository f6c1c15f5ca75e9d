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
  // In FrameSelection's order: mode, has_start, has_stop, start, stop, step.
  return FrameSelection{FrameSelection::Mode::kSlice, has_start, has_stop, start, stop, step};
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

FrameSelection Segments(int64_t num_frames, bool random_offsets = false) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kSegments;
  s.num_frames = num_frames;
  s.random_offsets = random_offsets;
  return s;
}

TEST(FrameSelectionTest, SegmentsAtCentresInEval) {
  FrameSelection s = Segments(4);
  EXPECT_EQ(Select(s, 16), (V{2, 6, 10, 14}));
  EXPECT_EQ(Select(s, 4), (V{0, 1, 2, 3}));
}

TEST(FrameSelectionTest, ShortClipsLoop) {
  FrameSelection s = Segments(5);
  EXPECT_EQ(Select(s, 2), (V{0, 1, 0, 1, 0}));
  V out;
  EXPECT_EQ(SelectFrames(s, 0, 0, &out).code(), StatusCode::kOutOfRange);
}

TEST(FrameSelectionTest, RandomOffsetsStayInTheirSegmentAndFollowTheKey) {
  FrameSelection s = Segments(4, true);
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

FrameSelection Clips(int64_t clip_len, int64_t interval, int64_t num_clips, bool training,
                     int64_t views = 1) {
  FrameSelection s;
  s.mode = FrameSelection::Mode::kClips;
  s.clip_len = clip_len;
  s.frame_interval = interval;
  s.num_clips = num_clips;
  s.random_offsets = training;
  s.views_per_clip = views;
  return s;
}

// mmaction2 1.x test mode, worked by hand: L = 17, clip_len 4, interval 2: the clip spans 7
// frames, max_offset 10; 3 clips at 0, 5, 10; 4 clips at 0, 3.33, 6.67, 10 -> 0, 3, 7, 10; one
// clip at 10 // 2 = 5.
TEST(FrameSelectionTest, TestModeClipsAreMmaction2s) {
  EXPECT_EQ(Select(Clips(4, 2, 3, false), 17),
            (V{0, 2, 4, 6, 5, 7, 9, 11, 10, 12, 14, 16}));
  EXPECT_EQ(Select(Clips(1, 1, 4, false), 11), (V{0, 3, 7, 10}));
  EXPECT_EQ(Select(Clips(4, 2, 1, false), 17), (V{5, 7, 9, 11}));
  // numpy rounds halves to even: max_offset 5 over 3 clips -> 0, 2.5, 5 -> 0, 2, 5.
  EXPECT_EQ(Select(Clips(1, 1, 3, false), 6), (V{0, 2, 5}));
  // A video shorter than the clip: max_offset 0, frames loop.
  EXPECT_EQ(Select(Clips(4, 1, 1, false), 3), (V{0, 1, 2, 0}));
}

TEST(FrameSelectionTest, TrainModeClipsStayInTheirSpans) {
  // L = 40, clip_len 4, interval 2, 3 clips: avg_interval (40 - 8 + 1) // 3 = 11: clip c's
  // offset in [11c, 11c + 11).
  for (uint64_t key = 0; key < 50; ++key) {
    const V f = Select(Clips(4, 2, 3, true), 40, key);
    ASSERT_EQ(f.size(), 12u);
    for (int c = 0; c < 3; ++c) {
      EXPECT_GE(f[4 * c], 11 * c);
      EXPECT_LT(f[4 * c], 11 * c + 11);
      EXPECT_EQ(f[4 * c + 3], f[4 * c] + 6);
    }
  }
  // Too short for a random start (avg_interval 0, L <= clip_len * interval): spread evenly.
  EXPECT_EQ(Select(Clips(4, 2, 2, true), 8, 7), (V{0, 2, 4, 6, 0, 2, 4, 6}));
}

TEST(FrameSelectionTest, ViewsRepeatEachClipsFrames) {
  EXPECT_EQ(Select(Clips(2, 1, 2, false, 3), 10),
            (V{0, 1, 0, 1, 0, 1, 8, 9, 8, 9, 8, 9}));
  V out;
  EXPECT_FALSE(ValidateFrameSelection(Clips(0, 1, 1, false)).ok());
  EXPECT_FALSE(SelectFrames(Clips(2, 1, 1, false), 0, 0, &out).ok());
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
