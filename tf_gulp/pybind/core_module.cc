// tf_gulp._core: the TensorFlow-free C++ core, for Python.
//
// The reference-compatible Python APIs (tf_gulp.ffrecord.FileReader /
// FileWriter) call the same code as the TensorFlow kernels through this
// module, without TensorFlow and without paying for eager ops. Each format
// adds its bindings in a file of its own (Register* below).

#include <pybind11/pybind11.h>

#include "cc/io/batch_reader.h"
#include "cc/io/format_sniffer.h"
#include "cc/util/crc32.h"
#include "tf_gulp/pybind/status.h"

namespace py = pybind11;

namespace tf_gulp {
namespace pybind {

void RegisterFFRecord(py::module_& m);  // ffrecord_bindings.cc
void RegisterBzna(py::module_& m);      // bzna_bindings.cc
void RegisterGulp(py::module_& m);      // gulp_bindings.cc
void RegisterWarp(py::module_& m);      // warp_bindings.cc

namespace {
PyObject* g_data_loss_error = nullptr;
}  // namespace

PyObject* DataLossErrorType() { return g_data_loss_error; }

void DefineExceptions(py::module_& m) {
  g_data_loss_error =
      PyErr_NewExceptionWithDoc("tf_gulp._core.DataLossError",
                                "Stored data is corrupt or truncated (a checksum mismatch, a header "
                                "that does not fit the file, an offset past its end). The message "
                                "names the file, the record and the byte offset.",
                                PyExc_ValueError, nullptr);
  if (g_data_loss_error == nullptr) throw py::error_already_set();
  m.add_object("DataLossError", py::reinterpret_borrow<py::object>(g_data_loss_error));
}

void RaiseStatus(const tfg::Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case tfg::StatusCode::kDataLoss:
      type = g_data_loss_error;
      break;
    case tfg::StatusCode::kOutOfRange:
      type = PyExc_IndexError;
      break;
    case tfg::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case tfg::StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    default:
      break;
  }
  // Messages quote file contents (a JSON parser's view of bad bytes, a track name), which need
  // not be UTF-8: undecodable bytes are escaped, never a UnicodeDecodeError instead of the error.
  const std::string& message = status.message();
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()),
                                        "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  PyErr_SetObject(type, text);
  Py_DECREF(text);
  throw py::error_already_set();
}

}  // namespace pybind
}  // namespace tf_gulp

PYBIND11_MODULE(_core, m) {
  m.doc() = "tf_gulp's TensorFlow-free C++ core (internal; use tf_gulp.ffrecord).";
  tf_gulp::pybind::DefineExceptions(m);
  m.def(
      "crc32",
      [](py::object data, uint32_t value) {
        tf_gulp::pybind::ByteView bytes(data);
        py::gil_scoped_release release;
        return tfg::Crc32(value, bytes.data(), bytes.size());
      },
      py::arg("data"), py::arg("value") = 0,
      "CRC-32 as zlib.crc32 computes it (libdeflate, hardware-accelerated).");
  m.def(
      "sniff_path",
      [](const std::string& path) {
        tfg::DataFormat format;
        {
          py::gil_scoped_release release;
          format = tfg::SniffPath(path);
        }
        return py::make_tuple(tfg::DataFormatName(format), tfg::DataFormatAdvice(format));
      },
      py::arg("path"),
      "(what `path` holds, what reads it) as cc/io/format_sniffer.h judges it, e.g. "
      "(\"an FFRecord file\", \"read it with tf_gulp.FFRecordDataset\").");
  m.def("io_uring_available", &tfg::IoUringAvailable,
        "Whether this process can use io_uring (else reads fall back to pread).");
  tf_gulp::pybind::RegisterFFRecord(m);
  tf_gulp::pybind::RegisterBzna(m);
  tf_gulp::pybind::RegisterGulp(m);
  tf_gulp::pybind::RegisterWarp(m);
}
