#include "cc/gulp/problem.h"

#include <sstream>

#include "cc/util/printable_text.h"
namespace tfg {
namespace gulp {

std::string Problem::Describe() const {
  std::ostringstream out;
  out << file;
  if (has_id) out << ": id '" << PrintableText(id) << "'";
  if (frame >= 0) out << " frame " << frame;
  if (offset >= 0) out << " at byte offset " << offset;
  out << ": " << message;
  return out.str();
}

std::string WithoutPath(const std::string& file, const std::string& message) {
  const std::string prefix = file + ": ";
  return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size())
                                                         : message;
}

ProblemSink CollectProblems(std::vector<Problem>* found) {
  return [found](const Problem& problem) {
    found->push_back(problem);
    return true;
  };
}

ProblemSink StopAtFirstError(Status* first) {
  *first = Status::Ok();
  return [first](const Problem& problem) {
    if (!problem.error) return true;
    *first = problem.ToStatus();
    return false;
  };
}

}  // namespace gulp
}  // namespace tfg
