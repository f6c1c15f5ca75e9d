#include "cc/gulp/clip_reader.h"

#include <algorithm>
#include <map>
#include <vector>

#include "cc/codec/picture.h"
#include "cc/io/file_system.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace gulp {

Status WithContext(const Status& status, const std::string& data_path,
                   const std::string& id, int64_t frame, uint64_t offset) {
  if (status.ok()) return status;
  return Status(status.code(), data_path + ": id '" + PrintableText(id) + "' frame " +
                                   std::to_string(frame) + " at byte offset " +
                                   std::to_string(offset) + ": " +
                                   status.message());
}

namespace {

// A frame's bytes must lie in the file as it is now (it may have shrunk since
// its index was checked): refused before any read, naming the frame.
Status CheckInFile(const RandomAccessFile& file, const Item& item, int64_t frame) {
  const FrameRef& ref = item.frames[frame];
  if (ref.offset > file.size() || ref.total_length > file.size() - ref.offset) {
    return WithContext(DataLossError("offset ", ref.offset, " + length ", ref.total_length,
                                     " ends past the end of the file (", file.size(),
                                     " bytes)"),
                       file.path(), item.id, frame, ref.offset);
  }
  return Status::Ok();
}

std::string LimitHint() {
  return "select fewer frames (num_frames=, frames=), decode smaller (scale=), "
         "or raise max_clip_bytes";
}

}  // namespace

Status CheckClipJpegBytes(const Item& item, const std::vector<int64_t>& selected,
                          uint64_t max_bytes, const std::string& data_path) {
  uint64_t total = 0;
  for (int64_t f : selected) {
    const uint64_t length = item.frames[f].jpeg_length();
    // Saturates instead of wrapping: a selection may repeat frames.
    total = length > max_bytes - std::min(total, max_bytes) ? max_bytes + 1
                                                              : total + length;
    if (total > max_bytes) {
      return InvalidArgumentError(
          data_path, ": id '", PrintableText(item.id), "': the ", selected.size(),
          " selected frames hold more than ", max_bytes,
          " bytes of JPEG data (max_clip_bytes); ", LimitHint());
    }
  }
  return Status::Ok();
}

Status CheckClipDecodedBytes(const ClipShape& shape, uint64_t max_bytes,
                             const std::string& data_path, const std::string& id) {
  const uint64_t frame = shape.frame_bytes();
  const uint64_t frames = static_cast<uint64_t>(shape.num_frames);
  if (frame > 0 && frames > max_bytes / frame) {
    return InvalidArgumentError(
        data_path, ": id '", PrintableText(id), "': ", frames, " frames of ", shape.width, "x",
        shape.height, "x", shape.channels, " (", frame,
        " bytes each) decode to more than the limit of ", max_bytes,
        " bytes per clip (max_clip_bytes); nothing was decoded; ", LimitHint());
  }
  return Status::Ok();
}

Status ReadFrame(const RandomAccessFile& file, const Item& item, int64_t frame,
                 char* dst) {
  TFG_RETURN_IF_ERROR(CheckInFile(file, item, frame));
  const FrameRef& ref = item.frames[frame];
  return WithContext(file.ReadAt(ref.offset, ref.jpeg_length(), dst),
                     file.path(), item.id, frame, ref.offset);
}

Status ReadClip(const RandomAccessFile& file, const Item& item,
                const std::vector<int64_t>& selected, ClipBytes* clip) {
  // Unique frames in disk order, so adjacent ones coalesce into one read.
  std::vector<int64_t> unique(selected);
  std::sort(unique.begin(), unique.end(), [&](int64_t a, int64_t b) {
    return item.frames[a].offset < item.frames[b].offset;
  });
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());

  size_t total = 0;
  for (int64_t f : unique) {
    TFG_RETURN_IF_ERROR(CheckInFile(file, item, f));
    total += item.frames[f].total_length;
  }
  clip->buffer.resize(total);

  std::map<int64_t, size_t> position;  // frame -> start in buffer
  size_t cursor = 0;
  size_t i = 0;
  struct Run {
    int64_t first_frame;
    uint64_t offset, end;
    size_t cursor;  // where it goes in clip->buffer
  };
  std::vector<Run> runs;
  while (i < unique.size()) {
    // Extend the run while the next frame starts where this one ends (the
    // first frame always joins: run_end starts at its offset).
    size_t j = i;
    uint64_t run_end = item.frames[unique[i]].offset;
    size_t run_start_cursor = cursor;
    while (j < unique.size() && item.frames[unique[j]].offset == run_end) {
      position[unique[j]] = cursor;
      cursor += item.frames[unique[j]].total_length;
      run_end += item.frames[unique[j]].total_length;
      ++j;
    }
    runs.push_back({unique[i], item.frames[unique[i]].offset, run_end, run_start_cursor});
    i = j;
  }
  // Local runs are read one after another; on a remote store (a round trip
  // per read) all of a clip's runs are in flight at once.
  std::vector<Status> statuses(runs.size());
  ReadInParallel(file, static_cast<int64_t>(runs.size()), [&](int64_t r) {
    const Run& run = runs[r];
    statuses[r] = WithContext(
        file.ReadAt(run.offset, run.end - run.offset, clip->buffer.data() + run.cursor),
        file.path(), item.id, run.first_frame, run.offset);
  });
  for (const Status& s : statuses) TFG_RETURN_IF_ERROR(s);

  clip->frames.resize(selected.size());
  for (size_t k = 0; k < selected.size(); ++k) {
    const FrameRef& ref = item.frames[selected[k]];
    clip->frames[k] = {position[selected[k]], ref.jpeg_length(), ref.offset,
                       selected[k]};
  }
  return Status::Ok();
}

