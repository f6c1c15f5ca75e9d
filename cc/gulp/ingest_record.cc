#include "cc/gulp/ingest_record.h"

#include <nlohmann/json.hpp>

#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "cc/util/json_text.h"

namespace tfg {
namespace gulp {
namespace {

// Types are checked before any get<>(): get<>() throws on a mismatch
// ("complete": "no"), and an exception here would end the process.
IngestRun ParseRun(const nlohmann::json& run) {
  IngestRun out;
  if (!run.is_object()) return out;
  const auto first = run.find("first_chunk");
  const auto count = run.find("num_chunks");
  const auto complete = run.find("complete");
  if (first == run.end() || count == run.end() || complete == run.end() ||
      !first->is_number_integer() || !count->is_number_integer() ||
      !complete->is_boolean()) {
    return out;
  }
  if (first->get<int64_t>() < 0 || count->get<int64_t>() < 0) return out;
  out.first_chunk = first->get<int64_t>();
  out.num_chunks = count->get<int64_t>();
  out.complete = complete->get<bool>();
  const auto skipped = run.find("skipped");
  if (skipped != run.end() && skipped->is_array()) {
    out.skipped = static_cast<int64_t>(skipped->size());
  }
  out.valid = true;
  return out;
}

}  // namespace

const IngestRun* IngestRecord::Unfinished() const {
  if (!valid() || runs.empty()) return nullptr;
  const IngestRun& last = runs.back();
  return last.valid && !last.complete ? &last : nullptr;
}

void ParseIngestRecord(const std::string& text, const std::string& path,
                       IngestRecord* record) {
  *record = IngestRecord();
  record->present = true;
  nlohmann::json root;
  const Status parsed = ParseJson(text, path, &root);
  if (!parsed.ok()) {
    record->problem = parsed.message();
    return;
  }
  const auto format = root.is_object() ? root.find("format") : root.end();
  const auto runs = root.is_object() ? root.find("runs") : root.end();
  if (!root.is_object() || format == root.end() || *format != kIngestRecordFormat ||
      runs == root.end() || !runs->is_array()) {
    record->problem = path + ": not a tf_gulp ingest record";
    return;
  }
  record->runs.reserve(runs->size());
  for (const nlohmann::json& run : *runs) record->runs.push_back(ParseRun(run));
}

void ReadIngestRecord(const std::string& directory, IngestRecord* record) {
  *record = IngestRecord();
  const std::string path = JoinPath(directory, kIngestRecordName);
  std::string text;
  const Status read = ReadFileToString(path, &text, 1 << 26);
  if (read.code() == StatusCode::kNotFound) return;
  if (!read.ok()) {
    record->present = true;
    record->problem = read.message();
    return;
  }
  ParseIngestRecord(text, path, record);
}

}  // namespace gulp
}  // namespace tfg
