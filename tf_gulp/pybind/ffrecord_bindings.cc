// tf_gulp._core.FFRecordReader / FFRecordWriter: the C++ FFRecord reader and
// writer for tf_gulp.ffrecord.FileReader / FileWriter.
//
// read() allocates one numpy uint8 array per record at its exact size, then
// releases the GIL and reads every record of the batch straight into those
// arrays with one batched submission. Several Python threads may read at
// once: each takes a ReadContext (an io_uring) from a small pool.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cc/ffrecord/ffrecord_index.h"
#include "cc/ffrecord/ffrecord_reader.h"
#include "cc/ffrecord/ffrecord_writer.h"
#include "cc/io/batch_reader.h"
#include "cc/util/printable_text.h"
#include "tf_gulp/pybind/status.h"

namespace py = pybind11;

namespace tf_gulp {
namespace pybind {
namespace {

namespace ffr = ::tfg::ffrecord;

ffr::AccessPattern ParseAccess(const std::string& name) {
  if (name == "normal") return ffr::AccessPattern::kNormal;
  if (name == "random") return ffr::AccessPattern::kRandom;
  if (name == "sequential") return ffr::AccessPattern::kSequential;
  throw py::value_error("access must be 'normal', 'random' or 'sequential', got '" + name + "'");
}

class PyReader {
 public:
  PyReader(const std::vector<std::string>& paths, bool check_data, bool direct_io,
           const std::string& io_engine, int queue_depth, const std::string& access) {
    ThrowIfError(tfg::ParseIoEngine(io_engine, &io_options_.engine));
    io_options_.queue_depth = queue_depth;
    ffr::ReaderOptions options;
    options.check_data = check_data;
    options.direct_io = direct_io;
    options.access = ParseAccess(access);
    std::vector<std::string> files;
    ThrowIfError(ffr::ExpandPaths(paths, &files));
    std::unique_ptr<ffr::FFRecordReader> reader;
    {
      py::gil_scoped_release release;
      tfg::Status s = ffr::FFRecordReader::Open(files, options, &reader);
      if (!s.ok()) {
        py::gil_scoped_acquire acquire;
        RaiseStatus(s);
      }
    }
    reader_ = std::move(reader);
    files_ = files;
    // Fail now, not on the first read, when the engine cannot be had.
    ReturnContext(TakeContext());
  }

  int64_t n() const { return reader_->num_records(); }
  // File names are bytes, as the file system gives them (a part listed from a
  // directory need not be UTF-8): returned as os.fsdecode() would, so they
  // round-trip through open() and os.fsencode().
  py::list files() const {
    py::list out;
    for (const std::string& f : files_) {
      PyObject* name =
          PyUnicode_DecodeFSDefaultAndSize(f.data(), static_cast<Py_ssize_t>(f.size()));
      if (name == nullptr) throw py::error_already_set();
      out.append(py::reinterpret_steal<py::object>(name));
    }
    return out;
  }
  // Warnings name files: their bytes that are not UTF-8 escaped.
  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const std::string& w : reader_->warnings()) out.push_back(tfg::ValidUtf8(w));
    return out;
  }
  bool check_data() const { return reader_->options().check_data; }
  bool closed() const { return reader_->closed(); }
  std::string io_engine() {
    auto context = TakeContext();
    std::string name = tfg::IoEngineName(context->io()->engine());
    ReturnContext(std::move(context));
    return name;
  }

  ffr::RecordLocation Locate(int64_t index) const {
    ffr::RecordLocation loc;
    ThrowIfError(reader_->Locate(index, &loc));
    return loc;
  }

  py::list Read(const std::vector<int64_t>& indices) {
    if (reader_->closed()) throw py::value_error("read from a closed FileReader");
    const size_t n = indices.size();
    std::vector<ffr::RecordLocation> locations(n);
    ThrowIfError(reader_->Locate(indices.data(), n, locations.data()));
    py::list out(n);
    std::vector<char*> dsts(n);
    for (size_t i = 0; i < n; ++i) {
      py::array_t<uint8_t> array(static_cast<py::ssize_t>(locations[i].length));
      dsts[i] = reinterpret_cast<char*>(array.mutable_data());
      out[i] = std::move(array);
    }
    std::vector<tfg::Status> statuses(n);
    {
      py::gil_scoped_release release;
      auto context = TakeContext();
      reader_->Read(context.get(), locations.data(), n, dsts.data(), statuses.data());
      ReturnContext(std::move(context));
    }
    for (const tfg::Status& s : statuses) ThrowIfError(s);
    return out;
  }

  py::array ReadOne(int64_t index) {
    py::list one = Read({index});
    return py::reinterpret_borrow<py::array>(one[0]);
  }

  py::array_t<int64_t> Offsets(size_t file) const {
    const ffr::FileIndex& f = FileIndexAt(file);
    py::array_t<int64_t> out(static_cast<py::ssize_t>(f.offsets.size()));
    for (size_t i = 0; i < f.offsets.size(); ++i) {
      out.mutable_data()[i] = static_cast<int64_t>(f.offsets[i]);
    }
    return out;
  }

  py::array_t<uint32_t> Checksums(size_t file) const {
    const ffr::FileIndex& f = FileIndexAt(file);
    py::array_t<uint32_t> out(static_cast<py::ssize_t>(f.checksums.size()));
    std::copy(f.checksums.begin(), f.checksums.end(), out.mutable_data());
    return out;
  }

