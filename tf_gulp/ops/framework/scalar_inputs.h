// A kernel's scalar inputs, checked before they are read: Tensor::scalar<T>()
// stops the whole process (a CHECK) on a tensor that is not one element, so a
// seed given as a vector must be an InvalidArgument naming the op and the
// input, never an abort.
#ifndef TF_GULP_OPS_FRAMEWORK_SCALAR_INPUTS_H_
#define TF_GULP_OPS_FRAMEWORK_SCALAR_INPUTS_H_

#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"

namespace tf_gulp {

// InvalidArgument(message) unless every input of `ctx` listed in `inputs` is a
// scalar (rank 0): for ops whose message names several inputs at once.
inline absl::Status CheckScalarInputs(::tensorflow::OpKernelContext* ctx,
                                      std::initializer_list<int> inputs,
                                      absl::string_view message) {
  for (int i : inputs) {
    if (ctx->input(i).dims() != 0) return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

// Input `index` of `ctx` into `value`, or InvalidArgument
// "<op>: <name> must be a scalar" when it is not a scalar.
template <typename T, typename Value>
absl::Status ScalarInput(::tensorflow::OpKernelContext* ctx, int index, absl::string_view op,
                         absl::string_view name, Value* value) {
  const ::tensorflow::Tensor& t = ctx->input(index);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be a scalar"));
  }
  *value = static_cast<Value>(t.scalar<T>()());
  return absl::OkStatus();
}

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_SCALAR_INPUTS_H_
