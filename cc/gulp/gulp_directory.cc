#include "cc/gulp/gulp_directory.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "cc/io/file_system.h"
#include "cc/io/format_sniffer.h"
#include "cc/io/random_access_file.h"
#include "cc/util/json_text.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace gulp {
namespace {

constexpr char kLabelMapName[] = "label2idx.json";
// Findings of one kind listed one by one before a summary line.
constexpr int64_t kMaxListed = 20;
// Findings kept per chunk index while the indexes are checked in parallel (a
// damaged index of a million bad entries must not hold a million messages).
constexpr size_t kMaxProblemsPerChunk = 1000;

// Parses the N of `<prefix><N><suffix>`; false for any other name.
bool ChunkNumber(const std::string& name, const std::string& prefix,
                 const std::string& suffix, int64_t* number) {
  if (name.size() <= prefix.size() + suffix.size()) return false;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *number = std::strtoll(digits.c_str(), nullptr, 10);
  return true;
}

bool IsTemporaryChunkFile(const std::string& name) {
  const std::string tmp = ".tmp";
  if (name.size() <= tmp.size() ||
      name.compare(name.size() - tmp.size(), tmp.size(), tmp) != 0) {
    return false;
  }
  const std::string base = name.substr(0, name.size() - tmp.size());
  int64_t n;
  return ChunkNumber(base, "data_", ".gulp", &n) ||
         ChunkNumber(base, "meta_", ".gmeta", &n);
}

Problem Finding(bool error, StatusCode code, std::string file,
                std::string message) {
  Problem p;
  p.error = error;
  p.code = code;
  p.file = std::move(file);
  p.message = std::move(message);
  return p;
}

// Chunks that finished runs of the ingest record planned and that have no
// index now: the directory lost data. False when the sink says stop.
bool CheckFinishedRuns(const std::string& directory, const IngestRecord& record,
                       const std::set<int64_t>& indexed, const ProblemSink& sink) {
  const std::string record_path = JoinPath(directory, kIngestRecordName);
  for (size_t r = 0; r < record.runs.size(); ++r) {
    const IngestRun& run = record.runs[r];
    if (!run.valid || !run.complete) continue;
    int64_t present = 0;
    for (int64_t n : indexed) present += run.Contains(n) ? 1 : 0;
    const int64_t missing = run.num_chunks - present;
    if (missing == 0) continue;
    // Walks at most indexed.size() + kMaxListed numbers, whatever the count.
    int64_t listed = 0;
    for (int64_t n = run.first_chunk;
         listed < std::min(kMaxListed, missing) && run.Contains(n); ++n) {
      if (indexed.count(n)) continue;
      ++listed;
      if (!sink(Finding(true, StatusCode::kDataLoss,
                        JoinPath(directory, internal::StrCat("meta_", n, ".gmeta")),
                        internal::StrCat("missing: the ingest that wrote this "
                                         "directory (run ", r, " of ", kIngestRecordName,
                                         ") finished this chunk")))) {
        return false;
      }
    }
    if (missing > listed &&
        !sink(Finding(true, StatusCode::kDataLoss, record_path,
                      internal::StrCat("run ", r, ": ... and ", missing - listed,
                                       " more of its ", run.num_chunks,
                                       " chunks (from ", run.first_chunk,
                                       ") are missing")))) {
      return false;
    }
  }
  return true;
}

}  // namespace

