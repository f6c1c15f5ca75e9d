#include "cc/mp4/mp4_reader.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

#include "cc/util/json_text.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace mp4 {
namespace {

// A bounds-checked big-endian cursor over [begin, end) of a buffer whose
// byte 0 is at file offset `base`.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t begin, uint64_t end, uint64_t base,
         const std::string* file, const char* box)
      : data_(data), pos_(begin), end_(end), base_(base), file_(file), box_(box) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return end_ - pos_; }

  Status Need(uint64_t n) const {
    if (n > end_ - pos_) {
      return DataLossError(*file_, ": ", box_, " box truncated at byte offset ",
                           base_ + pos_, " (needs ", n, " bytes, has ",
                           end_ - pos_, ")");
    }
    return Status::Ok();
  }
  Status Skip(uint64_t n) {
    TFG_RETURN_IF_ERROR(Need(n));
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Status Read(int bytes, T* v) {
    TFG_RETURN_IF_ERROR(Need(bytes));
    uint64_t x = 0;
    for (int i = 0; i < bytes; ++i) x = (x << 8) | data_[pos_ + i];
    pos_ += bytes;
    *v = static_cast<T>(x);
    return Status::Ok();
  }
  const uint8_t* here() const { return data_ + pos_; }
  Status Error(const std::string& what) const {
    return DataLossError(*file_, ": ", box_, " box at byte offset ",
                         base_ + pos_, ": ", what);
  }

 private:
  const uint8_t* data_;
  uint64_t pos_, end_, base_;
  const std::string* file_;
  const char* box_;
};

// Container boxes (mdia, minf, stbl) followed inside a trak: the Benzina
// layout nests them 3 deep; anything past this is a malformed or hostile file.
constexpr int kMaxTrackBoxDepth = 16;

struct Box {
  std::string type;
  uint64_t begin = 0;    // of the header, in the buffer
  uint64_t payload = 0;  // first byte after the header
  uint64_t end = 0;
};

// Reads the box header at `pos` of a parent spanning [.., parent_end).
Status ReadBoxHeader(const uint8_t* data, uint64_t pos, uint64_t parent_end,
                     uint64_t base, const std::string& file, Box* box) {
  if (parent_end - pos < 8) {
    return DataLossError(file, ": truncated box header at byte offset ", base + pos,
                         " (", parent_end - pos, " bytes left in the parent box)");
  }
  const uint8_t* p = data + pos;
  uint64_t size = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3];
  box->type.assign(reinterpret_cast<const char*>(p + 4), 4);
  uint64_t header = 8;
  if (size == 1) {
    if (parent_end - pos < 16) {
      return DataLossError(file, ": truncated 64-bit box header at byte offset ", base + pos);
    }
    size = 0;
    for (int i = 0; i < 8; ++i) size = (size << 8) | p[8 + i];
    header = 16;
  } else if (size == 0) {
    size = parent_end - pos;  // to the end of the parent (or file)
  }
  if (size < header) {
    return DataLossError(file, ": box '", PrintableText(box->type), "' at byte offset ",
                         base + pos, " has size ", size, ", smaller than its header");
  }
  if (size > parent_end - pos) {
    return DataLossError(file, ": box '", PrintableText(box->type), "' at byte offset ",
                         base + pos, " has size ", size, ", past the end of its parent (",
                         parent_end - pos, " bytes left)");
  }
  box->begin = pos;
  box->payload = pos + header;
  box->end = pos + size;
  return Status::Ok();
}

class Parser {
 public:
  Parser(const uint8_t* data, uint64_t base, uint64_t file_size, const std::string& file)
      : data_(data), base_(base), file_size_(file_size), file_(file) {}

  template <typename F>
  Status ForEachChild(uint64_t begin, uint64_t end, F&& f) {
    uint64_t pos = begin;
    int count = 0;
    while (pos < end) {
      Box box;
      TFG_RETURN_IF_ERROR(ReadBoxHeader(data_, pos, end, base_, file_, &box));
      TFG_RETURN_IF_ERROR(f(box));
      pos = box.end;
      if (++count > (1 << 24)) return DataLossError(file_, ": too many boxes");
    }
    return Status::Ok();
  }

