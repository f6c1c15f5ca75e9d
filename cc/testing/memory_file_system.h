// Test helper: an object store in memory, registered as the remote file system
// (SetRemoteFileSystem) so a test reads "scheme://..." paths the way the TF op
// library's bridge does: through ReadAt, a request per read, not through file
// descriptors. It counts the reads in flight, for the tests that check reads
// go out in parallel, and can wait a round trip in each.
#ifndef TF_GULP_CC_TESTING_MEMORY_FILE_SYSTEM_H_
#define TF_GULP_CC_TESTING_MEMORY_FILE_SYSTEM_H_

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cc/io/file_system.h"
#include "cc/util/status.h"

namespace tfg {
namespace testing {

class MemoryFileSystem : public FileSystem {
 public:
  // `read_parallelism`: what the file system says is worth having in flight;
  // `round_trip`: how long each read waits before it answers.
  explicit MemoryFileSystem(int read_parallelism = 4,
                            std::chrono::milliseconds round_trip = std::chrono::milliseconds(0))
      : read_parallelism_(read_parallelism), round_trip_(round_trip) {}

  class File : public RandomAccessFile {
   public:
    File(std::string path, const std::string* data, const MemoryFileSystem* fs)
        : RandomAccessFile(std::move(path), data->size(), fs), data_(data), fs_(fs) {}
    Status ReadAt(uint64_t offset, size_t n, void* dst) const override {
      const int now = ++fs_->in_flight;
      int seen = fs_->max_in_flight.load();
      while (now > seen && !fs_->max_in_flight.compare_exchange_weak(seen, now)) {
      }
      if (fs_->round_trip_.count() > 0) std::this_thread::sleep_for(fs_->round_trip_);
      --fs_->in_flight;
      if (offset + n > data_->size()) return DataLossError(path(), ": past the end");
      std::memcpy(dst, data_->data() + offset, n);
      return Status::Ok();
    }

   private:
    const std::string* data_;
    const MemoryFileSystem* fs_;
  };

  Status NewRandomAccessFile(const std::string& path,
                             std::unique_ptr<RandomAccessFile>* file) override {
    auto it = files.find(path);
    if (it == files.end()) return NotFoundError(path, ": no such object");
    file->reset(new File(path, &it->second, this));
    return Status::Ok();
  }
  Status Stat(const std::string& path, FileInfo* info) override {
    auto it = files.find(path);
    if (it == files.end()) return NotFoundError(path, ": no such object");
    info->is_regular = true;
    info->size = it->second.size();
    return Status::Ok();
  }
  Status ListDirectory(const std::string&, std::vector<std::string>*) override {
    return InvalidArgumentError("not used");
  }
  int read_parallelism() const override { return read_parallelism_; }
  // Each read on a thread of its own, as TensorFlow's thread pool would run it.
  Scheduler scheduler() const override {
    return [](std::function<void()> fn) { std::thread(std::move(fn)).detach(); };
  }

  // The objects: path -> contents.
  std::map<std::string, std::string> files;
  mutable std::atomic<int> in_flight{0};
  mutable std::atomic<int> max_in_flight{0};

 private:
  const int read_parallelism_;
  const std::chrono::milliseconds round_trip_;
};

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_CC_TESTING_MEMORY_FILE_SYSTEM_H_
