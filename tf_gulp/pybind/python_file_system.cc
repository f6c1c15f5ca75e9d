#include "tf_gulp/pybind/python_file_system.h"

#include <pybind11/stl.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "tf_gulp/pybind/status.h"

namespace py = pybind11;

namespace tf_gulp {
namespace pybind {
namespace {

// The Python exception `e` as a Status naming `path`: FileNotFoundError is
// NotFound, anything else Unavailable (the store could not be read).
tfg::Status FromPython(py::error_already_set& e, const std::string& path,
                       const std::string& what) {
  if (e.matches(PyExc_FileNotFoundError)) {
    return tfg::NotFoundError(path, ": no such file or directory");
  }
  // The exception's type and text, not e.what()'s traceback.
  const std::string type = py::str(e.type().attr("__name__"));
  const std::string text = py::str(e.value());
  return tfg::UnavailableError(path, ": ", what, " failed: ", type, ": ", text);
}

class PythonFileSystem;

class PythonFile : public tfg::RandomAccessFile {
 public:
  PythonFile(std::string path, uint64_t size, const tfg::FileSystem* fs,
             const py::object* impl)
      : RandomAccessFile(std::move(path), size, fs), impl_(impl) {}

  tfg::Status ReadAt(uint64_t offset, size_t n, void* dst) const override {
    py::gil_scoped_acquire acquire;
    try {
      py::object got = impl_->attr("read")(path(), offset, n);
      ByteView bytes(got);
      if (bytes.size() != n) {
        return tfg::DataLossError(path(), ": unexpected end of file reading ", n,
                                  " bytes at byte offset ", offset, " (got ",
                                  bytes.size(), ")");
      }
      std::memcpy(dst, bytes.data(), n);
    } catch (py::error_already_set& e) {
      return FromPython(e, path(), "read");
    }
    return tfg::Status::Ok();
  }

 private:
  const py::object* impl_;
};

// Reads of a remote store are round trips of milliseconds: the core issues
// this many at once (the indexes of a directory's chunks), each on a thread of
// its own that takes the GIL only to call into Python; tf.io.gfile releases
// it while the request is in flight.
constexpr int kRemoteReadParallelism = 16;

class PythonFileSystem : public tfg::FileSystem {
 public:
  explicit PythonFileSystem(py::object impl) : impl_(std::move(impl)) {}

  int read_parallelism() const override { return kRemoteReadParallelism; }
  // A thread per helper of tfg::ParallelFor (at most kRemoteReadParallelism - 1
  // per call, each gone when the call returns its last task).
  tfg::Scheduler scheduler() const override {
    return [](std::function<void()> work) { std::thread(std::move(work)).detach(); };
  }

  tfg::Status NewRandomAccessFile(
      const std::string& path, std::unique_ptr<tfg::RandomAccessFile>* file) override {
    tfg::FileInfo info;
    TFG_RETURN_IF_ERROR(Stat(path, &info));
    if (info.is_directory) {
      return tfg::InvalidArgumentError(path, ": is a directory, expected a regular file");
    }
    *file = std::make_unique<PythonFile>(path, info.size, this, &impl_);
    return tfg::Status::Ok();
  }

  tfg::Status Stat(const std::string& path, tfg::FileInfo* info) override {
    py::gil_scoped_acquire acquire;
    try {
      py::tuple got = impl_.attr("stat")(path);
      info->is_directory = got[0].cast<bool>();
      info->is_regular = !info->is_directory;
      info->size = got[1].cast<uint64_t>();
      info->mtime_ns = got[2].cast<int64_t>();
      info->kind = info->is_directory ? "a directory" : "a regular file";
    } catch (py::error_already_set& e) {
      return FromPython(e, path, "stat");
    } catch (const py::cast_error& e) {
      return tfg::InternalError(path, ": stat returned an unexpected value: ", e.what());
    }
    return tfg::Status::Ok();
  }

  tfg::Status ListDirectory(const std::string& path,
                            std::vector<std::string>* names) override {
    py::gil_scoped_acquire acquire;
    try {
      *names = impl_.attr("listdir")(path).cast<std::vector<std::string>>();
    } catch (py::error_already_set& e) {
      return FromPython(e, path, "listing");
    } catch (const py::cast_error& e) {
      return tfg::InternalError(path, ": listdir returned an unexpected value: ", e.what());
    }
    return tfg::Status::Ok();
  }

 private:
  py::object impl_;
};

}  // namespace

void SetPythonRemoteFileSystem(py::object impl) {
  // Never freed: the core may hold files of it for the rest of the process,
  // and a py::object must not be released after the interpreter is gone.
  static PythonFileSystem* current = nullptr;
  current = new PythonFileSystem(std::move(impl));
  tfg::SetRemoteFileSystem(current);
}

}  // namespace pybind
}  // namespace tf_gulp