  Status ParseMoov(const Box& moov, Movie* movie) {
    return ForEachChild(moov.payload, moov.end, [&](const Box& b) -> Status {
      if (b.type == "udta") return ParseUdta(b, movie);
      if (b.type != "trak") return Status::Ok();
      Track t;
      TFG_RETURN_IF_ERROR(ParseTrak(b, &t));
      movie->tracks.push_back(std::move(t));
      return Status::Ok();
    });
  }

 private:
  Cursor At(const Box& b, const char* name) const {
    return Cursor(data_, b.payload, b.end, base_, &file_, name);
  }

  // moov/udta/bzsp: tf_gulp's split table, a JSON object.
  Status ParseUdta(const Box& udta, Movie* movie) {
    return ForEachChild(udta.payload, udta.end, [&](const Box& b) -> Status {
      if (b.type != "bzsp") return Status::Ok();
      const std::string where =
          " (bzsp box at byte offset " + std::to_string(base_ + b.payload) + ")";
      if (movie->has_split_table) {
        return DataLossError(file_, ": a second split table", where);
      }
      movie->has_split_table = true;
      movie->split_table.assign(reinterpret_cast<const char*>(data_ + b.payload),
                                b.end - b.payload);
      movie->split_table_offset = base_ + b.payload;
      nlohmann::json table;
      const Status parsed = ParseJson(movie->split_table, "", &table);
      if (!parsed.ok()) {
        std::string detail = parsed.message();
        if (detail.compare(0, 2, ": ") == 0) detail.erase(0, 2);
        return DataLossError(file_, ": the split table", where, " is not valid JSON: ", detail);
      }
      if (!table.is_object()) {
        return DataLossError(file_, ": the split table", where, " is not a JSON object");
      }
      return Status::Ok();
    });
  }

