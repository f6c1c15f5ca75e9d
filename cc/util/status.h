// A small, TensorFlow-free status type for the core library.
//
// The TF kernels in tf_gulp/ops translate it into tensorflow::Status with the
// matching error code, so the core never needs a TensorFlow header and stays
// usable from standalone programs (GPU harnesses, benchmarks, unit tests).
#ifndef TF_GULP_CC_UTIL_STATUS_H_
#define TF_GULP_CC_UTIL_STATUS_H_

#include <sstream>
#include <string>
#include <utility>

namespace tfg {

// Each error code as X(code, absl's canonical value, its factory). One list
// makes the enum and the factories below; the values are absl's, so the
// TensorFlow glue converts by value (tf_gulp/ops/framework/core_status.h
// checks each against absl).
//   kUnavailable: a capability this machine lacks (no GPU driver, no io_uring).
//   kResourceExhausted: out of (device) memory; the message says what to free
//   or configure.
#define TFG_ERROR_CODES(X)                       \
  X(kInvalidArgument, 3, InvalidArgumentError)   \
  X(kNotFound, 5, NotFoundError)                 \
  X(kResourceExhausted, 8, ResourceExhaustedError) \
  X(kOutOfRange, 11, OutOfRangeError)            \
  X(kInternal, 13, InternalError)                \
  X(kUnavailable, 14, UnavailableError)          \
  X(kDataLoss, 15, DataLossError)

enum class StatusCode {
  kOk = 0,
#define TFG_ENUMERATOR(code, value, factory) code = value,
  TFG_ERROR_CODES(TFG_ENUMERATOR)
#undef TFG_ENUMERATOR
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace internal {
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace internal

#define TFG_FACTORY(code, value, factory)                 \
  template <typename... Args>                             \
  Status factory(const Args&... args) {                   \
    return Status(StatusCode::code, internal::StrCat(args...)); \
  }
TFG_ERROR_CODES(TFG_FACTORY)
#undef TFG_FACTORY

}  // namespace tfg

// Returns early from the enclosing function when `expr` is not OK.
#define TFG_RETURN_IF_ERROR(expr)        \
  do {                                   \
    ::tfg::Status _tfg_status = (expr);  \
    if (!_tfg_status.ok()) return _tfg_status; \
  } while (0)

#endif  // TF_GULP_CC_UTIL_STATUS_H_
