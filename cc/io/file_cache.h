// A small, thread-safe cache of open files, most recently used kept.
//
// A gulp directory can have thousands of chunks; keeping them all open would
// exhaust file descriptors, while reopening a chunk for every clip costs an
// open(2) per element. Unshuffled and chunk-window reads are chunk-local; a
// uniform shuffle is not, so its callers keep more files open.
#ifndef TF_GULP_CC_IO_FILE_CACHE_H_
#define TF_GULP_CC_IO_FILE_CACHE_H_

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cc/io/random_access_file.h"
#include "cc/util/status.h"

namespace tfg {

class FileCache {
 public:
  explicit FileCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Returns the open file for `path`, opening it when needed.
  Status Get(const std::string& path, std::shared_ptr<RandomAccessFile>* file) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == path) {
        entries_.splice(entries_.begin(), entries_, it);
        *file = entries_.front().second;
        return Status::Ok();
      }
    }
    std::unique_ptr<RandomAccessFile> opened;
    TFG_RETURN_IF_ERROR(RandomAccessFile::Open(path, &opened));
    entries_.emplace_front(path, std::shared_ptr<RandomAccessFile>(std::move(opened)));
    if (entries_.size() > capacity_) entries_.pop_back();
    *file = entries_.front().second;
    return Status::Ok();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<RandomAccessFile>>> entries_;
};

}  // namespace tfg

#endif  // TF_GULP_CC_IO_FILE_CACHE_H_
