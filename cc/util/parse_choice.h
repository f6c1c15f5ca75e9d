// An option given as a string (an op attr, a _core argument) turned into its
// enum value: one loop and one error message for every such option.
#ifndef TF_GULP_CC_UTIL_PARSE_CHOICE_H_
#define TF_GULP_CC_UTIL_PARSE_CHOICE_H_

#include <string>
#include <utility>
#include <vector>

#include "cc/util/status.h"

namespace tfg {

// Sets `*value` to the value `name` names among `choices` (name, value);
// else InvalidArgument "<what> must be 'a', 'b' or 'c', got 'name'", the
// wording of the Python-side checks (tf_gulp/ops/op_attrs.py).
template <typename E>
Status ParseChoice(const char* what, const std::string& name,
                   const std::vector<std::pair<const char*, E>>& choices, E* value) {
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (name == choices[i].first) {
      *value = choices[i].second;
      return Status::Ok();
    }
    if (i > 0) listed += i + 1 < choices.size() ? ", " : " or ";
    listed += std::string("'") + choices[i].first + "'";
  }
  return InvalidArgumentError(what, " must be ", listed, ", got '", name, "'");
}

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_PARSE_CHOICE_H_