  Status ParseTrak(const Box& trak, Track* t) {
    t->trak_offset = base_ + trak.begin;
    bool have_stsz = false, have_offsets = false;
    std::vector<uint64_t> chunk_offsets;
    std::vector<std::pair<uint32_t, uint32_t>> stsc;  // first chunk, samples per chunk
    bool have_stsc = false;
    uint64_t constant_size = 0, sample_count = 0;
    // Container boxes recurse; the depth is bounded so a file nesting them
    // thousands deep is an error, not a stack overflow.
    int depth = 0;
    std::function<Status(const Box&)> visit = [&](const Box& b) -> Status {
      if (b.type == "mdia" || b.type == "minf" || b.type == "stbl") {
        if (depth >= kMaxTrackBoxDepth) {
          return DataLossError(file_, ": box '", PrintableText(b.type), "' at byte offset ",
                               base_ + b.begin,
                               " is nested more than ", kMaxTrackBoxDepth,
                               " container boxes deep inside its trak");
        }
        ++depth;
        Status status = ForEachChild(b.payload, b.end, visit);
        --depth;
        return status;
      }
      if (b.type == "tkhd") return ParseTkhd(b, t);
      if (b.type == "hdlr") return ParseHdlr(b, t);
      if (b.type == "stsd") return ParseStsd(b, t);
      if (b.type == "stsz") {
        have_stsz = true;
        return ParseStsz(b, &constant_size, &sample_count, &t->sample_sizes);
      }
      if (b.type == "stco" || b.type == "co64") {
        if (have_offsets) return At(b, b.type.c_str()).Error("a second chunk offset table");
        have_offsets = true;
        return ParseChunkOffsets(b, b.type == "co64", &chunk_offsets);
      }
      if (b.type == "stsc") {
        have_stsc = true;
        return ParseStsc(b, &stsc);
      }
      return Status::Ok();
    };
    TFG_RETURN_IF_ERROR(ForEachChild(trak.payload, trak.end, visit));
    const std::string which = "track '" + PrintableText(t->name) + "' (trak at byte offset " +
                              std::to_string(base_ + trak.begin) + ")";
    if (!have_stsz || !have_offsets) {
      return DataLossError(file_, ": ", which, " has no ",
                           have_stsz ? "stco/co64" : "stsz", " sample table");
    }
    // Sample sizes (a constant size was only a count so far).
    if (constant_size != 0) {
      // Every sample lies in the file, so there cannot be more than size / constant_size.
      if (sample_count > file_size_ / constant_size) {
        return DataLossError(file_, ": ", which, " claims ", sample_count,
                             " samples of ", constant_size, " bytes, more than the file holds");
      }
      t->sample_sizes.assign(sample_count, constant_size);
    }
    // Sample offsets from the chunk offsets and samples per chunk.
    const uint64_t n = t->sample_sizes.size();
    t->sample_offsets.reserve(n);
    if (!have_stsc) stsc = {{1, 1}};
    if (stsc.empty() || stsc[0].first != 1) {
      return DataLossError(file_, ": ", which, ": stsc does not start at chunk 1");
    }
    size_t entry = 0;
    uint64_t sample = 0;
    for (uint64_t chunk = 0; chunk < chunk_offsets.size() && sample < n; ++chunk) {
      while (entry + 1 < stsc.size() && stsc[entry + 1].first <= chunk + 1) ++entry;
      uint64_t offset = chunk_offsets[chunk];
      for (uint32_t k = 0; k < stsc[entry].second && sample < n; ++k, ++sample) {
        t->sample_offsets.push_back(offset);
        offset += t->sample_sizes[sample];  // bounded below, before any use
        if (offset < t->sample_sizes[sample]) {
          return DataLossError(file_, ": ", which, ": sample ", sample, " offset overflows");
        }
      }
    }
    if (t->sample_offsets.size() != n) {
      return DataLossError(file_, ": ", which, ": the sample tables disagree: stsz has ", n,
                           " samples, the chunk tables (stco/co64, stsc) place ",
                           t->sample_offsets.size());
    }
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t off = t->sample_offsets[i], size = t->sample_sizes[i];
      if (off > file_size_ || size > file_size_ - off) {
        return DataLossError(file_, ": ", which, ": sample ", i, " at byte offset ", off,
                             " with ", size, " bytes runs past the end of the file (",
                             file_size_, " bytes)");
      }
    }
    return Status::Ok();
  }

  Status ParseTkhd(const Box& b, Track* t) {
    Cursor c = At(b, "tkhd");
    uint32_t version_flags;
    TFG_RETURN_IF_ERROR(c.Read(4, &version_flags));
    const int version = version_flags >> 24;
    TFG_RETURN_IF_ERROR(c.Skip(version == 1 ? 16 : 8));  // creation, modification
    TFG_RETURN_IF_ERROR(c.Read(4, &t->track_id));
    TFG_RETURN_IF_ERROR(c.Skip(4 + (version == 1 ? 8 : 4)));  // reserved, duration
    TFG_RETURN_IF_ERROR(c.Skip(8 + 2 + 2 + 2 + 2 + 36));
    uint32_t w, h;
    TFG_RETURN_IF_ERROR(c.Read(4, &w));
    TFG_RETURN_IF_ERROR(c.Read(4, &h));
    t->width = w / 65536.0;
    t->height = h / 65536.0;
    return Status::Ok();
  }

  Status ParseHdlr(const Box& b, Track* t) {
    Cursor c = At(b, "hdlr");
    TFG_RETURN_IF_ERROR(c.Skip(8));  // version/flags, pre_defined
    TFG_RETURN_IF_ERROR(c.Need(4 + 12));
    t->handler_type.assign(reinterpret_cast<const char*>(c.here()), 4);
    TFG_RETURN_IF_ERROR(c.Skip(4 + 12));
    const char* name = reinterpret_cast<const char*>(c.here());
    const size_t len = strnlen(name, c.remaining());
    t->name.assign(name, len);
    return Status::Ok();
  }

  Status ParseStsd(const Box& b, Track* t) {
    Cursor c = At(b, "stsd");
    uint32_t entries;
    TFG_RETURN_IF_ERROR(c.Skip(4));
    TFG_RETURN_IF_ERROR(c.Read(4, &entries));
    if (entries == 0) return Status::Ok();
    Box entry;
    TFG_RETURN_IF_ERROR(ReadBoxHeader(data_, c.pos(), b.end, base_, file_, &entry));
    t->sample_entry = entry.type;
    if (entry.type != "hvc1" && entry.type != "hev1") return Status::Ok();
    Cursor v = At(entry, "hvc1");
    TFG_RETURN_IF_ERROR(v.Skip(6 + 2 + 16));  // reserved, data_reference_index, pre_defined
    TFG_RETURN_IF_ERROR(v.Read(2, &t->coded_width));
    TFG_RETURN_IF_ERROR(v.Read(2, &t->coded_height));
    TFG_RETURN_IF_ERROR(v.Skip(4 + 4 + 4 + 2 + 32 + 2 + 2));
    return ForEachChild(v.pos(), entry.end, [&](const Box& child) -> Status {
      if (child.type == "hvcC") {
        t->has_hevc_config = true;
        t->hvcc_offset = base_ + child.begin;
        t->hvcc_size = child.end - child.begin;
        return ParseHvcC(child, &t->hevc);
      }
      if (child.type == "clap") return ParseClap(child, &t->clap);
      return Status::Ok();
    });
  }

  Status ParseHvcC(const Box& b, HevcConfig* h) {
    Cursor c = At(b, "hvcC");
    uint8_t version, byte;
    TFG_RETURN_IF_ERROR(c.Read(1, &version));
    if (version != 1) return c.Error("unsupported configurationVersion " + std::to_string(version));
    TFG_RETURN_IF_ERROR(c.Skip(12 + 2 + 1));  // profile/tier/level, segmentation, parallelism
    TFG_RETURN_IF_ERROR(c.Read(1, &byte));
    h->chroma_format = byte & 3;
    TFG_RETURN_IF_ERROR(c.Read(1, &byte));
    h->bit_depth_luma = (byte & 7) + 8;
    TFG_RETURN_IF_ERROR(c.Read(1, &byte));
    h->bit_depth_chroma = (byte & 7) + 8;
    TFG_RETURN_IF_ERROR(c.Skip(2));  // avgFrameRate
    TFG_RETURN_IF_ERROR(c.Read(1, &byte));
    h->length_size = (byte & 3) + 1;
    if (h->length_size == 3) return c.Error("NAL length size 3 is not allowed");
    uint8_t arrays;
    TFG_RETURN_IF_ERROR(c.Read(1, &arrays));
    for (int a = 0; a < arrays; ++a) {
      uint16_t nalus;
      TFG_RETURN_IF_ERROR(c.Skip(1));  // completeness, NAL unit type
      TFG_RETURN_IF_ERROR(c.Read(2, &nalus));
      for (int k = 0; k < nalus; ++k) {
        uint16_t len;
        TFG_RETURN_IF_ERROR(c.Read(2, &len));
        TFG_RETURN_IF_ERROR(c.Need(len));
        h->parameter_sets.emplace_back(reinterpret_cast<const char*>(c.here()), len);
        TFG_RETURN_IF_ERROR(c.Skip(len));
      }
    }
    return Status::Ok();
  }

  Status ParseClap(const Box& b, CleanAperture* clap) {
    Cursor c = At(b, "clap");
    double v[4];
    for (int i = 0; i < 4; ++i) {
      uint32_t num, den;
      TFG_RETURN_IF_ERROR(c.Read(4, &num));
      TFG_RETURN_IF_ERROR(c.Read(4, &den));
      if (den == 0) return c.Error("zero denominator");
      // Widths are unsigned, offsets signed.
      v[i] = (i < 2 ? static_cast<double>(num) : static_cast<double>(static_cast<int32_t>(num))) / den;
    }
    clap->present = true;
    clap->width = v[0];
    clap->height = v[1];
    clap->horiz_offset = v[2];
    clap->vert_offset = v[3];
    return Status::Ok();
  }

  Status ParseStsz(const Box& b, uint64_t* constant_size, uint64_t* count,
                   std::vector<uint64_t>* sizes) {
    Cursor c = At(b, "stsz");
    uint32_t size, n;
    TFG_RETURN_IF_ERROR(c.Skip(4));
    TFG_RETURN_IF_ERROR(c.Read(4, &size));
    TFG_RETURN_IF_ERROR(c.Read(4, &n));
    *constant_size = size;
    *count = n;
    if (size != 0) return Status::Ok();
    if (uint64_t{n} * 4 > c.remaining()) {
      return c.Error("sample_count " + std::to_string(n) + " needs more entries than the box holds");
    }
    sizes->resize(n);
    for (uint32_t i = 0; i < n; ++i) TFG_RETURN_IF_ERROR(c.Read(4, &(*sizes)[i]));
    return Status::Ok();
  }

  Status ParseChunkOffsets(const Box& b, bool wide, std::vector<uint64_t>* offsets) {
    Cursor c = At(b, wide ? "co64" : "stco");
    uint32_t n;
    TFG_RETURN_IF_ERROR(c.Skip(4));
    TFG_RETURN_IF_ERROR(c.Read(4, &n));
    const int w = wide ? 8 : 4;
    if (uint64_t{n} * w > c.remaining()) {
      return c.Error("entry_count " + std::to_string(n) + " needs more entries than the box holds");
    }
    offsets->resize(n);
    for (uint32_t i = 0; i < n; ++i) TFG_RETURN_IF_ERROR(c.Read(w, &(*offsets)[i]));
    return Status::Ok();
  }

  Status ParseStsc(const Box& b, std::vector<std::pair<uint32_t, uint32_t>>* stsc) {
    Cursor c = At(b, "stsc");
    uint32_t n;
    TFG_RETURN_IF_ERROR(c.Skip(4));
    TFG_RETURN_IF_ERROR(c.Read(4, &n));
    if (uint64_t{n} * 12 > c.remaining()) {
      return c.Error("entry_count " + std::to_string(n) + " needs more entries than the box holds");
    }
    stsc->resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      auto& e = (*stsc)[i];
      TFG_RETURN_IF_ERROR(c.Read(4, &e.first));
      TFG_RETURN_IF_ERROR(c.Read(4, &e.second));
      TFG_RETURN_IF_ERROR(c.Skip(4));
      if (e.first == 0 || (i > 0 && e.first <= (*stsc)[i - 1].first)) {
        return c.Error("first_chunk values must increase from 1");
      }
    }
    return Status::Ok();
  }

  const uint8_t* data_;
  uint64_t base_;
  uint64_t file_size_;
  const std::string& file_;
};

}  // namespace

