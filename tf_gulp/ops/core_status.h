// Translates the core library's status into TensorFlow's, keeping the code
// (NotFound, InvalidArgument, DataLoss, ...) so Python sees the matching
// tf.errors exception.
#ifndef TF_GULP_OPS_CORE_STATUS_H_
#define TF_GULP_OPS_CORE_STATUS_H_

#include "absl/status/status.h"
#include "cc/util/status.h"

namespace tf_gulp {

inline absl::Status ToTfStatus(const tfg::Status& status) {
  switch (status.code()) {
    case tfg::StatusCode::kOk:
      return absl::OkStatus();
    case tfg::StatusCode::kNotFound:
      return absl::NotFoundError(status.message());
    case tfg::StatusCode::kInvalidArgument:
      return absl::InvalidArgumentError(status.message());
    case tfg::StatusCode::kDataLoss:
      return absl::DataLossError(status.message());
    case tfg::StatusCode::kOutOfRange:
      // OutOfRange means "end of sequence" to tf.data; a bad frame index is
      // an invalid argument from the user's point of view.
      return absl::InvalidArgumentError(status.message());
    case tfg::StatusCode::kInternal:
      return absl::InternalError(status.message());
    case tfg::StatusCode::kUnavailable:
      return absl::UnavailableError(status.message());
  }
  return absl::UnknownError(status.message());
}

}  // namespace tf_gulp

#define TFG_TF_RETURN_IF_ERROR(expr) \
  TF_RETURN_IF_ERROR(::tf_gulp::ToTfStatus(expr))

#endif  // TF_GULP_OPS_CORE_STATUS_H_
