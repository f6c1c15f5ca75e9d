// A gulp directory: every chunk's index, in numeric chunk order.
//
// A directory holds `data_<N>.gulp` + `meta_<N>.gmeta` pairs (N a decimal
// integer, any value) and optionally `label2idx.json`. Chunks are ordered by
// N as a number (gulpio2 sorts the names as strings: 0, 1, 10, 2, ...).
#ifndef TF_GULP_CC_GULP_GULP_DIRECTORY_H_
#define TF_GULP_CC_GULP_GULP_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cc/gulp/chunk_index.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct ChunkFiles {
  int64_t number = 0;
  std::string data_path;
  std::string meta_path;
};

// Lists the chunk pairs of `directory` in numeric order. NotFound when the
// directory does not exist, has no chunk, or a `.gmeta` lacks its `.gulp`.
// Writers publish the `.gmeta` last, so a `.gulp` without one is a chunk whose
// write has not finished: it is skipped when an unfinished ingest recorded in
// `.tf_gulp_ingest.json` is writing it (running, or interrupted and waiting to
// be resumed), and is a NotFound error otherwise.
Status ListChunkFiles(const std::string& directory,
                      std::vector<ChunkFiles>* chunks);

struct GulpDirectory {
  std::string path;
  std::vector<ChunkIndex> chunks;  // numeric chunk order
};

// Loads and validates every chunk index. An id that appears in two chunks is
// an InvalidArgument error naming both files.
Status LoadGulpDirectory(const std::string& directory,
                         const std::string& label_field, GulpDirectory* out);

using LabelMap = std::unordered_map<std::string, int64_t>;

// Reads a label2idx.json file ({label: index}).
Status LoadLabelMap(const std::string& path, LabelMap* labels);

// Maps an item's label to an int64: -1 when the item has no label, an
// integer label as is, a string label through `labels`. A string label with no
// entry (or no map at all) is an error rather than a silent -1.
Status ResolveLabel(const Item& item, const std::string& meta_path,
                    const LabelMap* labels, int64_t* label);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_GULP_DIRECTORY_H_
