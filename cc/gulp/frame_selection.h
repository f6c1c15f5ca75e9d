// Which frames of a clip an element contains.
//
// Video models rarely want every frame: they take a slice, fixed indices, N
// frames spread over the clip (TSN-style segment sampling), or dense clips of
// consecutive frames (mmaction2's SampleFrames, the sampling of I3D, SlowFast,
// X3D, VideoMAE). This is plain index arithmetic, kept separate from I/O so it
// is easy to test.
#ifndef TF_GULP_CC_GULP_FRAME_SELECTION_H_
#define TF_GULP_CC_GULP_FRAME_SELECTION_H_

#include <cstdint>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct FrameSelection {
  enum class Mode { kAll, kSlice, kIndices, kSegments, kClips };
  Mode mode = Mode::kAll;

  // kSlice: Python slice semantics (negative values count from the end;
  // missing start/stop mean the natural ends).
  bool has_start = false, has_stop = false;
  int64_t start = 0, stop = 0, step = 1;

  // kIndices: Python indexing (negative counts from the end).
  std::vector<int64_t> indices;

  // kSegments: `num_frames` segments of equal length; one frame from each,
  // at a random offset (`random_offsets`, training) or at the centre (eval).
  // Clips shorter than `num_frames` are looped (0, 1, .., T-1, 0, 1, ..).
  int64_t num_frames = 0;
  bool random_offsets = false;

  // kClips: mmaction2's SampleFrames (its names and, given its random draws,
  // its numbers; docs/video.md names the commit followed): `num_clips` clips
  // of `clip_len` frames every `frame_interval` frames. With `random_offsets`
  // (training) its train-mode clip offsets, without (evaluation) its
  // test-mode ones: for clip_len 1 the segment centres (TSN/TSM), else
  // num_clips offsets spread evenly over [0, max_offset] and rounded half to
  // even (numpy's round), or one clip at max_offset // 2.
  // Each clip's frames are listed `views_per_clip` times (one per spatial
  // view): clip by clip (each clip's views together), or with `view_major`
  // view by view (each view's clips together: mmaction2's order).
  int64_t clip_len = 0, frame_interval = 1, num_clips = 1, views_per_clip = 1;
  bool view_major = false;
  // SampleFrames' other options, as it defines them. twice_sample (test
  // mode): each clip again at its segment's start (clip_len 1), or 2 *
  // num_clips offsets on the same spacing (past max_offset: they loop).
  bool twice_sample = false;
  // keep_tail_frames (training): offsets drawn from real-valued spans that
  // reach the video's last frame.
  bool keep_tail_frames = false;
  // temporal_jitter: each frame moved forward by a random 0..frame_interval-1.
  bool temporal_jitter = false;
  // out_of_bound_opt: frames past the end loop (index mod L), or repeat the
  // clip's last frame within the video ("repeat_last"; 0 when none is).
  enum class OutOfBound { kLoop, kRepeatLast };
  OutOfBound out_of_bound = OutOfBound::kLoop;
  // target_fps (> 0): clips span clip_len * frame_interval frames at this
  // frame rate, i.e. times fps / target_fps frames of the video (the fps
  // SelectFrames is given; unknown: taken as target_fps, as SampleFrames
  // does), with clip_len frames spread evenly over the span. 0: off.
  double target_fps = 0;
};

// Validates options that do not depend on a clip (e.g. step != 0).
Status ValidateFrameSelection(const FrameSelection& selection);

// The clips kClips samples per element: num_clips, twice with twice_sample.
int64_t NumClips(const FrameSelection& selection);

// Fills `frames` with indices into a clip of `num_available` frames.
// `random_key` seeds the random choices (segment and clip offsets, temporal
// jitter); `fps` is the video's frame rate for target_fps (0: unknown). An
// index out of range is an OutOfRange error (the caller adds the file and id).
Status SelectFrames(const FrameSelection& selection, int64_t num_available, double fps,
                    uint64_t random_key, std::vector<int64_t>* frames);
// The same for a video whose frame rate is unknown.
Status SelectFrames(const FrameSelection& selection, int64_t num_available,
                    uint64_t random_key, std::vector<int64_t>* frames);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_FRAME_SELECTION_H_
