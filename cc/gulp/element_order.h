// The elements a GulpDataset yields and the order it yields them in.
//
// Shuffling is I/O-aware: the chunk order is permuted, then the items of a
// window of `chunk_window` consecutive (permuted) chunks are permuted together.
// Reads stay within a few chunks at a time (friendly to disks and the page
// cache) while a batch still mixes items from several chunks, which matters
// because ingest tools often write chunks class by class. The order is a pure
// function of (seed, epoch): no state to save beyond the epoch and position.
#ifndef TF_GULP_CC_GULP_ELEMENT_ORDER_H_
#define TF_GULP_CC_GULP_ELEMENT_ORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/gulp/gulp_directory.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct ElementRef {
  int32_t chunk = 0;  // index into GulpDirectory::chunks
  int32_t item = 0;   // index into ChunkIndex::items
  int64_t label = -1;
};

// Lists the directory's items in storage order (chunks in numeric order),
// keeping only `ids` when it is not empty (an id that is not in the directory
// is a NotFound error), and resolves each label through `labels`.
Status BuildElements(const GulpDirectory& directory,
                     const std::vector<std::string>& ids,
                     const LabelMap* labels, bool resolve_labels,
                     std::vector<ElementRef>* elements);

// The order of one epoch: a permutation of [0, elements.size()). Identity
// when `shuffle` is false.
std::vector<int64_t> EpochOrder(const std::vector<ElementRef>& elements,
                                bool shuffle, uint64_t seed, int64_t epoch,
                                int64_t chunk_window);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_ELEMENT_ORDER_H_
