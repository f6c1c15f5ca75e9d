#include "cc/gulp/chunk_index.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "cc/util/json_text.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace gulp {
namespace {

// ordered_json keeps the file's key order inside an entry (a user's meta dict
// comes back in the order it was written).
using Json = nlohmann::ordered_json;

// Frames sharing bytes are listed this many times, then counted in one line.
constexpr int kMaxListedOverlaps = 20;

// Python's json module (which writes gulpio2's and our indexes) writes the
// floats nan and +-inf as the bare words NaN, Infinity and -Infinity, which
// JSON does not have. They are quoted into these marker strings before
// parsing (a NUL character cannot start a user's string by accident: Python
// escapes it, and these are matched only outside strings) and written back as
// the bare words by DumpJson, so a meta holding nan reads as Python wrote it.
constexpr const char* kPythonConstants[][2] = {
    {"NaN", "\"\\u0000tf_gulp:NaN\""},
    {"Infinity", "\"\\u0000tf_gulp:Infinity\""},
    {"-Infinity", "\"\\u0000tf_gulp:-Infinity\""},
};

// `text` with Python's bare NaN / Infinity / -Infinity quoted; false (and
// `out` untouched) when it holds none.
bool QuotePythonConstants(const std::string& text, std::string* out) {
  bool in_string = false, found = false;
  std::string quoted;
  size_t copied = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;
    for (const auto& constant : kPythonConstants) {
      const size_t n = std::char_traits<char>::length(constant[0]);
      if (text.compare(i, n, constant[0]) != 0) continue;
      if (!found) quoted.reserve(text.size() + 64);
      found = true;
      quoted.append(text, copied, i - copied);
      quoted += constant[1];
      copied = i + n;
      i += n - 1;
      break;
    }
  }
  if (!found) return false;
  quoted.append(text, copied, std::string::npos);
  *out = std::move(quoted);
  return true;
}

std::string DumpJson(const Json& value, bool python_constants = false) {
  // UTF-8 output; invalid UTF-8 in a user's meta is replaced rather than
  // aborting the whole dataset.
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/false,
                                Json::error_handler_t::replace);
  if (!python_constants) return text;
  for (const auto& constant : kPythonConstants) {
    const std::string marker = constant[1];
    for (size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at)) {
      text.replace(at, marker.size(), constant[0]);
    }
  }
  return text;
}

bool AsUint64(const Json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v < 0) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  return false;
}

// Builds the top-level object's entries as (id, value) pairs in file order,
// without ever building the top-level object itself: an ordered_json object
// finds each new key by a linear search, so a .gmeta of 200,000 ids took
// minutes to parse as one value. Each entry's own (small) value is built as
// ordered_json. An id seen twice stops the parse: the writers (gulpio2's
// json.dump of a dict, ours) cannot produce one, and which of the two a reader
// took would be arbitrary.
class EntriesParser : public nlohmann::json_sax<Json> {
 public:
  using Entries = std::vector<std::pair<std::string, Json>>;
  explicit EntriesParser(Entries* entries) : entries_(entries) {}

  bool root_is_object() const { return root_is_object_; }
  bool has_duplicate_id() const { return has_duplicate_id_; }
  const std::string& duplicate_id() const { return duplicate_id_; }
  bool failed() const { return failed_; }
  size_t error_offset() const { return error_offset_; }
  const std::string& error() const { return error_; }

