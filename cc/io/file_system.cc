#include "cc/io/file_system.h"

#include <dirent.h>
#include <sys/stat.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace tfg {
namespace {

constexpr char kFileScheme[] = "file://";

// Position of "://" when `path` starts with a URI scheme (letters, digits,
// '+', '-', '.'; a letter first), else npos.
size_t SchemeEnd(const std::string& path) {
  const size_t end = path.find("://");
  if (end == std::string::npos || end == 0) return std::string::npos;
  if (!std::isalpha(static_cast<unsigned char>(path[0]))) return std::string::npos;
  for (size_t i = 1; i < end; ++i) {
    const char c = path[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return std::string::npos;
    }
  }
  return end;
}

Status LocalErrno(int err, const std::string& what, const std::string& path) {
  if (err == ENOENT || err == ENOTDIR) {
    return NotFoundError(path, ": ", what, ": ", std::strerror(err));
  }
  return InvalidArgumentError(path, ": ", what, ": ", std::strerror(err));
}

class Local : public FileSystem {
 public:
  Status NewRandomAccessFile(const std::string& path,
                             std::unique_ptr<RandomAccessFile>* file) override {
    return OpenLocalFile(LocalPath(path), file);
  }

  Status Stat(const std::string& path, FileInfo* info) override {
    struct stat st;
    if (::stat(LocalPath(path).c_str(), &st) != 0) {
      return LocalErrno(errno, "cannot stat", path);
    }
    info->is_directory = S_ISDIR(st.st_mode);
    info->is_regular = S_ISREG(st.st_mode);
    info->size = static_cast<uint64_t>(st.st_size);
    info->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    info->kind = FileKind(st.st_mode);
    return Status::Ok();
  }

  Status ListDirectory(const std::string& path, std::vector<std::string>* names) override {
    names->clear();
    DIR* dir = ::opendir(LocalPath(path).c_str());
    if (dir == nullptr) return LocalErrno(errno, "cannot list directory", path);
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names->push_back(name);
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0) return LocalErrno(err, "cannot list directory", path);
    return Status::Ok();
  }
};

std::atomic<FileSystem*> remote_file_system{nullptr};

}  // namespace

bool IsRemotePath(const std::string& path) {
  const size_t end = SchemeEnd(path);
  return end != std::string::npos && path.compare(0, end + 3, kFileScheme) != 0;
}

std::string LocalPath(const std::string& path) {
  if (path.compare(0, sizeof(kFileScheme) - 1, kFileScheme) == 0) {
    return path.substr(sizeof(kFileScheme) - 1);
  }
  return path;
}

FileSystem* LocalFileSystem() {
  static FileSystem* local = new Local();
  return local;
}

void SetRemoteFileSystem(FileSystem* fs) { remote_file_system.store(fs); }

Status FileSystemFor(const std::string& path, FileSystem** fs) {
  if (!IsRemotePath(path)) {
    *fs = LocalFileSystem();
    return Status::Ok();
  }
  *fs = remote_file_system.load();
  if (*fs == nullptr) {
    return InvalidArgumentError(
        path, ": paths with a URI scheme other than file:// are read through TensorFlow's file "
              "systems, which only tf_gulp's TensorFlow ops can use (tf_gulp.GulpDataset, "
              "FFRecordDataset, BenzinaDataset); this reader reads local files");
  }
  return Status::Ok();
}

Status StatPath(const std::string& path, FileInfo* info) {
  FileSystem* fs = nullptr;
  TFG_RETURN_IF_ERROR(FileSystemFor(path, &fs));
  return fs->Stat(path, info);
}

Status ListDirectory(const std::string& path, std::vector<std::string>* names) {
  FileSystem* fs = nullptr;
  TFG_RETURN_IF_ERROR(FileSystemFor(path, &fs));
  return fs->ListDirectory(path, names);
}

std::string JoinPath(const std::string& directory, const std::string& name) {
  if (!directory.empty() && directory.back() == '/') return directory + name;
  return directory + "/" + name;
}

void ReadInParallel(const FileSystem& fs, int64_t n, const std::function<void(int64_t)>& task) {
  ParallelFor(n, fs.read_parallelism(), fs.scheduler(), task);
}

void ReadInParallel(const RandomAccessFile& file, int64_t n,
                    const std::function<void(int64_t)>& task) {
  ReadInParallel(file.file_system(), n, task);
}

}  // namespace tfg
