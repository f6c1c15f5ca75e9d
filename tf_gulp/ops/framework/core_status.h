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
inline absl::Status ToTfStatus(const tfg::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const std::string message = tfg::ValidUtf8(status.message());
  switch (status.code()) {
    case tfg::StatusCode::kOk:
      return absl::OkStatus();
    case tfg::StatusCode::kNotFound:
      return absl::NotFoundError(message);
    case tfg::StatusCode::kInvalidArgument:
      return absl::InvalidArgumentError(message);
    case tfg::StatusCode::kDataLoss:
      return absl::DataLossError(message);
    case tfg::StatusCode::kOutOfRange:
      // OutOfRange means "end of sequence" to tf.data; a bad frame index is
      // an invalid argument from the user's point of view.
      return absl::InvalidArgumentError(message);
    case tfg::StatusCode::kInternal:
      return absl::InternalError(message);
    case tfg::StatusCode::kUnavailable:
      return absl::UnavailableError(message);
    case tfg::StatusCode::kResourceExhausted:
      return absl::ResourceExhaustedError(message);
  }
  return absl::UnknownError(message);
}

}  // namespace tf_gulp

#define TFG_TF_RETURN_IF_ERROR(expr) \
  TF_RETURN_IF_ERROR(::tf_gulp::ToTfStatus(expr))

#endif  // TF_GULP_OPS_FRAMEWORK_CORE_STATUS_H_