  void Validate() const { ThrowIfError(reader_->ValidateMetadata()); }

  void Close() {
    py::gil_scoped_release release;  // waits for reads in other threads
    reader_->Close();
  }

 private:
  const ffr::FileIndex& FileIndexAt(size_t file) const {
    if (file >= reader_->num_files()) {
      throw py::index_error("file index " + std::to_string(file) + " is out of range: " +
                            std::to_string(reader_->num_files()) + " files");
    }
    return reader_->file_index(file);
  }

  // A context for one read; made on demand, kept for reuse.
  std::unique_ptr<ffr::ReadContext> TakeContext() {
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!pool_.empty()) {
        auto context = std::move(pool_.back());
        pool_.pop_back();
        return context;
      }
    }
    std::unique_ptr<ffr::ReadContext> context;
    tfg::Status s = ffr::ReadContext::Create(io_options_, &context);
    if (!s.ok()) {
      py::gil_scoped_acquire acquire;
      RaiseStatus(s);
    }
    return context;
  }
  void ReturnContext(std::unique_ptr<ffr::ReadContext> context) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (pool_.size() < kMaxPooled) pool_.push_back(std::move(context));
  }

  static constexpr size_t kMaxPooled = 8;
  tfg::BatchReaderOptions io_options_;
  std::unique_ptr<ffr::FFRecordReader> reader_;
  std::vector<std::string> files_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<ffr::ReadContext>> pool_;
};

// A writer's failed system call (a full disk, a read-only file system) as
// OSError(errno, message), which Python makes the errno's subclass
// (PermissionError, ...): tf_gulp.ffrecord turns it into an OutputError naming
// the output. Other failures as ThrowIfError.
void ThrowIfSystemError(const tfg::Status& status, int err) {
  if (status.ok()) return;
  if (err == 0) RaiseStatus(status);
  const std::string& message = status.message();
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()),
                                        "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  PyObject* args = Py_BuildValue("(iN)", err, text);
  if (args == nullptr) throw py::error_already_set();
  PyErr_SetObject(PyExc_OSError, args);
  Py_DECREF(args);
  throw py::error_already_set();
}

class PyWriter {
 public:
  PyWriter(const std::string& path, int64_t n) {
    int err = 0;
    const tfg::Status s = ffr::FFRecordWriter::Create(path, n, &writer_, &err);
    ThrowIfSystemError(s, err);
  }

  void Write(const py::object& data) {
    ByteView bytes(data);
    tfg::Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      s = writer_->Append(bytes.data(), bytes.size());
    }
    ThrowIfSystemError(s, writer_->os_errno());
  }

  void Finish() {
    tfg::Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      s = writer_->Finish();
    }
    ThrowIfSystemError(s, writer_->os_errno());
  }

  void Discard() {
    std::lock_guard<std::mutex> lock(mu_);
    writer_->Discard();
  }

  int64_t count() const { return writer_->count(); }
  int64_t n() const { return writer_->num_records(); }
  bool open() const { return writer_->open(); }
  const std::string& path() const { return writer_->path(); }
  const std::string& temp_path() const { return writer_->temp_path(); }

 private:
  std::mutex mu_;
  std::unique_ptr<ffr::FFRecordWriter> writer_;
};

}  // namespace

void RegisterFFRecord(py::module_& m) {
  py::class_<PyReader>(m, "FFRecordReader")
      .def(py::init<const std::vector<std::string>&, bool, bool, const std::string&, int,
                    const std::string&>(),
           py::arg("paths"), py::arg("check_data") = true, py::arg("direct_io") = false,
           py::arg("io_engine") = "auto", py::arg("queue_depth") = 256,
           py::arg("access") = "normal")
      .def_property_readonly("n", &PyReader::n)
      .def_property_readonly("files", &PyReader::files)
      .def_property_readonly("warnings", &PyReader::warnings)
      .def_property_readonly("check_data", &PyReader::check_data)
      .def_property_readonly("closed", &PyReader::closed)
      .def_property_readonly("io_engine", &PyReader::io_engine)
      .def("locate",
           [](const PyReader& r, int64_t index) {
             const ffr::RecordLocation loc = r.Locate(index);
             return py::make_tuple(loc.file, loc.local_index, loc.offset, loc.length,
                                   loc.checksum);
           },
           "(file, index in file, offset, length, checksum) of a record")
      .def("read", &PyReader::Read, py::arg("indices"))
      .def("read_one", &PyReader::ReadOne, py::arg("index"))
      .def("offsets", &PyReader::Offsets, py::arg("file_index"))
      .def("checksums", &PyReader::Checksums, py::arg("file_index"))
      .def("validate", &PyReader::Validate)
      .def("close", &PyReader::Close);

  py::class_<PyWriter>(m, "FFRecordWriter")
      .def(py::init<const std::string&, int64_t>(), py::arg("path"), py::arg("n"))
      .def("write", &PyWriter::Write, py::arg("data"))
      .def("finish", &PyWriter::Finish)
      .def("discard", &PyWriter::Discard)
      .def_property_readonly("count", &PyWriter::count)
      .def_property_readonly("n", &PyWriter::n)
      .def_property_readonly("open", &PyWriter::open)
      .def_property_readonly("path", &PyWriter::path)
      .def_property_readonly("temp_path", &PyWriter::temp_path);
}

}  // namespace pybind
}  // namespace tf_gulp
