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

// numpy's round / around: to the nearest integer, halves to even (the
// default floating-point rounding mode, which nearbyint uses).
int64_t RoundHalfEven(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// Python's float a // b, as numpy's floor_divide computes it (SampleFrames
// divides floats so with target_fps).
double FloorDivide(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  const double floor_div = std::floor(div);
  return div - floor_div > 0.5 ? floor_div + 1.0 : floor_div;
}

// numpy's astype(int) of a non-negative value: truncation.
double Truncate(double x) { return std::trunc(x); }

// The random stream of temporal jitter, apart from the clip offsets' (whose
// draws stay those of a selection without jitter).
constexpr uint64_t kJitterStream = 0x6a6974746572;  // "jitter"

// SampleFrames' ori_clip_len: the frames of the video one clip spans.
double SpanFrames(const FrameSelection& s, double fps) {
  if (s.target_fps > 0) {
    const double ratio = fps > 0 ? fps / s.target_fps : 1.0;
    return std::max(1.0, static_cast<double>(s.clip_len * s.frame_interval) * ratio);
  }
  if (!s.random_offsets) return static_cast<double>((s.clip_len - 1) * s.frame_interval + 1);
  return static_cast<double>(s.clip_len * s.frame_interval);
}

// SampleFrames' train-mode clip offsets for a video of `t` frames and a clip
// spanning `span` of them.
void TrainClipOffsets(const FrameSelection& s, int64_t t, double span, uint64_t random_key,
                      std::vector<double>* offsets) {
  const int64_t n = s.num_clips;
  const double frames = static_cast<double>(t);
  KeyedRandom random(random_key);
  offsets->assign(n, 0.0);
  if (s.keep_tail_frames) {
    const double avg = (frames - span + 1) / static_cast<double>(n);
    if (frames > span - 1) {
      for (int64_t i = 0; i < n; ++i) {
        (*offsets)[i] = Truncate(static_cast<double>(i) * avg + avg * random.Uniform());
      }
    }
    return;
  }
  const double avg = FloorDivide(frames - span + 1, static_cast<double>(n));
  if (avg > 0) {
    for (int64_t i = 0; i < n; ++i) {
      (*offsets)[i] = static_cast<double>(i) * avg +
                      static_cast<double>(random.Below(static_cast<uint64_t>(avg)));
    }
  } else if (frames > std::max(static_cast<double>(n), span)) {
    const auto high = static_cast<uint64_t>(Truncate(frames - span + 1));
    for (int64_t i = 0; i < n; ++i) (*offsets)[i] = static_cast<double>(random.Below(high));
    std::sort(offsets->begin(), offsets->end());
  } else if (avg == 0) {
    const double ratio = (frames - span + 1.0) / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      (*offsets)[i] = static_cast<double>(RoundHalfEven(static_cast<double>(i) * ratio));
    }
  }
}

// SampleFrames' test-mode clip offsets (NumClips of them).
void TestClipOffsets(const FrameSelection& s, int64_t t, double span,
                     std::vector<double>* offsets) {
  const int64_t n = s.num_clips;
  offsets->clear();
  if (s.clip_len == 1) {  // TSN/TSM: segment centres (and with twice_sample, starts)
    const double avg = static_cast<double>(t) / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) offsets->push_back(static_cast<double>(i) * avg + avg / 2.0);
    if (s.twice_sample) {
      for (int64_t i = 0; i < n; ++i) offsets->push_back(static_cast<double>(i) * avg);
    }
    return;
  }
  const double max_offset = std::max(static_cast<double>(t) - span, 0.0);
  const int64_t count = NumClips(s);
  if (count == 1) {
    offsets->push_back(FloorDivide(max_offset, 2));
    return;
  }
  // The spacing is over num_clips - 1 gaps even when twice_sample doubles the
  // clips (ValidateFrameSelection refuses num_clips 1 there).
  const double gaps = static_cast<double>(n - 1);
  for (int64_t i = 0; i < count; ++i) {
    if (s.target_fps > 0) {
      offsets->push_back(static_cast<double>(i) * std::floor(max_offset / gaps));
    } else {
      offsets->push_back(
          static_cast<double>(RoundHalfEven(static_cast<double>(i) * (max_offset / gaps))));
    }
  }
}