Status ListBoxes(const uint8_t* data, uint64_t begin, uint64_t end, const std::string& name,
                 std::vector<BoxRange>* boxes) {
  boxes->clear();
  Parser parser(data, 0, end, name);
  return parser.ForEachChild(begin, end, [&](const Box& b) -> Status {
    boxes->push_back(BoxRange{b.type, b.begin, b.payload, b.end});
    return Status::Ok();
  });
}

const Track* Movie::FindTrack(const std::string& track_name) const {
  for (const Track& t : tracks) {
    if (t.name == track_name) return &t;
  }
  return nullptr;
}

Status Movie::GetTrack(const std::string& track_name, const Track** track) const {
  *track = FindTrack(track_name);
  if (*track != nullptr) return Status::Ok();
  std::string names;
  for (const Track& t : tracks) {
    names += (names.empty() ? "'" : ", '") + PrintableText(t.name) + "'";
  }
  return NotFoundError(name, ": no track named '", PrintableText(track_name), "' (tracks: ",
                       names.empty() ? "none" : names, ")");
}

Status ParseMovie(const uint8_t* data, uint64_t size, const std::string& name,
                  Movie* movie) {
  movie->name = name;
  movie->size = size;
  movie->tracks.clear();
  movie->has_split_table = false;
  movie->split_table.clear();
  Parser parser(data, 0, size, movie->name);
  bool have_moov = false;
  TFG_RETURN_IF_ERROR(parser.ForEachChild(0, size, [&](const Box& b) -> Status {
    if (b.type != "moov") return Status::Ok();
    if (have_moov) return DataLossError(name, ": a second moov box at byte offset ", b.begin);
    have_moov = true;
    movie->moov_offset = b.begin;
    movie->moov_size = b.end - b.begin;
    return parser.ParseMoov(b, movie);
  }));
  if (!have_moov) return DataLossError(name, ": no moov box (not an MP4 file?)");
  return Status::Ok();
}

