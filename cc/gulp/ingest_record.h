// The ingest record (`.tf_gulp_ingest.json`) as readers judge it.
//
// tf_gulp.gulp.GulpIngestor writes the record (tf_gulp/gulp/ingest_record.py):
// {"format": "tf_gulp ingest record", "version": 1, "runs": [{"first_chunk":
// N, "num_chunks": C, "complete": bool, "skipped": [...], ...}, ...]}, one run
// per ingest into the directory, the last one the current. This is the one
// reading of its schema: the directory rules (gulp_directory.cc) use it to
// tell a chunk still being written from a damaged directory, and the Python
// ingestor validates a record through it (tf_gulp._core) before resuming.
#ifndef TF_GULP_CC_GULP_INGEST_RECORD_H_
#define TF_GULP_CC_GULP_INGEST_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tfg {
namespace gulp {

constexpr char kIngestRecordName[] = ".tf_gulp_ingest.json";
constexpr char kIngestRecordFormat[] = "tf_gulp ingest record";

struct IngestRun {
  // False for a run without integers first_chunk >= 0 and num_chunks >= 0 and
  // a boolean "complete": it tells nothing and is ignored (with a warning).
  bool valid = false;
  // Chunks [first_chunk, first_chunk + num_chunks). Numbers from a file: kept
  // as a range, never expanded (a damaged record claiming 10^15 chunks must
  // not allocate anything).
  int64_t first_chunk = 0;
  int64_t num_chunks = 0;
  bool complete = false;
  int64_t skipped = 0;  // inputs the run skipped as bad (len of "skipped")

  bool Contains(int64_t n) const {
    return valid && n >= first_chunk && n - first_chunk < num_chunks;
  }
};

struct IngestRecord {
  bool present = false;  // the file exists
  // Why a present record is not a valid one ("" when it is). An invalid
  // record is treated as absent.
  std::string problem;
  std::vector<IngestRun> runs;

  bool valid() const { return present && problem.empty(); }
  // The last run, when it is valid and unfinished (its chunks may be being
  // written); nullptr otherwise.
  const IngestRun* Unfinished() const;
};

// Judges `text`, the contents of the record at `path`.
void ParseIngestRecord(const std::string& text, const std::string& path,
                       IngestRecord* record);

// Reads `directory`'s record, if any (any file system). Never fails: a record
// that cannot be read sets `problem`.
void ReadIngestRecord(const std::string& directory, IngestRecord* record);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_INGEST_RECORD_H_
