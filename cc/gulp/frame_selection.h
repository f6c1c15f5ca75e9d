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
  // its numbers): `num_clips` clips of `clip_len` frames every
  // `frame_interval` frames, clip after clip. With `random_offsets`
  // (training), SampleFrames' train-mode clip offsets (keep_tail_frames off):
  // a random offset within each of num_clips equal spans, or sorted random
  // offsets, or evenly spread ones, or 0, as the clip's length allows;
  // without (evaluation), its 1.x test-mode offsets: max_offset = max(L -
  // ((clip_len - 1) * frame_interval + 1), 0), num_clips offsets spread
  // evenly over [0, max_offset] and rounded half to even (numpy's round), or
  // one clip at max_offset / 2. Frames past the end loop (index mod L).
  // Each clip's frames are listed `views_per_clip` times in a row (one per
  // spatial view of the clip: the element's views are clip-major).
  int64_t clip_len = 0, frame_interval = 1, num_clips = 1, views_per_clip = 1;
};

// Validates options that do not depend on a clip (e.g. step != 0).
Status ValidateFrameSelection(const FrameSelection& selection);

// Fills `frames` with indices into a clip of `num_available` frames.
// `random_key` seeds kSegments with random offsets. An index out of range is
// an OutOfRange error (the caller adds the file and id).
Status SelectFrames(const FrameSelection& selection, int64_t num_available,
                    uint64_t random_key, std::vector<int64_t>* frames);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_FRAME_SELECTION_H_