Status ReadMovie(const RandomAccessFile& file, Movie* movie) {
  movie->name = file.path();
  movie->size = file.size();
  movie->tracks.clear();
  movie->has_split_table = false;
  movie->split_table.clear();
  const uint64_t size = file.size();
  uint64_t pos = 0;
  bool have_moov = false;
  while (pos < size) {
    uint8_t header[16];
    const uint64_t n = std::min<uint64_t>(16, size - pos);
    TFG_RETURN_IF_ERROR(file.ReadAt(pos, n, header));
    Box box;
    // Parse the header as if the buffer began at `pos`.
    TFG_RETURN_IF_ERROR(ReadBoxHeader(header, 0, size - pos, pos, file.path(), &box));
    if (box.type == "moov") {
      if (have_moov) return DataLossError(file.path(), ": a second moov box at byte offset ", pos);
      have_moov = true;
      const uint64_t len = box.end;
      movie->moov_offset = pos;
      movie->moov_size = len;
      if (len > (uint64_t{1} << 32)) {
        return DataLossError(file.path(), ": moov box at byte offset ", pos, " is ", len,
                             " bytes, more than this reader accepts");
      }
      std::string moov(len, '\0');
      TFG_RETURN_IF_ERROR(file.ReadAt(pos, len, moov.data()));
      Parser parser(reinterpret_cast<const uint8_t*>(moov.data()), pos, size, movie->name);
      Box local = box;  // offsets relative to the moov buffer
      TFG_RETURN_IF_ERROR(parser.ParseMoov(local, movie));
    }
    pos += box.end;
  }
  if (!have_moov) return DataLossError(file.path(), ": no moov box (not an MP4 file?)");
  return Status::Ok();
}

