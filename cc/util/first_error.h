// The first error of many concurrent reporters, kept once: what an
// asynchronous op reports when several of its callbacks (copies, decode
// tasks) may fail at the same time on different threads. Reporting an error
// from each callback straight into a shared status is a data race and lets a
// later error overwrite the first.
//
// Templated on the status type so that TensorFlow glue (absl::Status) and the
// TensorFlow-free GPU bodies (tfg::Status) share it; S needs ok(), a default
// (OK) value and copying.
#ifndef TF_GULP_CC_UTIL_FIRST_ERROR_H_
#define TF_GULP_CC_UTIL_FIRST_ERROR_H_

#include <mutex>

namespace tfg {

template <typename S>
class FirstError {
 public:
  // Keeps `status` if it is an error and none was kept before; returns
  // whether it was kept. OK statuses are ignored. Thread safe.
  bool Note(const S& status) {
    if (status.ok()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return false;
    first_ = status;
    failed_ = true;
    return true;
  }

  bool failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

  // The kept error, or OK.
  S status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return first_;
  }

 private:
  mutable std::mutex mu_;
  bool failed_ = false;
  S first_;
};

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_FIRST_ERROR_H_