Status ClipDecodedShape(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                        const std::string& data_path, const std::string& id,
                        ClipShape* shape) {
  shape->num_frames = static_cast<int64_t>(clip.frames.size());
  shape->channels = jpeg::Channels(options.color_space);
  shape->height = shape->width = 0;
  for (size_t k = 0; k < clip.frames.size(); ++k) {
    const ClipBytes::Span& span = clip.frames[k];
    jpeg::ImageInfo info;
    TFG_RETURN_IF_ERROR(WithContext(
        picture::ReadHeader(clip.buffer.data() + span.begin, span.length, &info),
        data_path, id, span.frame, span.file_offset));
    int width, height;
    jpeg::ScaledSize(info, options, &width, &height);
    if (k == 0) {
      shape->width = width;
      shape->height = height;
    } else if (width != shape->width || height != shape->height) {
      return InvalidArgumentError(
          data_path, ": id '", PrintableText(id), "' frame ", span.frame, " at byte offset ",
          span.file_offset, " decodes to ", width, "x", height,
          " but the clip's first selected frame decodes to ", shape->width,
          "x", shape->height, "; all frames of a clip must have one size");
    }
  }
  return Status::Ok();
}

Status DecodeClipFrame(const ClipBytes& clip, size_t k,
                       const jpeg::DecodeOptions& options,
                       const ClipShape& shape, const std::string& data_path,
                       const std::string& id, uint8_t* clip_dst) {
  const ClipBytes::Span& span = clip.frames[k];
  return WithContext(
      picture::Decode(clip.buffer.data() + span.begin, span.length, options,
                   shape.width, shape.height, clip_dst + k * shape.frame_bytes()),
      data_path, id, span.frame, span.file_offset);
}

Status DecodeClip(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                  const ClipShape& shape, const std::string& data_path,
                  const std::string& id, const Scheduler& schedule,
                  int max_parallelism, uint8_t* dst) {
  std::vector<Status> statuses(clip.frames.size());
  ParallelFor(static_cast<int64_t>(clip.frames.size()), max_parallelism,
              schedule, [&](int64_t k) {
                statuses[k] = DecodeClipFrame(clip, static_cast<size_t>(k),
                                              options, shape, data_path, id,
                                              dst);
              });
  for (const Status& s : statuses) TFG_RETURN_IF_ERROR(s);
  return Status::Ok();
}

template <typename Out>
Status DecodeClipWarped(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                        const ClipShape& shape, const FrameMatrices& matrices,
                        const jpeg::WarpTarget& target, const std::string& data_path,
                        const std::string& id, const Scheduler& schedule,
                        int max_parallelism, Out* dst) {
  const size_t frame_values = static_cast<size_t>(target.out_height) * target.out_width *
                              jpeg::Channels(options.color_space);
  jpeg::ImageInfo info;
  info.width = shape.width;
  info.height = shape.height;
  std::vector<Status> statuses(clip.frames.size());
  ParallelFor(static_cast<int64_t>(clip.frames.size()), max_parallelism, schedule,
              [&](int64_t k) {
                const ClipBytes::Span& span = clip.frames[k];
                statuses[k] = WithContext(
                    picture::DecodeWarped(clip.buffer.data() + span.begin, span.length,
                                          options, info, matrices.For(k), target,
                                       dst + k * frame_values),
                    data_path, id, span.frame, span.file_offset);
              });
  for (const Status& s : statuses) TFG_RETURN_IF_ERROR(s);
  return Status::Ok();
}

template Status DecodeClipWarped(const ClipBytes&, const jpeg::DecodeOptions&, const ClipShape&,
                                 const FrameMatrices&, const jpeg::WarpTarget&,
                                 const std::string&, const std::string&, const Scheduler&, int,
                                 float*);
template Status DecodeClipWarped(const ClipBytes&, const jpeg::DecodeOptions&, const ClipShape&,
                                 const FrameMatrices&, const jpeg::WarpTarget&,
                                 const std::string&, const std::string&, const Scheduler&, int,
                                 uint8_t*);

}  // namespace gulp
}  // namespace tfg
