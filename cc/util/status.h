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

enum class StatusCode {
  kOk = 0,
  kNotFound,
  kInvalidArgument,
  kDataLoss,
  kOutOfRange,
  kInternal,
  kUnavailable,  // a capability this machine lacks (no GPU driver, no io_uring)
  kResourceExhausted,  // out of (device) memory; the message says what to free or configure
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

template <typename... Args>
Status NotFoundError(const Args&... args) {
  return Status(StatusCode::kNotFound, internal::StrCat(args...));
}
template <typename... Args>
Status InvalidArgumentError(const Args&... args) {
  return Status(StatusCode::kInvalidArgument, internal::StrCat(args...));
}
template <typename... Args>
Status DataLossError(const Args&... args) {
  return Status(StatusCode::kDataLoss, internal::StrCat(args...));
}
template <typename... Args>
Status OutOfRangeError(const Args&... args) {
  return Status(StatusCode::kOutOfRange, internal::StrCat(args...));
}
template <typename... Args>
Status InternalError(const Args&... args) {
  return Status(StatusCode::kInternal, internal::StrCat(args...));
}
template <typename... Args>
Status UnavailableError(const Args&... args) {
  return Status(StatusCode::kUnavailable, internal::StrCat(args...));
}
template <typename... Args>
Status ResourceExhaustedError(const Args&... args) {
  return Status(StatusCode::kResourceExhausted, internal::StrCat(args...));
}

}  // namespace tfg

// Returns early from the enclosing function when `expr` is not OK.
#define TFG_RETURN_IF_ERROR(expr)        \
  do {                                   \
    ::tfg::Status _tfg_status = (expr);  \
    if (!_tfg_status.ok()) return _tfg_status; \
  } while (0)

#endif  // TF_GULP_CC_UTIL_STATUS_H_
