// Translates the core library's status into TensorFlow's, keeping the code
// (NotFound, InvalidArgument, DataLoss, ...) so Python sees the matching
// tf.errors exception.
#ifndef TF_GULP_OPS_FRAMEWORK_CORE_STATUS_H_
#define TF_GULP_OPS_FRAMEWORK_CORE_STATUS_H_

#include "absl/status/status.h"
#include "cc/util/printable_text.h"
#include "cc/util/status.h"

namespace tf_gulp {

// Messages quoting file content are escaped where they are made
// (cc/util/printable_text.h); the whole message is also made valid UTF-8 here,
// as the last resort (a file name listed from a directory may be any bytes):
// TensorFlow hands it to Python as a str, and a message that does not decode
// would surface as a UnicodeDecodeError instead of this error.
#define TFG_SAME_AS_ABSL(code, value, factory)                                 \
  static_assert(static_cast<int>(absl::StatusCode::code) == value, \
                "tfg::StatusCode::" #code " is not absl's");
TFG_ERROR_CODES(TFG_SAME_AS_ABSL)
#undef TFG_SAME_AS_ABSL

inline absl::Status ToTfStatus(const tfg::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const std::string message = tfg::ValidUtf8(status.message());
  // OutOfRange means "end of sequence" to tf.data; a bad frame index is an
  // invalid argument from the user's point of view. Every other code is kept.
  if (status.code() == tfg::StatusCode::kOutOfRange) return absl::InvalidArgumentError(message);
  return absl::Status(static_cast<absl::StatusCode>(status.code()), message);
}

}  // namespace tf_gulp

#define TFG_TF_RETURN_IF_ERROR(expr) \
  TF_RETURN_IF_ERROR(::tf_gulp::ToTfStatus(expr))

#endif  // TF_GULP_OPS_FRAMEWORK_CORE_STATUS_H_
