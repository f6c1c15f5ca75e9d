#include "cc/gulp/frame_selection.h"

#include <algorithm>

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
  }
  return Status::Ok();
}

}  // namespace gulp
}  // namespace tfg