void ScanChunkFiles(const std::string& directory, ChunkScan* scan,
                    const ProblemSink& sink, bool require_chunks) {
  *scan = ChunkScan();
  FileInfo info;
  const Status found = StatPath(directory, &info);
  if (found.code() == StatusCode::kNotFound) {
    sink(Finding(true, StatusCode::kNotFound, directory, "gulp directory does not exist"));
    return;
  }
  if (!found.ok()) {
    sink(Finding(true, found.code(), directory, WithoutPath(directory, found.message())));
    return;
  }
  if (!info.is_directory) {
    const Status other = CheckReaderFits(directory, DataReader::kGulp);
    sink(Finding(true, StatusCode::kInvalidArgument, directory,
                 other.ok() ? "is not a directory (expected a gulp directory of data_N.gulp + "
                              "meta_N.gmeta)"
                            : WithoutPath(directory, other.message())));
    return;
  }
  std::vector<std::string> names;
  const Status listed = ListDirectory(directory, &names);
  if (!listed.ok()) {
    sink(Finding(true, StatusCode::kInvalidArgument, directory,
                 "cannot list: " + WithoutPath(directory, listed.message())));
    return;
  }
  std::sort(names.begin(), names.end());  // reports in a stable order
  std::map<int64_t, std::string> data_names, meta_names;  // numeric order
  for (const std::string& name : names) {
    int64_t n;
    std::map<int64_t, std::string>* found_names = nullptr;
    if (ChunkNumber(name, "data_", ".gulp", &n)) {
      found_names = &data_names;
    } else if (ChunkNumber(name, "meta_", ".gmeta", &n)) {
      found_names = &meta_names;
    } else if (IsTemporaryChunkFile(name)) {
      if (!sink(Finding(false, StatusCode::kOk, JoinPath(directory, name),
                        "temporary file of an interrupted write (ignored by "
                        "readers; resuming the ingest or deleting it removes it)"))) {
        return;
      }
      continue;
    } else {
      continue;
    }
    auto [it, inserted] = found_names->emplace(n, name);
    // data_1.gulp and data_01.gulp both claim chunk 1: reading either would
    // silently drop the other's items.
    if (!inserted &&
        !sink(Finding(true, StatusCode::kInvalidArgument, JoinPath(directory, name),
                      internal::StrCat("same chunk number as ", it->second, " (chunk ",
                                       n, " has two files); rename or remove one")))) {
      return;
    }
  }

  ReadIngestRecord(directory, &scan->record);
  const IngestRecord& record = scan->record;
  const std::string record_path = JoinPath(directory, kIngestRecordName);
  if (record.present && !record.valid() &&
      !sink(Finding(false, StatusCode::kOk, record_path,
                    internal::StrCat("ignored: ", record.problem)))) {
    return;
  }
  const IngestRun* unfinished = record.Unfinished();
  if (record.valid()) {
    for (size_t r = 0; r < record.runs.size(); ++r) {
      const IngestRun& run = record.runs[r];
      if (!run.valid &&
          !sink(Finding(false, StatusCode::kOk, record_path,
                        internal::StrCat("run ", r, ": malformed entry (needs integers "
                                         "first_chunk >= 0 and num_chunks >= 0 and a "
                                         "boolean complete); ignored")))) {
        return;
      }
      if (run.valid && run.skipped > 0) {
        scan->notes.push_back(internal::StrCat("ingest ", r + 1, ": ", run.skipped,
                                               " bad input(s) were skipped (listed in ",
                                               kIngestRecordName, ")"));
      }
    }
  }

  // Why the record cannot tell an unfinished ingest's chunk from a lost index, for the error
  // that refuses a chunk without its index ("" when the record is absent or says).
  std::string record_damage;
  if (record.present && !record.valid()) {
    record_damage = internal::StrCat(" (", record_path, " is damaged and ignored: ",
                                     record.problem, ")");
  } else if (record.valid() && !record.runs.empty() && !record.runs.back().valid) {
    record_damage = internal::StrCat(" (", record_path, ": its last run, run ",
                                     record.runs.size() - 1, ", is malformed and ignored)");
  }
  std::set<int64_t> indexed;
  for (const auto& [n, meta_name] : meta_names) indexed.insert(n);
  for (const auto& [n, data_name] : data_names) {
    if (meta_names.count(n)) continue;
    const std::string data_path = JoinPath(directory, data_name);
    if (unfinished != nullptr && unfinished->Contains(n)) {
      if (!sink(Finding(false, StatusCode::kOk, data_path,
                        internal::StrCat("data file without its index meta_", n,
                                         ".gmeta: a chunk the unfinished ingest has not "
                                         "finished writing, skipped by readers (resuming "
                                         "the ingest rewrites it)")))) {
        return;
      }
      continue;
    }
    if (!sink(Finding(true, StatusCode::kNotFound, data_path,
                      internal::StrCat("chunk has no index file meta_", n,
                                       ".gmeta, and no unfinished ingest in ",
                                       kIngestRecordName, " is writing it", record_damage,
                                       "; restore the index or remove the chunk",
                                       record_damage.empty() ? "" :
                                       ", or re-run the ingest with --overwrite")))) {
      return;
    }
  }
  for (const auto& [n, meta_name] : meta_names) {
    const auto data = data_names.find(n);
    const std::string meta_path = JoinPath(directory, meta_name);
    if (data == data_names.end()) {
      if (!sink(Finding(true, StatusCode::kNotFound, meta_path,
                        internal::StrCat("index has no data file data_", n, ".gulp")))) {
        return;
      }
      continue;
    }
    scan->chunks.push_back({n, JoinPath(directory, data->second), meta_path});
  }
  if (record.valid() && !CheckFinishedRuns(directory, record, indexed, sink)) return;
  if (unfinished != nullptr) {
    int64_t written = 0;
    for (const ChunkFiles& c : scan->chunks) written += unfinished->Contains(c.number);
    if (!sink(Finding(false, StatusCode::kOk, record_path,
                      internal::StrCat("unfinished ingest: ", written, " of ",
                                       unfinished->num_chunks, " chunks written (chunks ",
                                       unfinished->first_chunk, "..",
                                       unfinished->first_chunk + unfinished->num_chunks - 1,
                                       "); run the same tf-gulp ingest command again to "
                                       "finish it")))) {
      return;
    }
  }
  if (scan->chunks.empty() && require_chunks) {
    // A folder of videos, images or .ffr files: say what it is and what reads it.
    const Status other = unfinished != nullptr ? Status::Ok()
                                               : CheckReaderFits(directory, DataReader::kGulp);
    sink(Finding(true, other.ok() ? StatusCode::kNotFound : other.code(), directory,
                 unfinished != nullptr
                     ? "no gulp chunks (data_N.gulp + meta_N.gmeta) found yet: the "
                       "unfinished ingest has not finished one"
                 : other.ok() ? "no gulp chunks (data_N.gulp + meta_N.gmeta) found"
                              : WithoutPath(directory, other.message())));
  }
}

