// Reading one entry of a Benzina container by its position: the bytes of its
// per-image MP4 (a sample of the bzna_input track) and its target, each with
// one exact pread. What BenzinaDataset's kernel reads per element
// (tf_gulp/ops/bzna/bzna_dataset_op.cc), as FFRecordReader is FFRecordDataset's.
//
// The entry index comes from cc/mp4/bzna_container (the one judgement of a
// container), through the process's EntryIndexCache: every re-creation of a
// dataset over one file (a repeat(), an interleave, a tf.data service worker)
// parses its moov box once. Every read is checked against the file's size
// first, and a read that still fails (the file shrank after it was opened) is
// an error naming the file, the entry and the byte offset. TensorFlow-free.
#ifndef TF_GULP_CC_MP4_BZNA_READER_H_
#define TF_GULP_CC_MP4_BZNA_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "cc/io/random_access_file.h"
#include "cc/mp4/bzna_container.h"
#include "cc/util/status.h"

namespace tfg {
namespace mp4 {

class EntryReader {
 public:
  // Opens the container `path` and its entry index (EntryIndexCache::Global:
  // judged by BuildEntryIndex, a file of another format named as such).
  static Status Open(const std::string& path, std::unique_ptr<EntryReader>* reader);

  // A reader of `file` by `index` (which must describe `file`; the reads are
  // still checked against its size).
  EntryReader(std::unique_ptr<RandomAccessFile> file, std::shared_ptr<const EntryIndex> index)
      : file_(std::move(file)), index_(std::move(index)) {}

  const std::string& path() const { return file_->path(); }
  uint64_t entries() const { return index_->entries; }
  // The byte size and offset of entry `entry`'s sample (entry < entries()).
  uint64_t sample_size(uint64_t entry) const { return index_->sizes[entry]; }
  uint64_t sample_offset(uint64_t entry) const { return index_->offsets[entry]; }

  // Reads entry `entry`'s sample (sample_size(entry) bytes) into `sample`
  // and its target into `*target` (-1 for an entry without one). Errors:
  // InvalidArgument for an entry outside the file's, DataLoss for a range
  // past the end of the file or a read that fails, naming the file, the
  // entry and the byte offset.
  Status Read(uint64_t entry, char* sample, int64_t* target) const;

  // How errors name the entry: "FILE: sample I (byte offset O)", also what
  // the decoders are told (decode_hevc's `what`).
  std::string Describe(uint64_t entry) const;

 private:
  // Reads `size` bytes at `offset` for `what` (a description of the range).
  Status ReadRange(uint64_t offset, uint64_t size, const std::string& what, void* dst) const;

  const std::unique_ptr<RandomAccessFile> file_;
  const std::shared_ptr<const EntryIndex> index_;
};

}  // namespace mp4
}  // namespace tfg

#endif  // TF_GULP_CC_MP4_BZNA_READER_H_
