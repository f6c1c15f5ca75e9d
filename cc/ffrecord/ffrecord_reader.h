// Random access to the records of one or more FFRecord files, read in batches
// straight into the caller's buffers.
//
// The files are concatenated into one index space (record 0 of the second
// file follows the last record of the first). Opening parses and validates
// every header (cc/ffrecord/ffrecord_index.h); afterwards the reader is
// immutable, and any number of threads may read through it at once, each
// with its own ReadContext (which owns the io_uring ring and scratch memory).
//
// A batch read submits every record's read at once (up to the queue depth),
// checks each record's CRC-32 as soon as its bytes arrive (so checksumming
// overlaps the reads still in flight), and reports a status per record. Given
// a scheduler, a large io_uring batch is split into contiguous slices read on
// several threads, each slice still one submission: copying out of the page
// cache and checksumming then use every core.
#ifndef TF_GULP_CC_FFRECORD_FFRECORD_READER_H_
#define TF_GULP_CC_FFRECORD_FFRECORD_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cc/ffrecord/ffrecord_index.h"
#include "cc/io/aligned_buffer.h"
#include "cc/io/batch_reader.h"
#include "cc/io/random_access_file.h"
#include "cc/util/status.h"

namespace tfg {
namespace ffrecord {

enum class AccessPattern {
  kNormal,      // the kernel's default read-ahead
  kRandom,      // POSIX_FADV_RANDOM: no read-ahead (random batches)
  kSequential,  // POSIX_FADV_SEQUENTIAL: more read-ahead
};

struct ReaderOptions {
  // Verify each file's metadata checksum when opening it and each record's
  // checksum when reading it.
  bool check_data = true;
  // Read records with O_DIRECT, bypassing the page cache: each record's
  // block-aligned covering range is read into an aligned buffer and the
  // record copied out of it. For data read once per epoch that should not
  // evict everything else; the page cache is usually faster otherwise.
  bool direct_io = false;
  AccessPattern access = AccessPattern::kNormal;
};

// Where one record is.
struct RecordLocation {
  int64_t index = 0;  // in the concatenated index space
  int file = 0;
  int64_t local_index = 0;  // within its file
  uint64_t offset = 0;
  uint64_t length = 0;
  uint32_t checksum = 0;
};

// Per-thread state for reads: the batch reader(s) and reusable scratch memory.
class ReadContext {
 public:
  static Status Create(const BatchReaderOptions& options, std::unique_ptr<ReadContext>* context);
  BatchReader* io() { return io_[0].get(); }

 private:
  friend class FFRecordReader;
  // io_[0] always exists; more are made on demand when a large batch is read in slices on
  // several threads (one io_uring each: a ring must not be shared between threads).
  BatchReader* io(size_t slice);
  BatchReaderOptions options_;
  std::vector<std::unique_ptr<BatchReader>> io_;
  std::vector<ReadRequest> requests_;
  std::vector<uint64_t> bounce_offsets_;  // O_DIRECT: each record's place in bounce_
  AlignedBuffer bounce_;
};

class FFRecordReader {
 public:
  // O_DIRECT offsets, lengths and buffers are aligned to this (enough for
  // every device with logical blocks up to 4 KiB).
  static constexpr uint64_t kDirectIoAlignment = 4096;

  // Opens and validates `files` (see ExpandPaths for directories).
  static Status Open(const std::vector<std::string>& files, const ReaderOptions& options,
                     std::unique_ptr<FFRecordReader>* reader);
  ~FFRecordReader();
  FFRecordReader(const FFRecordReader&) = delete;
  FFRecordReader& operator=(const FFRecordReader&) = delete;

  int64_t num_records() const { return starts_.back(); }
  size_t num_files() const { return indexes_.size(); }
  // All records' bytes over every file, headers excluded.
  uint64_t record_bytes() const {
    uint64_t total = 0;
    for (const FileIndex& index : indexes_) total += index.record_bytes();
    return total;
  }
  const FileIndex& file_index(size_t i) const { return indexes_[i]; }
  const ReaderOptions& options() const { return options_; }
  // One line per file whose header predates the metadata checksum
  // (meta_crc == 0): it was opened without checking its header.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Index of the first record of file i; starts(num_files()) == num_records().
  int64_t file_start(size_t i) const { return starts_[i]; }

  // OutOfRange when `index` is not in [0, num_records()).
  Status Locate(int64_t index, RecordLocation* location) const;
  // Locates `n` records (a batch) into locations[0, n). Their index entries
  // are fetched from memory together, not one cache miss after another (a
  // random batch's entries are scattered over the whole index). OutOfRange
  // for the first index out of range; `locations` is then partly filled.
  Status Locate(const int64_t* indices, size_t n, RecordLocation* locations) const;

  // Reads the `n` located records into dsts[i] (room for locations[i].length
  // bytes each) and sets statuses[i]. All reads go to `context`'s batch
  // reader at once. `parallelism` lets large batches be read (and checked)
  // on several threads: in slices for io_uring, read by read for pread.
  void Read(ReadContext* context, const RecordLocation* locations, size_t n, char* const* dsts,
            Status* statuses, const ReadParallelism& parallelism = {}) const;

  // Recomputes every file's metadata checksum (files without one pass).
  Status ValidateMetadata() const;

  // Closes the files; later reads fail. Waits for reads in progress.
  void Close();
  bool closed() const;

 private:
  FFRecordReader() = default;
  // Locate's two steps: the file and local index (checking the range), then
  // the offset, length and checksum from that file's index.
  Status FindRecord(int64_t index, RecordLocation* location) const;
  void FillLocation(RecordLocation* location) const;
  Status CheckRecord(const RecordLocation& location, const char* data) const;
  Status Annotate(const RecordLocation& location, const Status& status) const;

  ReaderOptions options_;
  std::vector<FileIndex> indexes_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;
  std::vector<int> direct_fds_;  // O_DIRECT descriptors, or -1
  // Set when a file is not local: it has no descriptor for the batch reader,
  // so every read goes through ReadAt, in parallel on this file system.
  const FileSystem* remote_fs_ = nullptr;
  std::vector<int64_t> starts_{0};
  std::vector<std::string> warnings_;
  // Reads hold it shared; Close holds it exclusively, so a descriptor is never
  // closed (and its number reused) under a read in flight.
  mutable std::shared_mutex mu_;
  bool closed_ = false;
};

}  // namespace ffrecord
}  // namespace tfg

#endif  // TF_GULP_CC_FFRECORD_FFRECORD_READER_H_