void CheckGulpDirectory(const std::string& directory, const IndexOptions& options,
                        GulpDirectory* out, ChunkScan* scan_out, const ProblemSink& sink,
                        const ChunkProgress& progress) {
  out->path = directory;
  out->chunks.clear();
  ChunkScan local_scan;
  ChunkScan& scan = scan_out != nullptr ? *scan_out : local_scan;
  bool stopped = false;
  // After a scan error the chunks found are still checked (check reports
  // every finding); a reader's sink has stopped by then.
  ScanChunkFiles(
      directory, &scan,
      [&](const Problem& p) {
        stopped = !sink(p);
        return !stopped;
      },
      options.require_chunks);
  if (stopped || scan.chunks.empty()) return;
  const std::vector<ChunkFiles>& files = scan.chunks;
  out->chunks.resize(files.size());
  // The indexes are independent: on a remote store (one round trip per file)
  // they are fetched together; locally ReadInParallel runs them in order.
  // Findings are kept per chunk and replayed in chunk order.
  FileSystem* fs = nullptr;
  if (!FileSystemFor(directory, &fs).ok()) fs = LocalFileSystem();
  std::vector<std::vector<Problem>> found(files.size());
  ReadInParallel(*fs, static_cast<int64_t>(files.size()), [&](int64_t c) {
    std::vector<Problem>& mine = found[c];
    CheckChunkFiles(files[c].meta_path, files[c].data_path, options, &out->chunks[c],
                    [&mine](const Problem& p) {
                      if (mine.size() == kMaxProblemsPerChunk) {
                        Problem more = p;
                        more.has_id = false;
                        more.frame = more.offset = -1;
                        more.message = "... and more problems in this index";
                        mine.push_back(more);
                        return false;
                      }
                      mine.push_back(p);
                      return true;
                    });
  });
  std::unordered_map<std::string, size_t> chunk_of_id;
  for (size_t c = 0; c < files.size(); ++c) {
    for (const Problem& p : found[c]) {
      if (!sink(p)) return;
    }
    if (progress) progress(out->chunks[c].meta_size);
    const ChunkIndex& index = out->chunks[c];
    for (const Item& item : index.items) {
      auto [it, inserted] = chunk_of_id.emplace(item.id, c);
      if (inserted) continue;
      Problem p = Finding(true, StatusCode::kInvalidArgument, index.meta_path,
                          internal::StrCat("also in ", out->chunks[it->second].meta_path,
                                           ": ids must be unique across the chunks of a "
                                           "gulp directory"));
      p.id = item.id;
      p.has_id = true;
      if (!sink(p)) return;
    }
  }
}

