#include "cc/io/random_access_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tfg {
namespace {

Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  if (err == ENOENT || err == ENOTDIR) {
    return NotFoundError(path, ": ", what, ": ", std::strerror(err));
  }
  return InvalidArgumentError(path, ": ", what, ": ", std::strerror(err));
}

}  // namespace

Status RandomAccessFile::Open(const std::string& path,
                              std::unique_ptr<RandomAccessFile>* file) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "cannot stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path, ": is a directory, expected a file");
  }
  file->reset(new RandomAccessFile(path, fd, static_cast<uint64_t>(st.st_size)));
  return Status::Ok();
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

Status RandomAccessFile::ReadAt(uint64_t offset, size_t n, void* dst) const {
  char* out = static_cast<char*>(dst);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd_, out + done, n - done,
                          static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return DataLossError(path_, ": read of ", n, " bytes at offset ", offset,
                           " failed: ", std::strerror(errno));
    }
    if (got == 0) {
      return DataLossError(path_, ": unexpected end of file reading ", n,
                           " bytes at offset ", offset, " (file has ",
                           offset + done, " bytes)");
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

Status ReadFileToString(const std::string& path, std::string* contents,
                        uint64_t max_bytes) {
  std::unique_ptr<RandomAccessFile> file;
  TFG_RETURN_IF_ERROR(RandomAccessFile::Open(path, &file));
  if (file->size() > max_bytes) {
    return InvalidArgumentError(path, ": ", file->size(),
                                " bytes is larger than the limit of ",
                                max_bytes, " bytes for this kind of file");
  }
  contents->resize(file->size());
  return file->ReadAt(0, contents->size(), contents->data());
}

}  // namespace tfg
