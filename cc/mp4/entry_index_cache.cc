#include "cc/mp4/entry_index_cache.h"

#include <utility>

#include "cc/io/file_system.h"
#include "cc/io/format_sniffer.h"
#include "cc/io/random_access_file.h"

namespace tfg {
namespace mp4 {

Status EntryIndexCache::Get(const std::string& path, std::shared_ptr<const EntryIndex>* index) {
  FileInfo info;
  TFG_RETURN_IF_ERROR(StatPath(path, &info));
  const bool cacheable = info.mtime_ns != 0 && capacity_ > 0;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->path != path) continue;
      if (it->size == info.size && it->mtime_ns == info.mtime_ns) {
        entries_.splice(entries_.begin(), entries_, it);
        ++hits_;
        *index = entries_.front().index;
        return Status::Ok();
      }
      entries_.erase(it);  // rewritten since it was read
      break;
    }
  }
  // Read outside the lock: other files (and other lookups) need not wait.
  // Two threads missing on the same file at once both read it; the result is
  // the same.
  std::unique_ptr<RandomAccessFile> file;
  auto read = std::make_shared<EntryIndex>();
  Status opened = RandomAccessFile::Open(path, &file);
  if (opened.ok()) opened = ReadEntryIndex(*file, read.get());
  // A folder or a file of another format: what it is and what reads it.
  TFG_RETURN_IF_ERROR(ExplainOpenFailure(opened, path, DataReader::kBenzina));
  std::lock_guard<std::mutex> lock(mu_);
  ++reads_;
  // Cached under the size and time seen before the read: if the file changed
  // in between, the next lookup sees a newer time and reads it again.
  if (cacheable && file->size() == info.size) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->path == path) {
        entries_.erase(it);
        break;
      }
    }
    entries_.push_front(Entry{path, info.size, info.mtime_ns, read});
    while (entries_.size() > capacity_) entries_.pop_back();
  }
  *index = std::move(read);
  return Status::Ok();
}

uint64_t EntryIndexCache::reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

uint64_t EntryIndexCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

EntryIndexCache* EntryIndexCache::Global() {
  static EntryIndexCache* cache = new EntryIndexCache(16);
  return cache;
}

}  // namespace mp4
}  // namespace tfg
