// The index of one gulp chunk: the parsed `.gmeta` of a `data_N.gulp` file.
//
// Layout (docs/formats.md#gulp): the `.gulp` file holds JPEG frames back to
// back, each padded with NUL bytes to a multiple of 4; the `.gmeta` file is one
// JSON object {id: {"frame_info": [[offset, pad, total_length], ...],
// "meta_data": [{...}, ...]}} in storage order. Every offset and length is
// checked against the `.gulp` file's size before anything trusts it.
#ifndef TF_GULP_CC_GULP_CHUNK_INDEX_H_
#define TF_GULP_CC_GULP_CHUNK_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/gulp/problem.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

// Where one JPEG frame lives in the `.gulp` file.
struct FrameRef {
  uint64_t offset = 0;
  uint64_t pad = 0;           // NUL bytes after the JPEG, part of total_length
  uint64_t total_length = 0;  // JPEG bytes + pad
  uint64_t jpeg_length() const { return total_length - pad; }
};

// One video (or image) in a chunk.
struct Item {
  std::string id;
  std::vector<FrameRef> frames;
  // JSON text of meta_data[0] ("{}" when the list is empty).
  std::string meta_json;
  // JSON text of meta_data[0][label_field], empty when absent.
  std::string label_json;
  // JSON text of the whole meta_data list ("[]" when absent); filled only
  // with IndexOptions::keep_all_meta (the gulpio2-compatible Python readers
  // return it; the dataset op needs only meta_data[0]).
  std::string all_meta_json;
};

struct IndexOptions {
  // The meta_data key whose JSON value is copied to Item::label_json ("":
  // none).
  std::string label_field;
  bool keep_all_meta = false;
  // Whether a directory without chunks is an error (GulpDataset: a dataset of
  // nothing is a mistake) or an empty directory (gulpio2's GulpDirectory on a
  // new folder, to write chunks with new_chunks()).
  bool require_chunks = true;
};

struct ChunkIndex {
  std::string data_path;  // the .gulp file
  std::string meta_path;  // the .gmeta file
  uint64_t data_size = 0;
  uint64_t meta_size = 0;  // bytes of the .gmeta read (CheckChunkFiles)
  std::vector<Item> items;  // storage order
};

// The gulp rules for one chunk (docs/gulp_dataset.md, "What readers refuse"):
// parses `meta_json_text` (the contents of `meta_path`), validates every entry
// and frame against `data_size` (the size of `data_path`) and reports each
// finding to `sink`, in file order, until the sink returns false. Errors:
// text that is not a JSON object of entries, an id listed twice, an entry
// without a "frame_info" list (or with a "meta_data" that is not a list), a
// frame that is not [offset, pad, total_length] with pad < total_length, a
// frame past the end of the data file, two frames sharing bytes. Warnings: an
// id without frames or meta_data, bytes of the data file no frame accounts
// for. `index` receives every entry without an error, in storage order.
void CheckChunkIndex(const std::string& meta_json_text,
                     const std::string& meta_path, const std::string& data_path,
                     uint64_t data_size, const IndexOptions& options,
                     ChunkIndex* index, const ProblemSink& sink);

// CheckChunkIndex for readers: the first error, as a Status.
Status ParseChunkIndex(const std::string& meta_json_text,
                       const std::string& meta_path,
                       const std::string& data_path, uint64_t data_size,
                       const std::string& label_field, ChunkIndex* index);

// Reads both files (any file system, cc/io/file_system.h) and calls
// CheckChunkIndex. A data file that is missing or not a regular file, or an
// index that cannot be read, is an error reported to `sink` too.
void CheckChunkFiles(const std::string& meta_path, const std::string& data_path,
                     const IndexOptions& options, ChunkIndex* index,
                     const ProblemSink& sink);

// CheckChunkFiles for readers: the first error, as a Status.
Status LoadChunkIndex(const std::string& meta_path, const std::string& data_path,
                      const IndexOptions& options, ChunkIndex* index);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_CHUNK_INDEX_H_
