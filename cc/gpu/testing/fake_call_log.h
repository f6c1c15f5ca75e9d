// What the fake libraries (fake_nvdec.h, fake_nvjpeg.h) share: every call in
// order, calls failed on request, the rules their users broke, and the locked
// accessors tests read them through. `Result` is the library's status type;
// `kSuccess` what a call returns unless failed, `kFailure` what FailCall makes
// it return unless told otherwise.
#ifndef TF_GULP_CC_GPU_TESTING_FAKE_CALL_LOG_H_
#define TF_GULP_CC_GPU_TESTING_FAKE_CALL_LOG_H_

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tfg {
namespace gpu {
namespace testing {

template <typename Result, Result kSuccess, Result kFailure>
class FakeCallLog {
 public:
  // Makes the `nth` (1-based) later call of `call` (e.g. "cuvidMapVideoFrame")
  // return `result` without doing anything.
  void FailCall(const std::string& call, int nth, Result result = kFailure) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    failures[call][seen[call] + nth] = result;
  }

  // Every call in order, e.g. "cuvidMapVideoFrame(decoder=1, surface=2)"; a
  // call failed by FailCall ends " -> failed".
  std::vector<std::string> calls() const {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    return log;
  }
  // The rules broken so far (empty = the user behaved).
  std::vector<std::string> violations() const {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    return broken;
  }
  // Index in calls() of the first call whose text starts with `prefix`
  // at or after position `from`; -1 if none.
  int Find(const std::string& prefix, int from = 0) const {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    for (size_t i = static_cast<size_t>(std::max(from, 0)); i < log.size(); ++i) {
      if (log[i].compare(0, prefix.size(), prefix) == 0) return static_cast<int>(i);
    }
    return -1;
  }
  // How many calls' texts start with `prefix`.
  int Count(const std::string& prefix) const {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    int n = 0;
    for (const std::string& call : log) n += call.compare(0, prefix.size(), prefix) == 0;
    return n;
  }

  // ----- for the fakes' C functions
  // Logs a call; returns the result to give (a scheduled failure or kSuccess).
  Result Enter(const std::string& name, const std::string& args) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    const int n = ++seen[name];
    log.push_back(name + "(" + args + ")");
    auto f = failures.find(name);
    if (f != failures.end()) {
      auto hit = f->second.find(n);
      if (hit != f->second.end()) {
        log.back() += " -> failed";
        return hit->second;
      }
    }
    return kSuccess;
  }
  void Violation(const std::string& what) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    broken.push_back(what);
  }

  mutable std::recursive_mutex mutex;
  std::vector<std::string> log;
  std::vector<std::string> broken;
  std::map<std::string, int> seen;  // calls per name
  std::map<std::string, std::map<int, Result>> failures;
};

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_FAKE_CALL_LOG_H_
