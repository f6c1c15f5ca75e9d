// Writes an FFRecord file that the reference implementation (HFAiLab's
// ffrecord) reads, byte for byte the layout it writes itself.
//
// Crash safety: the records go to a temporary sibling (`<path>.tmp-XXXXXX`,
// which no reader takes for an FFRecord file), the header is written last,
// the file is fsynced and only then renamed to `path` (and the directory
// fsynced). An interrupted or abandoned writer, or one that was given fewer
// records than it promised, leaves no file under `path`: never a file that
// looks valid but is not. (The reference writer leaves a zeroed header in
// place and aborts the process.) A writer killed before it finished leaves
// only its temporary file; the next writer of the same `path` removes such
// leftovers (each live writer holds an flock on its own, so only those of
// dead writers go).
#ifndef TF_GULP_CC_FFRECORD_FFRECORD_WRITER_H_
#define TF_GULP_CC_FFRECORD_FFRECORD_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace ffrecord {

class FFRecordWriter {
 public:
  // Prepares to write `num_records` records to `path`. When creating the
  // temporary file fails, `*os_errno` (if given) receives the errno.
  static Status Create(const std::string& path, int64_t num_records,
                       std::unique_ptr<FFRecordWriter>* writer, int* os_errno = nullptr);
  // Discards the temporary file unless Finish() succeeded.
  ~FFRecordWriter();
  FFRecordWriter(const FFRecordWriter&) = delete;
  FFRecordWriter& operator=(const FFRecordWriter&) = delete;

  // Appends one record of `length` bytes. InvalidArgument once all
  // `num_records` records have been written (nothing is written then).
  Status Append(const void* data, size_t length);

  // Writes the header, fsyncs and renames the file into place. When fewer
  // records than promised were appended, or anything fails, the temporary
  // file is removed and an error returned: `path` is never created.
  Status Finish();

  // Removes the temporary file; `path` is not touched. Idempotent.
  void Discard();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  int64_t num_records() const { return num_records_; }
  int64_t count() const { return static_cast<int64_t>(checksums_.size()); }
  bool open() const { return fd_ >= 0; }
  // The errno of the system call that made Append or Finish fail (ENOSPC on
  // a full disk, EROFS, ...), 0 when none did: the caller can tell the
  // output's fault from a wrong use and name it (tf_gulp's OutputError).
  int os_errno() const { return os_errno_; }

 private:
  FFRecordWriter() = default;
  Status Flush();
  Status WriteAt(uint64_t offset, const char* data, size_t length);

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  int64_t num_records_ = 0;
  uint64_t header_bytes_ = 0;
  uint64_t end_ = 0;  // file offset after the last appended record (buffer included)
  std::vector<uint32_t> checksums_;
  std::vector<uint64_t> offsets_;
  std::string buffer_;  // small records are gathered into larger writes
  int os_errno_ = 0;
};

}  // namespace ffrecord
}  // namespace tfg

#endif  // TF_GULP_CC_FFRECORD_FFRECORD_WRITER_H_
