// The index of one gulp chunk: the parsed `.gmeta` of a `data_N.gulp` file.
//
// Layout (see docs/formats.md): the `.gulp` file holds JPEG frames back to
// back, each padded with NUL bytes to a multiple of 4; the `.gmeta` file is one
// JSON object {id: {"frame_info": [[offset, pad, total_length], ...],
// "meta_data": [{...}, ...]}} in storage order. Every offset and length is
// checked against the `.gulp` file's size before anything trusts it.
#ifndef TF_GULP_CC_GULP_CHUNK_INDEX_H_
#define TF_GULP_CC_GULP_CHUNK_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

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
};

struct ChunkIndex {
  std::string data_path;  // the .gulp file
  std::string meta_path;  // the .gmeta file
  uint64_t data_size = 0;
  std::vector<Item> items;  // storage order
};

// Parses `meta_json_text` (the contents of `meta_path`) and validates every
// frame against `data_size`, the size of `data_path`. `label_field` names the
// meta_data key whose JSON value is copied to Item::label_json ("" for none).
Status ParseChunkIndex(const std::string& meta_json_text,
                       const std::string& meta_path,
                       const std::string& data_path, uint64_t data_size,
                       const std::string& label_field, ChunkIndex* index);

// Reads both files from disk and calls ParseChunkIndex.
Status LoadChunkIndex(const std::string& meta_path, const std::string& data_path,
                      const std::string& label_field, ChunkIndex* index);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_CHUNK_INDEX_H_