Status LoadGulpDirectory(const std::string& directory, const IndexOptions& options,
                         GulpDirectory* out) {
  Status first;
  CheckGulpDirectory(directory, options, out, nullptr, StopAtFirstError(&first));
  if (!first.ok()) out->chunks.clear();
  return first;
}

Status LoadGulpDirectory(const std::string& directory, const std::string& label_field,
                         GulpDirectory* out) {
  IndexOptions options;
  options.label_field = label_field;
  return LoadGulpDirectory(directory, options, out);
}

Status LoadLabelMap(const std::string& path, LabelMap* labels) {
  std::string text;
  TFG_RETURN_IF_ERROR(ReadFileToString(path, &text, uint64_t{1} << 30));
  nlohmann::json root;
  TFG_RETURN_IF_ERROR(ParseJson(text, path, &root));
  if (!root.is_object()) {
    return DataLossError(path, ": expected a JSON object {label: index}");
  }
  labels->clear();
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (!it.value().is_number_integer()) {
      return DataLossError(path, ": index of label '", PrintableText(it.key()),
                           "' is not an integer");
    }
    // nlohmann keeps integers above INT64_MAX unsigned; get<int64_t>() would
    // wrap them (2^64 - 1 becomes -1, "no label"), silently wrong data.
    if (it.value().is_number_unsigned() &&
        it.value().get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
      return DataLossError(path, ": index of label '", PrintableText(it.key()), "' is ",
                           it.value().get<uint64_t>(),
                           ", past the largest int64 label (2^63 - 1)");
    }
    (*labels)[it.key()] = it.value().get<int64_t>();
  }
  return Status::Ok();
}

Status ResolveLabel(const Item& item, const std::string& meta_path,
                    const LabelMap* labels, int64_t* label) {
  if (item.label_json.empty()) {
    *label = -1;
    return Status::Ok();
  }
  nlohmann::json value = nlohmann::json::parse(item.label_json, nullptr,
                                               /*allow_exceptions=*/false);
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
    // get<int64_t>() would wrap it (2^64 - 1 becomes -1, "no label").
    return InvalidArgumentError(meta_path, ": id '", PrintableText(item.id), "' has label ",
                                value.get<uint64_t>(),
                                ", past the largest int64 label (2^63 - 1)");
  }
  if (value.is_number_integer()) {
    *label = value.get<int64_t>();
    return Status::Ok();
  }
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    if (labels == nullptr) {
      return InvalidArgumentError(
          meta_path, ": id '", PrintableText(item.id), "' has the string label '",
          PrintableText(name),
          "' but there is no label2idx.json in the directory; pass a mapping "
          "(label2idx=) or disable labels (label_field=None)");
    }
    auto it = labels->find(name);
    if (it == labels->end()) {
      return InvalidArgumentError(meta_path, ": id '", PrintableText(item.id), "' has label '",
                                  PrintableText(name), "' which is not in the label mapping");
    }
    *label = it->second;
    return Status::Ok();
  }
  return InvalidArgumentError(meta_path, ": id '", PrintableText(item.id),
                              "' has a label that is neither an integer nor a "
                              "string: ",
                              item.label_json);
}

Status LoadDirectoryLabelMap(const std::string& directory, LabelMap* labels, bool* found) {
  *found = false;
  const std::string path = JoinPath(directory, kLabelMapName);
  FileInfo info;
  const Status stat = StatPath(path, &info);
  if (stat.code() == StatusCode::kNotFound) return Status::Ok();
  TFG_RETURN_IF_ERROR(stat);
  TFG_RETURN_IF_ERROR(LoadLabelMap(path, labels));
  *found = true;
  return Status::Ok();
}

namespace {

// Calls `visit(chunk, item, label)` for each item that has a label, its JSON
// parsed (a discarded value where it does not parse), in directory order;
// false as soon as `visit` returns false (the sink wants no more).
template <typename Visit>
bool ForEachLabel(const GulpDirectory& directory, Visit&& visit) {
  for (const ChunkIndex& chunk : directory.chunks) {
    for (const Item& item : chunk.items) {
      if (item.label_json.empty()) continue;
      const nlohmann::json label =
          nlohmann::json::parse(item.label_json, nullptr, /*allow_exceptions=*/false);
      if (!visit(chunk, item, label)) return false;
    }
  }
  return true;
}

}  // namespace

