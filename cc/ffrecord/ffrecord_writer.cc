#include "cc/ffrecord/ffrecord_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "cc/ffrecord/ffrecord_index.h"
#include "cc/util/crc32.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace ffrecord {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

Status IoError(const std::string& path, const char* what, int err) {
  if (err == ENOENT || err == ENOTDIR) return NotFoundError(path, ": ", what, ": ", std::strerror(err));
  return InvalidArgumentError(path, ": ", what, ": ", std::strerror(err));
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A name no other writer picks: 8 characters from a per-process random key,
// the time and a counter.
std::string TempSuffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t process_key = std::random_device{}() ^ static_cast<uint64_t>(::getpid());
  const uint64_t now = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t bits = HashKey({process_key, now, counter.fetch_add(1)});
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out = ".tmp-";
  for (int i = 0; i < 8; ++i) {
    out.push_back(kAlphabet[bits % 36]);
    bits /= 36;
  }
  return out;
}

// Whether `path` still names the file open as `fd` (a writer that removed
// stale temporary files may have unlinked it before `fd` was locked).
bool StillNames(const std::string& path, int fd) {
  struct stat by_name, by_fd;
  return ::stat(path.c_str(), &by_name) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_name.st_dev == by_fd.st_dev && by_name.st_ino == by_fd.st_ino;
}

// Removes the temporary files `<path>.tmp-XXXXXXXX` that writers killed
// before finishing (kill -9, a crash, a power cut) left behind, so that
// re-running an interrupted job does not pile them up. A live writer holds an
// exclusive flock on its temporary file until it has been renamed into place
// or removed, so only files nobody holds are removed.
void RemoveStaleTemporaries(const std::string& path, const std::string& own) {
  const std::string dir_path = DirectoryOf(path);
  const size_t slash = path.rfind('/');
  const std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() != prefix.size() + 8 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789", prefix.size()) !=
            std::string::npos) {
      continue;  // not a name TempSuffix() makes
    }
    const std::string candidate = dir_path + "/" + name;
    if (candidate == own) continue;
    const int fd = ::open(candidate.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        StillNames(candidate, fd)) {
      ::unlink(candidate.c_str());
    }
    ::close(fd);
  }
  ::closedir(dir);
}

}  // namespace

Status FFRecordWriter::Create(const std::string& path, int64_t num_records,
                              std::unique_ptr<FFRecordWriter>* writer, int* os_errno) {
  uint64_t header_bytes = 0;
  if (!HeaderBytes(num_records, &header_bytes)) {
    return InvalidArgumentError(path, ": cannot write ", num_records,
                                " records: the count must be >= 0 and fit the header");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgumentError(path, ": is a directory");
  }
  std::unique_ptr<FFRecordWriter> w(new FFRecordWriter());
  w->path_ = path;
  w->num_records_ = num_records;
  w->header_bytes_ = header_bytes;
  w->end_ = header_bytes;
  for (int attempt = 0; attempt < 100 && w->fd_ < 0; ++attempt) {
    w->temp_path_ = path + TempSuffix();
    w->fd_ = ::open(w->temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w->fd_ < 0 && errno != EEXIST) {
      if (os_errno != nullptr) *os_errno = errno;
      return IoError(w->temp_path_, "cannot create", errno);
    }
    if (w->fd_ < 0) continue;
    // Held until the file is renamed into place or removed: the mark of a
    // live writer (RemoveStaleTemporaries). Between open and flock another
    // writer may take the new file for a stale one and remove it: then the
    // name no longer leads to it, and we start again.
    if (::flock(w->fd_, LOCK_EX) != 0 || !StillNames(w->temp_path_, w->fd_)) {
      ::close(w->fd_);
      w->fd_ = -1;
    }
  }
  if (w->fd_ < 0) return IoError(w->temp_path_, "cannot create", EEXIST);
  RemoveStaleTemporaries(path, w->temp_path_);
  w->buffer_.reserve(kBufferBytes);
  *writer = std::move(w);
  return Status::Ok();
}

FFRecordWriter::~FFRecordWriter() { Discard(); }

void FFRecordWriter::Discard() {
  if (fd_ < 0) return;
  ::unlink(temp_path_.c_str());  // while still locked
  ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

Status FFRecordWriter::WriteAt(uint64_t offset, const char* data, size_t length) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pwrite(fd_, data + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      os_errno_ = errno;
      return IoError(temp_path_, "write failed", errno);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FFRecordWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  const uint64_t at = end_ - buffer_.size();
  Status s = WriteAt(at, buffer_.data(), buffer_.size());
  buffer_.clear();
  return s;
}

Status FFRecordWriter::Append(const void* data, size_t length) {
  os_errno_ = 0;
  if (fd_ < 0) return InvalidArgumentError(path_, ": the writer is closed");
  if (count() >= num_records_) {
    return InvalidArgumentError(path_, ": all ", num_records_,
                                " records were already written; this one was not");
  }
  const char* bytes = static_cast<const char*>(data);
  if (buffer_.size() + length > kBufferBytes) {
    Status s = Flush();
    if (!s.ok()) {
      Discard();
      return s;
    }
  }
  if (length >= kBufferBytes) {
    Status s = WriteAt(end_, bytes, length);
    if (!s.ok()) {
      Discard();
      return s;
    }
  } else {
    buffer_.append(bytes, length);
  }
  checksums_.push_back(Crc32(0, bytes, length));
  offsets_.push_back(end_);
  end_ += length;
  return Status::Ok();
}

Status FFRecordWriter::Finish() {
  os_errno_ = 0;
  if (fd_ < 0) return InvalidArgumentError(path_, ": the writer is closed");
  if (count() != num_records_) {
    const int64_t written = count();
    Discard();
    return InvalidArgumentError(path_, ": ", written, " records were written but ", num_records_,
                                " were promised; the file was not created");
  }
  Status s = Flush();
  if (s.ok()) {
    std::string header(header_bytes_, '\0');
    const int64_t n = num_records_;
    const uint32_t meta_crc = MetadataChecksum(n, checksums_.data(), offsets_.data());
    std::memcpy(&header[0], &meta_crc, 4);
    std::memcpy(&header[4], &n, 8);
    std::memcpy(&header[kFixedHeaderBytes], checksums_.data(), 4 * checksums_.size());
    std::memcpy(&header[kFixedHeaderBytes + 4 * checksums_.size()], offsets_.data(),
                8 * offsets_.size());
    s = WriteAt(0, header.data(), header.size());
  }
  if (s.ok() && ::fsync(fd_) != 0) {
    os_errno_ = errno;
    s = IoError(temp_path_, "fsync failed", errno);
  }
  if (!s.ok()) {
    Discard();
    return s;
  }
  const int fd = fd_;
  fd_ = -1;
  // The duplicate keeps the lock (it belongs to the open file, shared by both
  // descriptors) until the rename: a finished file is never taken for stale.
  const int lock_fd = ::dup(fd);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_path_.c_str());
    if (lock_fd >= 0) ::close(lock_fd);
    os_errno_ = err;
    return IoError(temp_path_, "close failed", err);
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_path_.c_str());
    if (lock_fd >= 0) ::close(lock_fd);
    os_errno_ = err;
    return IoError(path_, "cannot rename the finished file into place", err);
  }
  if (lock_fd >= 0) ::close(lock_fd);
  // Make the rename itself durable.
  const int dir = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

}  // namespace ffrecord
}  // namespace tfg
