#include "cc/gulp/frame_selection.h"

#include <algorithm>
#include <cmath>

#include "cc/util/stateless_random.h"

namespace tfg {
namespace gulp {
namespace {

// Clamps slice bounds the way Python's slice.indices() does.
void AdjustSliceBound(bool has_value, int64_t value, int64_t length,
                      int64_t step, bool is_start, int64_t* out) {
  if (!has_value) {
    if (step > 0) {
      *out = is_start ? 0 : length;
    } else {
      *out = is_start ? length - 1 : -1;
    }
    return;
  }
  int64_t v = value;
  if (v < 0) {
    v += length;
    if (v < 0) v = step < 0 ? -1 : 0;
  } else if (v >= length) {
    v = step < 0 ? length - 1 : length;
  }
  *out = v;
}

// Python's a // b (floor division), b > 0.
int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// numpy's round / around: to the nearest integer, halves to even (the
// default floating-point rounding mode, which nearbyint uses).
int64_t RoundHalfEven(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// SampleFrames' train-mode clip offsets for a clip of `t` frames.
void TrainClipOffsets(const FrameSelection& s, int64_t t, uint64_t random_key,
                      std::vector<int64_t>* offsets) {
  const int64_t n = s.num_clips;
  const int64_t span = s.clip_len * s.frame_interval;  // train mode: clip_len * interval
  const int64_t avg_interval = FloorDiv(t - span + 1, n);
  KeyedRandom random(random_key);
  offsets->assign(n, 0);
  if (avg_interval > 0) {
    for (int64_t i = 0; i < n; ++i) {
      (*offsets)[i] = i * avg_interval + static_cast<int64_t>(random.Below(avg_interval));
    }
  } else if (t > std::max(n, span)) {
    for (int64_t i = 0; i < n; ++i) {
      (*offsets)[i] = static_cast<int64_t>(random.Below(static_cast<uint64_t>(t - span + 1)));
    }
    std::sort(offsets->begin(), offsets->end());
  } else if (avg_interval == 0) {
    const double ratio = (static_cast<double>(t - span) + 1.0) / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) (*offsets)[i] = RoundHalfEven(static_cast<double>(i) * ratio);
  }
}

// SampleFrames' (mmaction2 1.x) test-mode clip offsets.
void TestClipOffsets(const FrameSelection& s, int64_t t, std::vector<int64_t>* offsets) {
  const int64_t n = s.num_clips;
  const int64_t span = (s.clip_len - 1) * s.frame_interval + 1;
  const int64_t max_offset = std::max<int64_t>(t - span, 0);
  offsets->assign(n, 0);
  if (n == 1) {
    (*offsets)[0] = max_offset / 2;
    return;
  }
  const double between = static_cast<double>(max_offset) / static_cast<double>(n - 1);
  for (int64_t i = 0; i < n; ++i) (*offsets)[i] = RoundHalfEven(static_cast<double>(i) * between);
}

}  // namespace

Status ValidateFrameSelection(const FrameSelection& selection) {
  switch (selection.mode) {
    case FrameSelection::Mode::kSlice:
      if (selection.step == 0) {
        return InvalidArgumentError("frame slice step cannot be zero");
      }
      break;
    case FrameSelection::Mode::kIndices:
      if (selection.indices.empty()) {
        return InvalidArgumentError("frame index list is empty");
      }
      break;
    case FrameSelection::Mode::kSegments:
      if (selection.num_frames <= 0) {
        return InvalidArgumentError("num_frames must be positive, got ",
                                    selection.num_frames);
      }
      break;
    case FrameSelection::Mode::kClips:
      if (selection.clip_len <= 0 || selection.frame_interval <= 0 ||
          selection.num_clips <= 0 || selection.views_per_clip <= 0) {
        return InvalidArgumentError(
            "clip_len, frame_interval, num_clips and views must be positive, got clip_len=",
            selection.clip_len, ", frame_interval=", selection.frame_interval,
            ", num_clips=", selection.num_clips, ", views=", selection.views_per_clip);
      }
      break;
    case FrameSelection::Mode::kAll:
      break;
  }
  return Status::Ok();
}

Status SelectFrames(const FrameSelection& selection, int64_t num_available,
                    uint64_t random_key, std::vector<int64_t>* frames) {
  frames->clear();
  const int64_t t = num_available;
  switch (selection.mode) {
    case FrameSelection::Mode::kAll:
      frames->resize(t);
      for (int64_t i = 0; i < t; ++i) (*frames)[i] = i;
      break;
    case FrameSelection::Mode::kSlice: {
      const int64_t step = selection.step;
      int64_t start, stop;
      AdjustSliceBound(selection.has_start, selection.start, t, step, true,
                       &start);
      AdjustSliceBound(selection.has_stop, selection.stop, t, step, false,
                       &stop);
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        frames->push_back(i);
      }
      break;
    }
    case FrameSelection::Mode::kIndices:
      for (int64_t index : selection.indices) {
        int64_t i = index < 0 ? index + t : index;
        if (i < 0 || i >= t) {
          return OutOfRangeError("frame index ", index,
                                 " is out of range for a clip of ", t,
                                 " frames");
        }
        frames->push_back(i);
      }
      break;
    case FrameSelection::Mode::kSegments: {
      const int64_t n = selection.num_frames;
      if (t <= 0) {
        return OutOfRangeError("cannot sample ", n,
                               " frames from a clip with no frames");
      }
      frames->resize(n);
      if (t < n) {
        for (int64_t i = 0; i < n; ++i) (*frames)[i] = i % t;
        break;
      }
      KeyedRandom random(random_key);
      const double segment = static_cast<double>(t) / static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) {
        double offset = selection.random_offsets ? random.Uniform() : 0.5;
        int64_t index = static_cast<int64_t>(segment * (i + offset));
        (*frames)[i] = std::min(index, t - 1);
      }
      break;
    }
    case FrameSelection::Mode::kClips: {
      if (t <= 0) {
        return OutOfRangeError("cannot sample clips from a clip with no frames");
      }
      std::vector<int64_t> offsets;
      if (selection.random_offsets) {
        TrainClipOffsets(selection, t, random_key, &offsets);
      } else {
        TestClipOffsets(selection, t, &offsets);
      }
      frames->reserve(offsets.size() * selection.views_per_clip * selection.clip_len);
      for (int64_t offset : offsets) {
        for (int64_t v = 0; v < selection.views_per_clip; ++v) {
          for (int64_t j = 0; j < selection.clip_len; ++j) {
            frames->push_back((offset + j * selection.frame_interval) % t);  // loop past the end
          }
        }
      }
      break;
    }
  }
  return Status::Ok();
}

}  // namespace gulp
}  // namespace tfg