Status HevcSampleToAnnexB(const HevcConfig& config, const uint8_t* sample,
                          uint64_t size, const std::string& what,
                          std::string* annex_b) {
  static const char kStart[4] = {0, 0, 0, 1};
  annex_b->clear();
  annex_b->reserve(size + 64 + 16 * config.parameter_sets.size());
  for (const std::string& ps : config.parameter_sets) {
    annex_b->append(kStart, 4);
    annex_b->append(ps);
  }
  uint64_t pos = 0;
  const int l = config.length_size;
  int nals = 0;
  while (pos < size) {
    if (size - pos < static_cast<uint64_t>(l)) {
      return DataLossError(what, ": truncated NAL unit length at byte ", pos, " of ", size);
    }
    uint64_t len = 0;
    for (int i = 0; i < l; ++i) len = (len << 8) | sample[pos + i];
    pos += l;
    if (len == 0) {
      return DataLossError(what, ": NAL unit at byte ", pos - l, " has length 0");
    }
    if (len > size - pos) {
      return DataLossError(what, ": NAL unit at byte ", pos - l, " has length ", len,
                           ", past the end of the sample (", size - pos, " bytes left)");
    }
    annex_b->append(kStart, 4);
    annex_b->append(reinterpret_cast<const char*>(sample + pos), len);
    pos += len;
    ++nals;
  }
  if (nals == 0) return DataLossError(what, ": empty HEVC sample");
  return Status::Ok();
}

}  // namespace mp4
}  // namespace tfg
