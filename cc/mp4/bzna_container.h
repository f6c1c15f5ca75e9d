// The Benzina reading of a container: which samples make up entry i (its
// image, its target), and what makes a container unreadable as a dataset.
//
// This is the one place that judges a .bzna file: the dataset op
// (tf_gulp/ops/bzna/bzna_index_op.cc), the Python readers and `tf-gulp bzna info`
// (through tf_gulp._core) all call it, so they accept and refuse the same
// files with the same messages. TensorFlow-free.
#ifndef TF_GULP_CC_MP4_BZNA_CONTAINER_H_
#define TF_GULP_CC_MP4_BZNA_CONTAINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/io/random_access_file.h"
#include "cc/mp4/mp4_reader.h"
#include "cc/util/status.h"

namespace tfg {
namespace mp4 {

inline constexpr char kInputTrack[] = "bzna_input";
inline constexpr char kTargetTrack[] = "bzna_target";
inline constexpr uint64_t kTargetBytes = 8;  // an int64 LE per target sample

// Per entry: the byte range of its sample (the per-image MP4) in the
// bzna_input track, and the byte offset of its 8-byte target (-1 for entries
// without a target).
struct EntryIndex {
  std::string file;
  uint64_t entries = 0;      // samples of bzna_input: the dataset's size
  uint64_t targets = 0;      // samples of bzna_target; entries [targets, entries) have none
  std::vector<uint64_t> offsets, sizes;
  std::vector<int64_t> target_offsets;
};

// The entry index of `movie`. Judgements:
//   - no bzna_input or bzna_target track: NotFound naming the tracks the file
//     has;
//   - a bzna_target track longer than bzna_input: InvalidArgument (a shorter
//     one is how Benzina's toolchain marks entries without a target);
//   - a target sample that is not 8 bytes: DataLoss naming it and its offset.
//   - a split of the split table that is not a [start, stop] range within
//     the entries, or a "classes" that is not a list of strings: DataLoss
//     naming the field and the bzsp box's offset.
// Sample ranges were already checked against the file by the reader.
Status BuildEntryIndex(const Movie& movie, EntryIndex* index);

// ReadMovie + BuildEntryIndex.
Status ReadEntryIndex(const RandomAccessFile& file, EntryIndex* index);

}  // namespace mp4
}  // namespace tfg

#endif  // TF_GULP_CC_MP4_BZNA_CONTAINER_H_
