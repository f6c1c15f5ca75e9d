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

// mmaction2 test mode (clip_len >= 2), worked by hand: L = 17, clip_len 4, interval 2: the clip
// spans 7 frames, max_offset 10; 3 clips at 0, 5, 10; one clip at 10 // 2 = 5.
TEST(FrameSelectionTest, TestModeClipsAreMmaction2s) {
  EXPECT_EQ(Select(Clips(4, 2, 3, false), 17),
            (V{0, 2, 4, 6, 5, 7, 9, 11, 10, 12, 14, 16}));
  EXPECT_EQ(Select(Clips(4, 2, 1, false), 17), (V{5, 7, 9, 11}));
  // numpy rounds halves to even: max_offset 7 - 2 = 5 over 3 clips -> 0, 2.5, 5 -> 0, 2, 5.
  EXPECT_EQ(Select(Clips(2, 1, 3, false), 7), (V{0, 1, 2, 3, 5, 6}));
  // A video shorter than the clip: max_offset 0, frames loop.
  EXPECT_EQ(Select(Clips(4, 1, 1, false), 3), (V{0, 1, 2, 0}));
}

// One test clip sits at max_offset // 2: at odd max_offsets (L = 18: 11 -> 5) a rounding up
// ((max_offset + 1) // 2) moves it by a frame.
TEST(FrameSelectionTest, OneTestClipIsAtHalfTheMaxOffsetRoundedDown) {
  for (int64_t t = 7; t < 40; ++t) {
    const int64_t max_offset = t - 7;  // clip_len 4, interval 2: 7 frames
    EXPECT_EQ(Select(Clips(4, 2, 1, false), t)[0], max_offset / 2) << t << " frames";
  }
  EXPECT_EQ(Select(Clips(4, 2, 1, false), 18), (V{5, 7, 9, 11}));
}

// clip_len 1 in test mode is TSN/TSM's rule (SampleFrames' "2D recognizer" branch): segment
// centres, avg = L / num_clips, offsets i * avg + avg / 2 truncated; the worked cases.
TEST(FrameSelectionTest, TestModeSingleFrameClipsAreSegmentCentres) {
  EXPECT_EQ(Select(Clips(1, 1, 4, false), 30), (V{3, 11, 18, 26}));
  EXPECT_EQ(Select(Clips(1, 1, 4, false), 11), (V{1, 4, 6, 9}));
  V tsn;  // 300 frames, 25 clips: avg 12, centres at 6, 18, ..., 294
  for (int64_t i = 0; i < 25; ++i) tsn.push_back(12 * i + 6);
  EXPECT_EQ(Select(Clips(1, 1, 25, false), 300), tsn);
  // The interval does not move a one-frame clip.
  EXPECT_EQ(Select(Clips(1, 4, 4, false), 30), (V{3, 11, 18, 26}));
}

TEST(FrameSelectionTest, TwiceSampleAddsTheSegmentStartsOrDoublesTheClips) {
  FrameSelection s = Clips(1, 1, 4, false);
  s.twice_sample = true;
  EXPECT_EQ(NumClips(s), 8);
  // Centres 3.75, 11.25, 18.75, 26.25, then starts 0, 7.5, 15, 22.5.
  EXPECT_EQ(Select(s, 30), (V{3, 11, 18, 26, 0, 7, 15, 22}));
  // clip_len 4, L = 20, 2 clips: max_offset 16 over 1 gap; 4 offsets 0, 16, 32, 48 (loop).
  s = Clips(4, 1, 2, false);
  s.twice_sample = true;
  EXPECT_EQ(Select(s, 20),
            (V{0, 1, 2, 3, 16, 17, 18, 19, 12, 13, 14, 15, 8, 9, 10, 11}));
}

TEST(FrameSelectionTest, RepeatLastRepeatsTheClipsLastFrameInTheVideo) {
  // L = 5, clip_len 4, interval 2: frames 0, 2, 4, 6; 6 is past the end.
  FrameSelection s = Clips(4, 2, 1, false);
  EXPECT_EQ(Select(s, 5), (V{0, 2, 4, 1}));
  s.out_of_bound = FrameSelection::OutOfBound::kRepeatLast;
  EXPECT_EQ(Select(s, 5), (V{0, 2, 4, 4}));
  // A clip with no frame inside the video (twice_sample's offsets past the end) takes 0.
  s = Clips(2, 1, 2, false);
  s.twice_sample = true;
  s.out_of_bound = FrameSelection::OutOfBound::kRepeatLast;
  // L = 6: max_offset 4, offsets 0, 4, 8, 12.
  EXPECT_EQ(Select(s, 6), (V{0, 1, 4, 5, 0, 0, 0, 0}));
}

TEST(FrameSelectionTest, KeepTailFramesDrawsFromRealValuedSpans) {
  // L = 12, clip_len 4, interval 2 (8 frames), 2 clips: avg 2.5; clip 0 at trunc([0, 2.5)),
  // clip 1 at trunc(2.5 + [0, 2.5)). Without keep_tail_frames avg is 5 // 2 = 2.
  for (bool keep : {false, true}) {
    FrameSelection s = Clips(4, 2, 2, true);
    s.keep_tail_frames = keep;
    std::vector<std::vector<bool>> seen(2, std::vector<bool>(12, false));
    for (uint64_t key = 0; key < 300; ++key) {
      const V f = Select(s, 12, key);
      seen[0][f[0]] = seen[1][f[4]] = true;
    }
    for (int64_t o = 0; o < 12; ++o) {
      EXPECT_EQ(seen[0][o], keep ? o <= 2 : o <= 1) << keep << " clip 0 offset " << o;
      EXPECT_EQ(seen[1][o], keep ? o >= 2 && o <= 4 : o >= 2 && o <= 3)
          << keep << " clip 1 offset " << o;
    }
  }
}

