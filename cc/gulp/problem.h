// What is wrong with a gulp directory, found once and judged once.
//
// The gulp rules (cc/gulp/chunk_index.cc for one chunk, gulp_directory.cc for
// the directory and its ingest record) report each finding to a ProblemSink.
// Readers (GulpDataset, tf_gulp.gulp.GulpDirectory/GulpChunk through
// tf_gulp._core) stop at the first error and raise it; `tf-gulp check` and
// `tf-gulp info` collect every finding. So every entry point refuses exactly
// the directories the others refuse, with the same message.
#ifndef TF_GULP_CC_GULP_PROBLEM_H_
#define TF_GULP_CC_GULP_PROBLEM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct Problem {
  // An error: readers refuse the directory. A warning: readers cope (they
  // skip or ignore what it names), but something is unfinished or surprising.
  bool error = true;
  // The Status code readers raise for an error.
  StatusCode code = StatusCode::kDataLoss;
  std::string file;  // the path it is about (a file, or the directory)
  std::string id;    // the item, when it is about one (has_id)
  bool has_id = false;
  int64_t frame = -1;   // the frame, or -1
  int64_t offset = -1;  // the byte offset in `file`, or -1
  std::string message;

  // "<file>: id '<id>' frame <f> at byte offset <o>: <message>".
  std::string Describe() const;
  // Describe() as a Status with `code` (errors only).
  Status ToStatus() const { return Status(code, Describe()); }
};

// Receives each finding; returns false to stop looking.
using ProblemSink = std::function<bool(const Problem&)>;

// `message` without a leading "<file>: " (statuses of the I/O and JSON layers
// start with the path; a Problem names it once).
std::string WithoutPath(const std::string& file, const std::string& message);

// A sink that keeps every finding in `*found` and never stops (tf-gulp check).
ProblemSink CollectProblems(std::vector<Problem>* found);

// A sink for readers: ignores warnings, keeps the first error in `*first` and
// stops there.
ProblemSink StopAtFirstError(Status* first);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_PROBLEM_H_
