// TensorFlow's file systems (gs://, s3://, hdfs://, az:// from plugins,
// ram://, ...) behind the core's FileSystem interface (cc/io/file_system.h),
// installed for every non-local path when this library is loaded. The core
// stays free of TensorFlow headers; local paths never come here.
//
// Reads on these file systems are round trips (milliseconds on an object
// store), so the core issues many at once (ReadInParallel): they run on a
// pool of threads owned here, sized by TF_GULP_REMOTE_READ_THREADS (default
// 32), which is also how many reads are in flight at most per batch.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "tensorflow/core/platform/env.h"
#include "tensorflow/core/platform/file_system.h"
#include "tensorflow/core/platform/threadpool.h"

namespace tf_gulp {
namespace {

constexpr int kDefaultReadThreads = 32;

// TensorFlow status -> core status, keeping "not found" apart (callers turn
// it into their own message) and naming the path.
tfg::Status FromTf(const absl::Status& status, const std::string& path, const char* what) {
  if (status.ok()) return tfg::Status::Ok();
  const std::string detail = status.message().empty()
                                 ? std::string(absl::StatusCodeToString(status.code()))
                                 : std::string(status.message());
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return tfg::NotFoundError(path, ": ", what, ": not found");
    case absl::StatusCode::kDataLoss:
      return tfg::DataLossError(path, ": ", what, ": ", detail);
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
      return tfg::UnavailableError(path, ": ", what, ": ", detail);
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
      return tfg::InternalError(path, ": ", what, ": ", detail);
    default:
      return tfg::InvalidArgumentError(path, ": ", what, ": ", detail);
  }
}

class TfFile : public tfg::RandomAccessFile {
 public:
  TfFile(std::string path, uint64_t size, const tfg::FileSystem* fs,
         std::unique_ptr<tensorflow::RandomAccessFile> file)
      : RandomAccessFile(std::move(path), size, fs), file_(std::move(file)) {}

  tfg::Status ReadAt(uint64_t offset, size_t n, void* dst) const override {
    char* out = static_cast<char*>(dst);
    size_t done = 0;
    while (done < n) {
      absl::string_view got;
      const absl::Status s = file_->Read(offset + done, n - done, &got, out + done);
      // A file system may hand back its own memory instead of filling ours.
      if (!got.empty() && got.data() != out + done) {
        std::memmove(out + done, got.data(), std::min(got.size(), n - done));
      }
      done += std::min(got.size(), n - done);
      if (done == n) break;
      if (absl::IsOutOfRange(s) || (s.ok() && got.empty())) {
        return tfg::DataLossError(path(), ": unexpected end of file reading ", n,
                                  " bytes at offset ", offset, " (file has ", offset + done,
                                  " bytes)");
      }
      if (!s.ok()) {
        return FromTf(s, path(), absl::StrCat("read of ", n, " bytes at offset ", offset).c_str());
      }
    }
    return tfg::Status::Ok();
  }

 private:
  std::unique_ptr<tensorflow::RandomAccessFile> file_;
};

class TfFileSystem : public tfg::FileSystem {
 public:
  TfFileSystem() : threads_(ReadThreads()) {
    pool_ = std::make_unique<tensorflow::thread::ThreadPool>(tensorflow::Env::Default(),
                                                             "tf_gulp_remote_read", threads_);
  }

  tfg::Status NewRandomAccessFile(const std::string& path,
                                  std::unique_ptr<tfg::RandomAccessFile>* file) override {
    tfg::FileInfo info;
    tfg::Status found = Stat(path, &info);
    if (found.code() == tfg::StatusCode::kNotFound) {
      return tfg::NotFoundError(path, ": cannot open: no such file");
    }
    if (!found.ok()) return found;
    if (!info.is_regular) {
      return tfg::InvalidArgumentError(path, ": is ", info.kind, ", expected a regular file");
    }
    std::unique_ptr<tensorflow::RandomAccessFile> opened;
    const absl::Status s = tensorflow::Env::Default()->NewRandomAccessFile(path, &opened);
    if (!s.ok()) return FromTf(s, path, "cannot open");
    file->reset(new TfFile(path, info.size, this, std::move(opened)));
    return tfg::Status::Ok();
  }

  tfg::Status Stat(const std::string& path, tfg::FileInfo* info) override {
    tensorflow::FileStatistics stat;
    const absl::Status s = tensorflow::Env::Default()->Stat(path, &stat);
    if (!s.ok()) return FromTf(s, path, "cannot stat");
    info->is_directory = stat.is_directory;
    info->is_regular = !stat.is_directory;
    info->size = stat.is_directory ? 0 : static_cast<uint64_t>(stat.length);
    info->mtime_ns = stat.mtime_nsec;
    info->kind = stat.is_directory ? "a directory" : "a regular file";
    return tfg::Status::Ok();
  }

  tfg::Status ListDirectory(const std::string& path, std::vector<std::string>* names) override {
    names->clear();
    // A trailing slash: object stores list by prefix, and "dir" alone would
    // also match "dir2/...".
    const std::string dir = path.empty() || path.back() == '/' ? path : path + "/";
    const absl::Status s = tensorflow::Env::Default()->GetChildren(dir, names);
    if (!s.ok()) return FromTf(s, path, "cannot list directory");
    // Some file systems report subdirectories with a trailing slash.
    for (std::string& name : *names) {
      while (!name.empty() && name.back() == '/') name.pop_back();
    }
    names->erase(std::remove(names->begin(), names->end(), std::string()), names->end());
    return tfg::Status::Ok();
  }

  int read_parallelism() const override { return threads_; }
  tfg::Scheduler scheduler() const override {
    tensorflow::thread::ThreadPool* pool = pool_.get();
    return [pool](std::function<void()> fn) { pool->Schedule(std::move(fn)); };
  }

 private:
  static int ReadThreads() {
    const char* value = std::getenv("TF_GULP_REMOTE_READ_THREADS");
    if (value == nullptr || *value == '\0') return kDefaultReadThreads;
    const long n = std::strtol(value, nullptr, 10);
    return static_cast<int>(std::clamp<long>(n, 1, 1024));
  }

  const int threads_;
  std::unique_ptr<tensorflow::thread::ThreadPool> pool_;
};

// Installed when the op library is loaded; never destroyed (files opened on
// it may live until the process exits).
const bool kInstalled = [] {
  tfg::SetRemoteFileSystem(new TfFileSystem());
  return true;
}();

}  // namespace
}  // namespace tf_gulp