// The frames of every clip (clip after clip), SampleFrames' way: offset plus
// each frame's place in the clip, jittered, then kept in the video.
void ClipFrames(const FrameSelection& s, int64_t t, double fps, uint64_t random_key,
                std::vector<int64_t>* clip_frames) {
  const double span = SpanFrames(s, fps);
  std::vector<double> offsets;
  if (s.random_offsets) {
    TrainClipOffsets(s, t, span, random_key, &offsets);
  } else {
    TestClipOffsets(s, t, span, &offsets);
  }
  // Each frame's place in its clip: every frame_interval, or with target_fps
  // clip_len places spread evenly over the span (numpy's linspace, truncated).
  std::vector<double> place(s.clip_len);
  for (int64_t j = 0; j < s.clip_len; ++j) {
    if (s.target_fps <= 0) {
      place[j] = static_cast<double>(j * s.frame_interval);
    } else if (j == s.clip_len - 1 && j > 0) {
      place[j] = Truncate(span - 1);
    } else if (s.clip_len > 1) {
      place[j] = Truncate(static_cast<double>(j) * ((span - 1) / static_cast<double>(s.clip_len - 1)));
    }
  }
  KeyedRandom jitter(HashKey({random_key, kJitterStream}));
  const double frames = static_cast<double>(t);
  std::vector<double> clip(s.clip_len);
  clip_frames->clear();
  for (double offset : offsets) {
    for (int64_t j = 0; j < s.clip_len; ++j) {
      clip[j] = offset + place[j];
      if (s.temporal_jitter) {
        clip[j] += static_cast<double>(jitter.Below(static_cast<uint64_t>(s.frame_interval)));
      }
    }
    if (s.out_of_bound == FrameSelection::OutOfBound::kLoop) {
      for (double& f : clip) f = std::fmod(f, frames);
    } else {
      // The largest index of the clip inside the video (0 when none is)
      // replaces those past its end.
      double last = 0;
      for (double f : clip) last = std::max(last, f < frames ? f : 0.0);
      for (double& f : clip) f = f < frames ? f : last;
    }
    for (double f : clip) clip_frames->push_back(static_cast<int64_t>(Truncate(f)));
  }
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
      if (selection.twice_sample && selection.random_offsets) {
        return InvalidArgumentError("twice_sample is a test-mode option (training=False)");
      }
      if (selection.keep_tail_frames && !selection.random_offsets) {
        return InvalidArgumentError("keep_tail_frames is a training option (training=True)");
      }
      if (selection.twice_sample && selection.clip_len > 1 && selection.num_clips < 2) {
        // SampleFrames spaces the 2 * num_clips offsets max_offset /
        // (num_clips - 1) apart: it divides by zero here.
        return InvalidArgumentError(
            "twice_sample with clip_len > 1 needs num_clips >= 2 (the clips are spaced "
            "max_offset / (num_clips - 1) apart)");
      }
      if (!(selection.target_fps >= 0) || std::isinf(selection.target_fps)) {
        return InvalidArgumentError("target_fps must be a positive frame rate, got ",
                                    selection.target_fps);
      }
      break;
    case FrameSelection::Mode::kAll:
      break;
  }
  return Status::Ok();
}

int64_t NumClips(const FrameSelection& selection) {
  return selection.twice_sample ? 2 * selection.num_clips : selection.num_clips;
}

Status SelectFrames(const FrameSelection& selection, int64_t num_available,
                    uint64_t random_key, std::vector<int64_t>* frames) {
  return SelectFrames(selection, num_available, 0.0, random_key, frames);
}

Status SelectFrames(const FrameSelection& selection, int64_t num_available, double fps,
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
      std::vector<int64_t> clips;
      ClipFrames(selection, t, fps, random_key, &clips);
      const int64_t n = NumClips(selection), len = selection.clip_len;
      const int64_t views = selection.views_per_clip;
      frames->reserve(clips.size() * views);
      for (int64_t outer = 0; outer < (selection.view_major ? views : n); ++outer) {
        for (int64_t inner = 0; inner < (selection.view_major ? n : views); ++inner) {
          const int64_t c = selection.view_major ? inner : outer;
          frames->insert(frames->end(), clips.begin() + c * len, clips.begin() + (c + 1) * len);
        }
      }
      break;
    }
  }
  return Status::Ok();
}

}  // namespace gulp
}  // namespace tfg
