#include "cc/gulp/element_reader.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "cc/codec/picture.h"
#include "cc/io/file_system.h"
#include "cc/util/json_text.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace gulp {
namespace {

// 27648 -> "27,648": the Python readers' messages have always grouped digits.
std::string Grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

// The video's frame rate for target_fps: its meta's "fps" (tf-gulp ingest
// records it for videos). Absent, null or 0 is unknown (0), as SampleFrames
// takes a missing avg_fps; anything but a non-negative number is an error.
Status MetaFps(const Item& item, const std::string& meta_path, double* fps) {
  *fps = 0;
  nlohmann::json meta;
  TFG_RETURN_IF_ERROR(ParseJson(item.meta_json, meta_path, &meta));
  if (!meta.is_object()) return Status::Ok();
  const auto field = meta.find("fps");
  if (field == meta.end() || field->is_null()) return Status::Ok();
  const double value = field->is_number() ? field->get<double>() : -1;
  if (!(value >= 0) || std::isinf(value)) {
    return InvalidArgumentError(meta_path, ": id '", PrintableText(item.id),
                                "': meta field \"fps\" is ", PrintableText(field->dump()),
                                ", not a frame rate (target_fps reads it)");
  }
  *fps = value;
  return Status::Ok();
}

}  // namespace

Status ElementReader::Select(const Item& item, const std::string& data_path,
                             const std::string& meta_path, uint64_t random_key) {
  item_ = &item;
  data_path_ = data_path;
  // The previous clip's bytes are dropped but their buffer is kept: a reader
  // reused for clip after clip allocates it once.
  clip_.buffer.clear();
  clip_.frames.clear();
  double fps = 0;
  if (options_.selection.target_fps > 0) TFG_RETURN_IF_ERROR(MetaFps(item, meta_path, &fps));
  const Status selected = SelectFrames(options_.selection,
                                       static_cast<int64_t>(item.frames.size()), fps,
                                       random_key, &selected_);
  if (!selected.ok()) {
    return Status(selected.code(), meta_path + ": id '" + PrintableText(item.id) + "': " +
                                       selected.message());
  }
  // Sizes are checked before anything of the clip's size is allocated.
  return CheckClipJpegBytes(item, selected_, options_.max_clip_bytes, data_path);
}

Status ElementReader::ReadJpegs(const RandomAccessFile& file, char* const* dst) const {
  std::vector<Status> read(selected_.size());
  ReadInParallel(file, static_cast<int64_t>(selected_.size()), [&](int64_t k) {
    read[k] = ReadFrame(file, *item_, selected_[k], dst[k]);
  });
  for (const Status& s : read) TFG_RETURN_IF_ERROR(s);
  return Status::Ok();
}

Status ElementReader::ReadForDecode(const RandomAccessFile& file) {
  return ReadClip(file, *item_, selected_, &clip_);
}

Status ElementReader::ClipShape(gulp::ClipShape* shape) const {
  return ClipDecodedShape(clip_, options_.decode_options, data_path_, item_->id, shape);
}

Status ElementReader::CheckOutputBytes(const gulp::ClipShape& shape) const {
  return CheckClipDecodedBytes(shape, options_.max_clip_bytes, data_path_, item_->id);
}

Status ElementReader::Decode(const gulp::ClipShape& shape, const Scheduler& schedule,
                             int max_parallelism, uint8_t* dst) const {
  return DecodeClip(clip_, options_.decode_options, shape, data_path_, item_->id, schedule,
                    max_parallelism, dst);
}

Status ElementReader::DecodeWarped(const gulp::ClipShape& shape, const FrameMatrices& matrices,
                                   const jpeg::WarpTarget& target, const Scheduler& schedule,
                                   int max_parallelism, float* dst) const {
  return DecodeClipWarped(clip_, options_.decode_options, shape, matrices, target, data_path_,
                          item_->id, schedule, max_parallelism, dst);
}

Status ElementReader::DecodeWarped(const gulp::ClipShape& shape, const FrameMatrices& matrices,
                                   const jpeg::WarpTarget& target, const Scheduler& schedule,
                                   int max_parallelism, uint8_t* dst) const {
  return DecodeClipWarped(clip_, options_.decode_options, shape, matrices, target, data_path_,
                          item_->id, schedule, max_parallelism, dst);
}

Status ElementReader::FrameShapes(std::vector<FrameShape>* shapes) const {
  shapes->resize(clip_.frames.size());
  const uint64_t max_bytes = options_.max_clip_bytes;
  uint64_t total = 0;
  for (size_t k = 0; k < clip_.frames.size(); ++k) {
    const ClipBytes::Span& span = clip_.frames[k];
    jpeg::ImageInfo info;
    TFG_RETURN_IF_ERROR(WithContext(
        picture::ReadHeader(clip_.buffer.data() + span.begin, span.length, &info), data_path_,
        item_->id, span.frame, span.file_offset));
    jpeg::DecodeOptions own = options_.decode_options;
    if (info.gray) own.color_space = jpeg::ColorSpace::kGray;
    FrameShape& shape = (*shapes)[k];
    jpeg::ScaledSize(info, own, &shape.width, &shape.height);
    shape.channels = jpeg::Channels(own.color_space);
    // Each frame is at most kMaxFramePixels * 3 bytes: the sum cannot wrap.
    total += shape.bytes();
  }
  if (total > max_bytes) {
    return InvalidArgumentError(
        data_path_, ": id '", PrintableText(item_->id), "': ", clip_.frames.size(),
        " frames decode to ", Grouped(total), " bytes, over the limit of ", Grouped(max_bytes),
        " bytes per clip (max_clip_bytes); nothing was decoded; select fewer frames or "
        "raise max_clip_bytes");
  }
  return Status::Ok();
}

Status ElementReader::DecodeFrame(size_t k, const FrameShape& shape, uint8_t* dst) const {
  const ClipBytes::Span& span = clip_.frames[k];
  jpeg::DecodeOptions own = options_.decode_options;
  own.color_space = shape.channels == 1 ? jpeg::ColorSpace::kGray : jpeg::ColorSpace::kRgb;
  return WithContext(picture::Decode(clip_.buffer.data() + span.begin, span.length, own,
                                  shape.width, shape.height, dst),
                     data_path_, item_->id, span.frame, span.file_offset);
}

}  // namespace gulp
}  // namespace tfg
