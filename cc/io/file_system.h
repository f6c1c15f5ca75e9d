// Where files are read from: the local file system, or another one plugged in
// by the layer above (the TF op library plugs in TensorFlow's file systems, so
// gs://, s3://, hdfs://, ram:// ... paths work; nothing here knows TF).
//
// A path names the local file system unless it has a URI scheme
// ("scheme://...") other than file://; "file:///a/b" is the local "/a/b".
// Local files keep their fast paths (pread, io_uring batches, O_DIRECT: see
// RandomAccessFile::fd()); other files are read through ReadAt only, and
// callers read many ranges of them at once with ReadInParallel, because one
// request to an object store costs a round trip of milliseconds.
#ifndef TF_GULP_CC_IO_FILE_SYSTEM_H_
#define TF_GULP_CC_IO_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cc/io/random_access_file.h"
#include "cc/util/parallel_for.h"
#include "cc/util/status.h"

namespace tfg {

struct FileInfo {
  bool is_directory = false;
  // A regular file (or an object of an object store): something to read.
  // False for directories and for local FIFOs, devices and sockets.
  bool is_regular = false;
  uint64_t size = 0;
  // Last modification, in nanoseconds since the epoch; 0 when the file system
  // reports none (TensorFlow's ram:// does not), so callers caching what they
  // read from a file (cc/mp4/entry_index_cache.h) can tell it was rewritten.
  int64_t mtime_ns = 0;
  // For errors about local files that are not regular: "a FIFO (named pipe)".
  const char* kind = "a regular file";
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // NotFound when `path` does not exist.
  virtual Status NewRandomAccessFile(const std::string& path,
                                     std::unique_ptr<RandomAccessFile>* file) = 0;
  // NotFound when `path` does not exist.
  virtual Status Stat(const std::string& path, FileInfo* info) = 0;
  // The names (not paths) of the entries of directory `path`.
  virtual Status ListDirectory(const std::string& path,
                               std::vector<std::string>* names) = 0;

  // How many reads of this file system are worth having in flight at once,
  // and where to run them (ReadInParallel). 1 and no scheduler: one at a time.
  virtual int read_parallelism() const { return 1; }
  virtual Scheduler scheduler() const { return nullptr; }
};

// True when `path` names a file outside the local file system
// ("scheme://..." with a scheme other than "file").
bool IsRemotePath(const std::string& path);

// "file:///a/b" -> "/a/b"; any other path unchanged.
std::string LocalPath(const std::string& path);

// The file system that reads `path`: the local one, or the one registered for
// other schemes. FailedPrecondition-like InvalidArgument naming the path when
// it is remote and nothing is registered (the TF op library is not loaded).
Status FileSystemFor(const std::string& path, FileSystem** fs);

// The local file system (never null).
FileSystem* LocalFileSystem();

// Installs the file system used for every non-local path (process-wide; the
// TF op library calls it once when it is loaded). Not owned: must outlive
// every use.
void SetRemoteFileSystem(FileSystem* fs);

// Convenience wrappers over FileSystemFor(path)->...
Status StatPath(const std::string& path, FileInfo* info);
Status ListDirectory(const std::string& path, std::vector<std::string>* names);

// `directory` + "/" + `name` (no doubled slash).
std::string JoinPath(const std::string& directory, const std::string& name);

// Calls task(i) for i in [0, n) with as many in flight as `fs` is worth
// (its read_parallelism, on its scheduler); one at a time for local files.
void ReadInParallel(const FileSystem& fs, int64_t n,
                    const std::function<void(int64_t)>& task);

// The same for the file system of `file` (local files: one at a time).
void ReadInParallel(const RandomAccessFile& file, int64_t n,
                    const std::function<void(int64_t)>& task);

}  // namespace tfg

#endif  // TF_GULP_CC_IO_FILE_SYSTEM_H_
