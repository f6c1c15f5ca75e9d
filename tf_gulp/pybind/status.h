// Core statuses as Python exceptions, for the pybind11 module tf_gulp._core.
#ifndef TF_GULP_PYBIND_STATUS_H_
#define TF_GULP_PYBIND_STATUS_H_

#include <pybind11/pybind11.h>

#include "cc/util/status.h"

namespace tf_gulp {
namespace pybind {

// tf_gulp._core.DataLossError (a ValueError): corrupt or truncated data. Set
// by the module initializer.
PyObject* DataLossErrorType();
void DefineExceptions(pybind11::module_& m);

// Raises the Python exception matching `status` (with the GIL held):
// DataLoss -> DataLossError, OutOfRange -> IndexError, NotFound ->
// FileNotFoundError, InvalidArgument -> ValueError, others -> RuntimeError.
[[noreturn]] void RaiseStatus(const tfg::Status& status);

inline void ThrowIfError(const tfg::Status& status) {
  if (!status.ok()) RaiseStatus(status);
}

// The bytes of any C-contiguous object with the buffer protocol (bytes,
// bytearray, memoryview, numpy arrays of any dtype), held for the lifetime
// of this object (so the GIL may be released while they are used).
// Non-contiguous buffers raise BufferError.
class ByteView {
 public:
  explicit ByteView(const pybind11::handle& object) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) {
      throw pybind11::error_already_set();
    }
  }
  ~ByteView() { PyBuffer_Release(&view_); }
  ByteView(const ByteView&) = delete;
  ByteView& operator=(const ByteView&) = delete;

  const void* data() const { return view_.buf; }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_;
};

}  // namespace pybind
}  // namespace tf_gulp

#endif  // TF_GULP_PYBIND_STATUS_H_
