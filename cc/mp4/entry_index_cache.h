// A process-wide cache of parsed Benzina entry indexes, so a process reads a
// container's index once, not once per use.
//
// Under tf.data service each entry of a pass is its own split (one image), and
// every split rebuilds the per-pass dataset, whose first step is the entry
// index (tf_gulp/ops/bzna/bzna_index_op.cc). Without a cache a worker would read
// and parse the file's moov box (megabytes for ImageNet) once per image.
//
// An entry is keyed by path and is only served while the file's size and
// modification time are those it was read at (one stat per lookup), so a
// rewritten file is read afresh, never served stale. Files whose file system
// reports no modification time (TensorFlow's ram://) are never cached: a
// rewrite of the same size would go unnoticed. TensorFlow-free.
#ifndef TF_GULP_CC_MP4_ENTRY_INDEX_CACHE_H_
#define TF_GULP_CC_MP4_ENTRY_INDEX_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "cc/mp4/bzna_container.h"
#include "cc/util/status.h"

namespace tfg {
namespace mp4 {

class EntryIndexCache {
 public:
  // Holds the indexes of at most `capacity` files (least recently used out).
  explicit EntryIndexCache(size_t capacity) : capacity_(capacity) {}

  // The entry index of the container `path`: cached, or read, judged
  // (BuildEntryIndex) and cached. Errors are never cached.
  Status Get(const std::string& path, std::shared_ptr<const EntryIndex>* index);

  // How many times an index was read from a file (misses), and served from
  // the cache (hits): for tests and benchmarks.
  uint64_t reads() const;
  uint64_t hits() const;

  // The cache the dataset op uses (16 files).
  static EntryIndexCache* Global();

 private:
  struct Entry {
    std::string path;
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    std::shared_ptr<const EntryIndex> index;
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  uint64_t reads_ = 0, hits_ = 0;
};

}  // namespace mp4
}  // namespace tfg

#endif  // TF_GULP_CC_MP4_ENTRY_INDEX_CACHE_H_