  bool null() override { return Add(Json(nullptr)); }
  bool boolean(bool v) override { return Add(Json(v)); }
  bool number_integer(number_integer_t v) override { return Add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Add(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override {
    return Add(Json(v));
  }
  bool string(string_t& v) override { return Add(Json(std::move(v))); }
  bool binary(binary_t&) override { return RootMustBeObject(); }

  bool start_object(std::size_t) override {
    if (!in_root_) {
      in_root_ = root_is_object_ = true;
      return true;
    }
    Json* added = Insert(Json::object());
    if (added == nullptr) return false;
    open_.push_back(added);
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override {
    if (!in_root_) return RootMustBeObject();
    Json* added = Insert(Json::array());
    if (added == nullptr) return false;
    open_.push_back(added);
    return true;
  }
  bool end_array() override { return Close(); }

  bool key(string_t& name) override {
    if (!open_.empty()) {
      key_ = std::move(name);
      return true;
    }
    if (!seen_ids_.insert(name).second) {
      duplicate_id_ = std::move(name);
      has_duplicate_id_ = true;
      return false;
    }
    id_ = std::move(name);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    failed_ = true;
    error_offset_ = position;
    error_ = PrintableText(e.what());  // quotes the bytes last read
    return false;
  }

 private:
  bool RootMustBeObject() {
    in_root_ = true;
    return false;  // root_is_object_ stays false
  }
  bool Add(Json value) {
    if (!in_root_) return RootMustBeObject();
    return Insert(std::move(value)) != nullptr;
  }
  // Adds `value` where the parser is: an entry of the top-level object, an
  // element of the open array, or the member `key_` of the open object.
  // Pointers to open containers stay valid: only the innermost one grows.
  Json* Insert(Json value) {
    if (open_.empty()) {
      entries_->emplace_back(std::move(id_), std::move(value));
      return &entries_->back().second;
    }
    Json* parent = open_.back();
    if (parent->is_array()) {
      parent->push_back(std::move(value));
      return &parent->back();
    }
    Json& member = (*parent)[key_];
    member = std::move(value);
    return &member;
  }
  bool Close() {
    if (!open_.empty()) open_.pop_back();
    return true;
  }

  Entries* entries_;
  std::vector<Json*> open_;  // containers being built inside the current entry
  std::unordered_set<std::string> seen_ids_;
  std::string id_, key_, duplicate_id_, error_;
  bool in_root_ = false, root_is_object_ = false, failed_ = false;
  bool has_duplicate_id_ = false;
  size_t error_offset_ = 0;
};

// A frame that passed the per-frame rules, for the check that no two share
// bytes.
struct FrameSpan {
  uint64_t begin, end;
  size_t item;  // index into ChunkIndex::items
  size_t frame;
  bool operator<(const FrameSpan& o) const {
    return begin != o.begin ? begin < o.begin : end < o.end;
  }
};

class ChunkChecker {
 public:
  ChunkChecker(const std::string& meta_path, const std::string& data_path,
               uint64_t data_size, const IndexOptions& options,
               ChunkIndex* index, const ProblemSink& sink)
      : meta_path_(meta_path),
        data_path_(data_path),
        data_size_(data_size),
        options_(options),
        index_(index),
        sink_(sink) {}

  void Check(const std::string& file_text) {
    std::string quoted;
    python_constants_ = QuotePythonConstants(file_text, &quoted);
    const std::string& text = python_constants_ ? quoted : file_text;
    if (text.empty()) {
      Report(Error(meta_path_, "empty index file (0 bytes)"));
      return;
    }
    // Bounded nesting and number range first: a hostile index must not
    // overflow the stack (DumpJson recurses per level) or throw past us.
    const Status limits = CheckJsonLimits(text, meta_path_);
    if (!limits.ok()) {
      Report(Error(meta_path_, WithoutPath(meta_path_, limits.message())));
      return;
    }
    EntriesParser::Entries entries;
    if (!Parse(text, &entries)) return;
    if (data_size_ == 0) {
      for (const auto& [id, entry] : entries) {
        const auto frames = entry.is_object() ? entry.find("frame_info") : entry.end();
        if (frames != entry.end() && frames->is_array() && !frames->empty()) {
          // One finding for the chunk, not one per frame.
          Report(Error(data_path_,
                       "empty data file (0 bytes) but its index lists frames (index: " +
                           meta_path_ + ")"));
          return;
        }
      }
    }
    index_->items.reserve(entries.size());
    for (auto& [id, entry] : entries) {
      Item item;
      item_spans_.clear();
      const bool go_on = CheckItem(std::move(id), entry, &item);
      if (item_ok_) {
        spans_.insert(spans_.end(), item_spans_.begin(), item_spans_.end());
        index_->items.push_back(std::move(item));
      }
      if (!go_on) return;
    }
    if (!CheckNoSharedBytes()) return;
    CheckTrailingBytes();
  }

 private:
  Problem Error(const std::string& file, std::string message) const {
    Problem p;
    p.file = file;
    p.message = std::move(message);
    return p;
  }
  Problem ItemError(const std::string& file, const std::string& id,
                    std::string message, int64_t frame = -1) const {
    Problem p = Error(file, std::move(message));
    p.id = id;
    p.has_id = true;
    p.frame = frame;
    return p;
  }
  bool Report(const Problem& p) {
    if (p.error) item_ok_ = false, chunk_ok_ = false;
    return sink_(p);
  }
  bool Warn(Problem p) {
    p.error = false;
    return sink_(p);
  }

  bool Parse(const std::string& text, EntriesParser::Entries* entries) {
    EntriesParser parser(entries);
    try {
      Json::sax_parse(text, &parser);
    } catch (const nlohmann::json::exception& e) {
      // Not expected after CheckJsonLimits; never let it escape as a crash.
      Report(Error(meta_path_, std::string("unreadable JSON: ") + PrintableText(e.what())));
      return false;
    }
    if (parser.failed()) {
      Report(Error(meta_path_, internal::StrCat("invalid JSON at byte offset ",
                                                parser.error_offset(), ": ",
                                                parser.error())));
      return false;
    }
    if (!parser.root_is_object()) {
      Report(Error(meta_path_, "expected a JSON object mapping ids to entries"));
      return false;
    }
    if (parser.has_duplicate_id()) {
      Report(ItemError(meta_path_, parser.duplicate_id(),
                       "listed twice in this index (an index maps each id to "
                       "one entry)"));
      return false;
    }
    return true;
  }

  // False when the sink says stop.
  bool CheckItem(std::string id, const Json& entry, Item* item) {
    item_ok_ = true;
    item->id = std::move(id);
    const std::string& key = item->id;
    if (!entry.is_object()) {
      return Report(ItemError(meta_path_, key, "entry is not a JSON object"));
    }
    auto frame_info = entry.find("frame_info");
    if (frame_info == entry.end() || !frame_info->is_array()) {
      return Report(ItemError(meta_path_, key,
                              "missing or malformed \"frame_info\" list"));
    }
    auto meta_data = entry.find("meta_data");
    const bool has_meta_list = meta_data != entry.end() && !meta_data->is_null();
    if (has_meta_list && !meta_data->is_array()) {
      return Report(ItemError(meta_path_, key, "\"meta_data\" is not a list"));
    }
    if (frame_info->empty() &&
        !Warn(ItemError(meta_path_, key,
                        "no frames (GulpDataset yields an empty clip for it, "
                        "or an error when it samples num_frames)"))) {
      return false;
    }
    item->frames.reserve(frame_info->size());
    for (size_t i = 0; i < frame_info->size(); ++i) {
      if (!CheckFrame(key, i, (*frame_info)[i], item)) return false;
    }
    if (!has_meta_list || meta_data->empty()) {
      item->meta_json = "{}";
      if (options_.keep_all_meta) item->all_meta_json = "[]";
      return Warn(ItemError(meta_path_, key,
                            "no meta_data (readers return {} for it, "
                            "tf_gulp.gulp.GulpDirectory None)"));
    }
    const Json& meta = (*meta_data)[0];
    item->meta_json = DumpJson(meta, python_constants_);
    if (options_.keep_all_meta) {
      item->all_meta_json = DumpJson(*meta_data, python_constants_);
    }
    if (!options_.label_field.empty() && meta.is_object()) {
      auto label = meta.find(options_.label_field);
      if (label != meta.end() && !label->is_null()) {
        item->label_json = DumpJson(*label, python_constants_);
      }
    }
    return true;
  }

  bool CheckFrame(const std::string& key, size_t i, const Json& f, Item* item) {
    FrameRef ref;
    if (!f.is_array() || f.size() != 3 || !AsUint64(f[0], &ref.offset) ||
        !AsUint64(f[1], &ref.pad) || !AsUint64(f[2], &ref.total_length)) {
      return Report(ItemError(
          meta_path_, key,
          "frame_info entry is not [offset, pad, length] with non-negative "
          "integers: " + DumpJson(f),
          static_cast<int64_t>(i)));
    }
    if (ref.pad >= ref.total_length) {
      Problem p = ItemError(meta_path_, key,
                            internal::StrCat("padding ", ref.pad,
                                             " leaves no JPEG bytes in length ",
                                             ref.total_length),
                            static_cast<int64_t>(i));
      p.offset = static_cast<int64_t>(
          std::min<uint64_t>(ref.offset, std::numeric_limits<int64_t>::max()));
      return Report(p);
    }
    // Written as a subtraction so a huge offset cannot overflow.
    if (ref.offset > data_size_ || ref.total_length > data_size_ - ref.offset) {
      return Report(ItemError(
          data_path_, key,
          internal::StrCat("bytes [", ref.offset, ", ",
                           ref.offset + ref.total_length,
                           ") run past the end of the file (", data_size_,
                           " bytes); the chunk is truncated or its index is "
                           "wrong (index: ",
                           meta_path_, ")"),
          static_cast<int64_t>(i)));
    }
    item_spans_.push_back({ref.offset, ref.offset + ref.total_length,
                      index_->items.size(), item->frames.size()});
    item->frames.push_back(ref);
    return true;
  }

  // Frames never share bytes (writers append them back to back), so together
  // they fit in the file: every count that follows from the index (frames per
  // clip, bytes read per clip) is bounded by the file's real size. An index
  // listing one frame's bytes 20,000 times is refused here, not when a reader
  // allocates 20,000 copies.
  bool CheckNoSharedBytes() {
    if (!std::is_sorted(spans_.begin(), spans_.end())) {
      std::sort(spans_.begin(), spans_.end());  // writers' order needs no sort
    }
    int overlaps = 0;
    for (size_t s = 1; s < spans_.size(); ++s) {
      const FrameSpan& a = spans_[s - 1];
      const FrameSpan& b = spans_[s];
      if (b.begin >= a.end) continue;
      ++overlaps;
      if (overlaps > kMaxListedOverlaps) continue;
      const std::string& a_id = IdOf(a);
      Problem p = ItemError(
          data_path_, IdOf(b),
          internal::StrCat("shares bytes with id '", PrintableText(a_id), "' frame ", a.frame,
                           " (bytes [", a.begin, ", ", a.end,
                           ")); frames never share bytes, so the index is "
                           "damaged (index: ",
                           meta_path_, ")"),
          static_cast<int64_t>(b.frame));
      p.offset = static_cast<int64_t>(b.begin);
      if (!Report(p)) return false;
    }
    if (overlaps > kMaxListedOverlaps) {
      return Report(Error(
          data_path_,
          internal::StrCat("... and ", overlaps - kMaxListedOverlaps,
                           " more frames that share bytes with another frame")));
    }
    if (overlaps > 0) index_->items.clear();  // not a usable index
    return true;
  }

  const std::string& IdOf(const FrameSpan& span) const {
    return index_->items[span.item].id;
  }

  void CheckTrailingBytes() {
    if (!chunk_ok_) return;  // an error already says what is wrong
    if (index_->items.empty() && data_size_ == 0) {
      Warn(Error(meta_path_, "empty chunk (no ids, 0-byte data file)"));
      return;
    }
    uint64_t end = 0;
    for (const FrameSpan& s : spans_) end = std::max(end, s.end);
    if (end < data_size_) {
      Warn(Error(data_path_,
                 internal::StrCat(
                     "file is ", data_size_, " bytes but its index accounts "
                     "for ", end, " (", data_size_ - end,
                     " unindexed trailing bytes, e.g. an interrupted append; "
                     "readers ignore them, truncating the file to ", end,
                     " bytes removes them)")));
    }
  }

  const std::string& meta_path_;
  const std::string& data_path_;
  const uint64_t data_size_;
  const IndexOptions& options_;
  ChunkIndex* index_;
  const ProblemSink& sink_;
  std::vector<FrameSpan> spans_;       // frames of the items kept
  std::vector<FrameSpan> item_spans_;  // frames of the item being checked
  bool item_ok_ = true;
  bool chunk_ok_ = true;
  bool python_constants_ = false;  // the text holds NaN / Infinity
};

}  // namespace

void CheckChunkIndex(const std::string& meta_json_text,
                     const std::string& meta_path, const std::string& data_path,
                     uint64_t data_size, const IndexOptions& options,
                     ChunkIndex* index, const ProblemSink& sink) {
  index->meta_path = meta_path;
  index->data_path = data_path;
  index->data_size = data_size;
  index->items.clear();
  ChunkChecker(meta_path, data_path, data_size, options, index, sink)
      .Check(meta_json_text);
}

Status ParseChunkIndex(const std::string& meta_json_text,
                       const std::string& meta_path,
                       const std::string& data_path, uint64_t data_size,
                       const std::string& label_field, ChunkIndex* index) {
  IndexOptions options;
  options.label_field = label_field;
  Status first;
  CheckChunkIndex(meta_json_text, meta_path, data_path, data_size, options,
                  index, StopAtFirstError(&first));
  if (!first.ok()) index->items.clear();
  return first;
}

void CheckChunkFiles(const std::string& meta_path, const std::string& data_path,
                     const IndexOptions& options, ChunkIndex* index,
                     const ProblemSink& sink) {
  index->meta_path = meta_path;
  index->data_path = data_path;
  index->meta_size = 0;
  index->items.clear();
  auto fail = [&](const std::string& file, const Status& status) {
    Problem p;
    p.code = status.code();
    p.file = file;
    p.message = WithoutPath(file, status.message());
    sink(p);
  };
  FileInfo info;
  const Status found = StatPath(data_path, &info);
  if (found.code() == StatusCode::kNotFound) {
    return fail(data_path, NotFoundError(data_path, ": missing data file for index ",
                                         meta_path));
  }
  if (!found.ok()) return fail(data_path, found);
  if (!info.is_regular) {  // its size would mean nothing; reading it could block
    return fail(data_path, InvalidArgumentError(data_path, ": is ", info.kind,
                                                ", expected a regular file"));
  }
  std::string text;
  const Status read = ReadFileToString(meta_path, &text);
  if (!read.ok()) return fail(meta_path, read);
  CheckChunkIndex(text, meta_path, data_path, info.size, options, index, sink);
  index->meta_size = text.size();
}

Status LoadChunkIndex(const std::string& meta_path, const std::string& data_path,
                      const IndexOptions& options, ChunkIndex* index) {
  Status first;
  CheckChunkFiles(meta_path, data_path, options, index, StopAtFirstError(&first));
  if (!first.ok()) index->items.clear();
  return first;
}

}  // namespace gulp
}  // namespace tfg
