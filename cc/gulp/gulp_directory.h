// A gulp directory: every chunk's index, in numeric chunk order.
//
// A directory holds `data_<N>.gulp` + `meta_<N>.gmeta` pairs (N a decimal
// integer, any value) and optionally `label2idx.json`. Chunks are ordered by
// N as a number (gulpio2 sorts the names as strings: 0, 1, 10, 2, ...).
#ifndef TF_GULP_CC_GULP_GULP_DIRECTORY_H_
#define TF_GULP_CC_GULP_GULP_DIRECTORY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/gulp/chunk_index.h"
#include "cc/gulp/ingest_record.h"
#include "cc/gulp/problem.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct ChunkFiles {
  int64_t number = 0;
  std::string data_path;
  std::string meta_path;
};

// What the directory-level rules found: the chunk pairs in numeric order, the
// ingest record, and notes (facts worth telling, neither errors nor warnings).
struct ChunkScan {
  std::vector<ChunkFiles> chunks;
  IngestRecord record;
  std::vector<std::string> notes;
};

// The gulp rules for a directory's files (docs/gulp_dataset.md, "What readers
// refuse"), each finding reported to `sink`. Errors: no such directory, two
// files for one chunk number (data_1.gulp and data_01.gulp), a .gmeta without
// its .gulp, a .gulp without its .gmeta that no unfinished ingest is writing,
// a chunk that a finished ingest recorded and that is now missing, no chunk at
// all. Warnings: temporary files, a .gulp an unfinished ingest is writing
// (skipped), an unfinished ingest, an unreadable ingest record. Writers
// publish the .gmeta last, so a .gulp without one is a chunk whose write has
// not finished, or damage.
void ScanChunkFiles(const std::string& directory, ChunkScan* scan,
                    const ProblemSink& sink, bool require_chunks = true);

struct GulpDirectory {
  std::string path;
  std::vector<ChunkIndex> chunks;  // numeric chunk order
};

// Called after each chunk's index is checked, with the bytes of that index.
using ChunkProgress = std::function<void(uint64_t index_bytes)>;

// Every rule: ScanChunkFiles, CheckChunkFiles for each chunk (indexes read in
// parallel on remote file systems), and ids unique across chunks. `out`
// receives what parsed; `scan` (may be null) the scan.
void CheckGulpDirectory(const std::string& directory,
                        const IndexOptions& options, GulpDirectory* out,
                        ChunkScan* scan, const ProblemSink& sink,
                        const ChunkProgress& progress = nullptr);

// CheckGulpDirectory for readers: the first error as a Status.
Status LoadGulpDirectory(const std::string& directory,
                         const std::string& label_field, GulpDirectory* out);
Status LoadGulpDirectory(const std::string& directory,
                         const IndexOptions& options, GulpDirectory* out);

using LabelMap = std::unordered_map<std::string, int64_t>;

// Reads a label2idx.json file ({label: index}).
Status LoadLabelMap(const std::string& path, LabelMap* labels);

// Reads `directory`'s label2idx.json into `labels` when it has one;
// `found` says whether it has. A label map that is there but unreadable or
// malformed is an error.
Status LoadDirectoryLabelMap(const std::string& directory, LabelMap* labels, bool* found);

// Maps an item's label to an int64: -1 when the item has no label, an
// integer label as is, a string label through `labels`. A string label with no
// entry (or no map at all) is an error rather than a silent -1.
Status ResolveLabel(const Item& item, const std::string& meta_path,
                    const LabelMap* labels, int64_t* label);

// The label rules `tf-gulp check` adds (the dataset applies them when it maps
// labels): label2idx.json, when present, must be a JSON object of integers
// (an error), and each string label of an item (Item::label_json, so load
// with a label_field) should have an entry (a warning: GulpDataset fails on
// that item); an integer label past int64 is an error (GulpDataset refuses
// it), with or without label2idx.json.
void CheckLabels(const GulpDirectory& directory, const ProblemSink& sink);

// InvalidArgument when no item of `directory` (loaded with `label_field`) has
// a non-null `label_field` in its meta_data[0], naming the fields its items
// do have: a label field chosen by the user that no item has is a typo or
// another dataset's field, and would otherwise label every element -1.
Status RequireLabelField(const GulpDirectory& directory,
                         const std::string& label_field);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_GULP_DIRECTORY_H_