void CheckLabels(const GulpDirectory& directory, const ProblemSink& sink) {
  // Integer labels past int64, which GulpDataset refuses (ResolveLabel), with
  // or without a label map.
  int64_t too_large = 0;
  const bool more = ForEachLabel(directory, [&](const ChunkIndex& chunk, const Item& item,
                                                const nlohmann::json& label) {
    if (!label.is_number_unsigned() ||
        label.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()}) {
      return true;
    }
    if (++too_large > kMaxListed) return true;
    Problem p = Finding(true, StatusCode::kInvalidArgument, chunk.meta_path,
                        internal::StrCat("has label ", label.get<uint64_t>(),
                                         ", past the largest int64 label (2^63 - 1)"));
    p.id = item.id;
    p.has_id = true;
    return sink(p);
  });
  if (!more) return;
  if (too_large > kMaxListed) {
    if (!sink(Finding(true, StatusCode::kInvalidArgument, directory.path,
                      internal::StrCat("... and ", too_large - kMaxListed,
                                       " more labels past the largest int64 label")))) {
      return;
    }
  }
  const std::string path = JoinPath(directory.path, kLabelMapName);
  FileInfo info;
  if (StatPath(path, &info).code() == StatusCode::kNotFound) return;
  LabelMap labels;
  const Status loaded = LoadLabelMap(path, &labels);
  if (!loaded.ok()) {
    sink(Finding(true, loaded.code(), path, WithoutPath(path, loaded.message())));
    return;
  }
  std::set<std::string> reported;
  int64_t unlisted = 0;
  const bool all = ForEachLabel(directory, [&](const ChunkIndex&, const Item& item,
                                               const nlohmann::json& label) {
    if (!label.is_string()) return true;
    const std::string name = label.get<std::string>();
    if (labels.count(name) || reported.count(name)) return true;
    reported.insert(name);
    if (static_cast<int64_t>(reported.size()) > kMaxListed) {
      ++unlisted;
      return true;
    }
    Problem p = Finding(false, StatusCode::kOk, path,
                        "has no entry for label '" + PrintableText(name) +
                            "' (used by this id and maybe others); GulpDataset "
                            "fails on it");
    p.id = item.id;
    p.has_id = true;
    return sink(p);
  });
  if (!all) return;
  if (unlisted > 0) {
    sink(Finding(false, StatusCode::kOk, path,
                 internal::StrCat("... and ", unlisted, " more labels without an entry")));
  }
}

namespace {

// `text` as a JSON string, non-ASCII and control characters escaped: field
// names come from the file and may hold any bytes.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', /*ensure_ascii=*/true,
                                   nlohmann::json::error_handler_t::replace);
}

}  // namespace

Status RequireLabelField(const GulpDirectory& directory,
                         const std::string& label_field) {
  // Items whose meta is looked at for the fields to list: enough to name a
  // dataset's fields, bounded for a million-item directory.
  constexpr int64_t kItemsSampled = 1000;
  int64_t items = 0, sampled = 0;
  std::set<std::string> fields;
  for (const ChunkIndex& chunk : directory.chunks) {
    for (const Item& item : chunk.items) {
      if (!item.label_json.empty()) return Status::Ok();
      ++items;
      if (sampled >= kItemsSampled) continue;
      ++sampled;
      const nlohmann::json meta =
          nlohmann::json::parse(item.meta_json, nullptr, /*allow_exceptions=*/false);
      if (!meta.is_object()) continue;
      for (auto it = meta.begin(); it != meta.end(); ++it) {
        if (!it.value().is_null()) fields.insert(it.key());
      }
    }
  }
  std::string listed;
  int64_t count = 0;
  for (const std::string& field : fields) {
    if (count == kMaxListed) {
      listed += internal::StrCat(", ... (", fields.size() - kMaxListed, " more)");
      break;
    }
    listed += (count++ ? ", " : "") + Quoted(field);
  }
  const std::string found =
      fields.empty() ? "their meta_data[0] holds no field"
                     : internal::StrCat("fields their meta_data[0] has: ", listed);
  return InvalidArgumentError(
      directory.path, ": label_field ", Quoted(label_field), ": none of the ", items,
      " items has it (", found,
      "); pass one of those, or label_field=None to read without labels");
}

}  // namespace gulp
}  // namespace tfg