TEST(FrameSelectionTest, TemporalJitterMovesEachFrameWithinItsInterval) {
  // L = 40, clip_len 4, interval 3, one test clip: max_offset 30, frames 15, 18, 21, 24, each
  // plus 0, 1 or 2.
  FrameSelection s = Clips(4, 3, 1, false);
  EXPECT_EQ(Select(s, 40, 5), (V{15, 18, 21, 24}));
  s.temporal_jitter = true;
  std::vector<std::vector<bool>> seen(4, std::vector<bool>(3, false));
  for (uint64_t key = 0; key < 200; ++key) {
    const V f = Select(s, 40, key);
    EXPECT_EQ(f, Select(s, 40, key));  // a function of the key
    for (int j = 0; j < 4; ++j) {
      const int64_t moved = f[j] - (15 + 3 * j);
      ASSERT_TRUE(moved >= 0 && moved < 3) << f[j];
      seen[j][moved] = true;
    }
  }
  for (const auto& frame : seen) EXPECT_EQ(frame, (std::vector<bool>{true, true, true}));
  // The clip offsets keep their draws: jitter only adds to them.
  FrameSelection train = Clips(4, 3, 2, true), jittered = train;
  jittered.temporal_jitter = true;
  for (uint64_t key = 0; key < 20; ++key) {
    const V a = Select(train, 40, key), b = Select(jittered, 40, key);
    for (int c = 0; c < 2; ++c) EXPECT_LE(b[4 * c] - a[4 * c], 2);
    for (int c = 0; c < 2; ++c) EXPECT_GE(b[4 * c] - a[4 * c], 0);
  }
}

TEST(FrameSelectionTest, TargetFpsScalesTheSpanByTheVideosFrameRate) {
  // L = 100, clip_len 4, interval 2, target 15 fps. A 30 fps video: the clip spans
  // 4 * 2 * 30 / 15 = 16 frames, max_offset 84, one clip at 42, frames linspace(0, 15, 4).
  FrameSelection s = Clips(4, 2, 1, false);
  s.target_fps = 15;
  V out;
  ASSERT_TRUE(SelectFrames(s, 100, 30.0, 0, &out).ok());
  EXPECT_EQ(out, (V{42, 47, 52, 57}));
  // Unknown frame rate: taken as 15 (SampleFrames' rule): span 8, max_offset 92, clip at 46,
  // frames linspace(0, 7, 4) = 0, 2.33, 4.67, 7 truncated.
  ASSERT_TRUE(SelectFrames(s, 100, 0.0, 0, &out).ok());
  EXPECT_EQ(out, (V{46, 48, 50, 53}));
  // 3 clips: spacing floor(84 / 2) = 42, not rounded.
  s.num_clips = 3;
  ASSERT_TRUE(SelectFrames(s, 100, 30.0, 0, &out).ok());
  EXPECT_EQ(out, (V{0, 5, 10, 15, 42, 47, 52, 57, 84, 89, 94, 99}));
  // L = 103: max_offset 87, spacing floor(43.5) = 43 (rounding would give 44).
  ASSERT_TRUE(SelectFrames(s, 103, 30.0, 0, &out).ok());
  EXPECT_EQ(out, (V{0, 5, 10, 15, 43, 48, 53, 58, 86, 91, 96, 101}));
}

TEST(FrameSelectionTest, OptionsOutsideTheirModeAreRefused) {
  FrameSelection s = Clips(1, 1, 4, true);
  s.twice_sample = true;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());  // twice_sample is for test mode
  s = Clips(4, 1, 1, false);
  s.twice_sample = true;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());  // SampleFrames divides by num_clips - 1 = 0
  s.num_clips = 2;
  EXPECT_TRUE(ValidateFrameSelection(s).ok());
  s = Clips(4, 1, 2, false);
  s.keep_tail_frames = true;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());  // keep_tail_frames is for training
  s = Clips(4, 1, 2, false);
  s.target_fps = -1;
  EXPECT_FALSE(ValidateFrameSelection(s).ok());
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
  FrameSelection s = Clips(2, 1, 2, false, 3);
  EXPECT_EQ(Select(s, 10), (V{0, 1, 0, 1, 0, 1, 8, 9, 8, 9, 8, 9}));
  s.view_major = true;  // mmaction2's order: each view's clips together
  EXPECT_EQ(Select(s, 10), (V{0, 1, 8, 9, 0, 1, 8, 9, 0, 1, 8, 9}));
  V out;
  EXPECT_FALSE(ValidateFrameSelection(Clips(0, 1, 1, false)).ok());
  EXPECT_FALSE(SelectFrames(Clips(2, 1, 1, false), 0, 0, &out).ok());
}

}  // namespace
}  // namespace gulp
}  // namespace tfg
