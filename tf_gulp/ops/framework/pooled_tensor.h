// Output tensors whose memory is recycled through a tfg::BufferPool.
//
// A dataset iterator that produces large tensors of a steady size (decoded
// clips) allocates them here instead of from TensorFlow's CPU allocator, which
// would hand out freshly mapped pages each time (see cc/util/buffer_pool.h for
// the measurement). When the last Tensor sharing a buffer goes away (the
// consumer dropped it, batch() copied it), the buffer goes back to the pool.
// Each buffer holds a reference to its pool, so tensors may outlive the
// iterator that made them.
#ifndef TF_GULP_OPS_FRAMEWORK_POOLED_TENSOR_H_
#define TF_GULP_OPS_FRAMEWORK_POOLED_TENSOR_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/util/buffer_pool.h"
#include "tensorflow/core/framework/allocation_description.pb.h"
#include "tensorflow/core/framework/allocator.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.h"

namespace tf_gulp {

// Alignment TensorFlow's own CPU allocator guarantees (Eigen's kernels rely
// on it).
inline constexpr size_t kPooledTensorAlignment =
    tensorflow::Allocator::kAllocatorAlignment;

inline std::shared_ptr<tfg::BufferPool> MakeTensorBufferPool(size_t max_cached) {
  return std::make_shared<tfg::BufferPool>(max_cached, kPooledTensorAlignment);
}

class PooledTensorBuffer : public tensorflow::TensorBuffer {
 public:
  PooledTensorBuffer(std::shared_ptr<tfg::BufferPool> pool, void* data,
                     size_t bytes)
      : TensorBuffer(data), pool_(std::move(pool)), bytes_(bytes) {}
  ~PooledTensorBuffer() override { pool_->Release(data(), bytes_); }

  size_t size() const override { return bytes_; }
  TensorBuffer* root_buffer() override { return this; }
  void FillAllocationDescription(
      tensorflow::AllocationDescription* proto) const override {
    proto->set_requested_bytes(static_cast<int64_t>(bytes_));
    proto->set_allocated_bytes(static_cast<int64_t>(bytes_));
    proto->set_allocator_name("tf_gulp_buffer_pool");
  }

 private:
  const std::shared_ptr<tfg::BufferPool> pool_;
  const size_t bytes_;
};

// Makes `*out` an uninitialized tensor of a trivially copyable `dtype` (not
// string, resource or variant) whose buffer comes from `pool`.
inline absl::Status AllocatePooledTensor(
    const std::shared_ptr<tfg::BufferPool>& pool, tensorflow::DataType dtype,
    const tensorflow::TensorShape& shape, tensorflow::Tensor* out) {
  if (!tensorflow::DataTypeCanUseMemcpy(dtype)) {
    return absl::InternalError(
        absl::StrCat("pooled tensors hold plain data, not ",
                     tensorflow::DataTypeString(dtype)));
  }
  const size_t bytes =
      static_cast<size_t>(shape.num_elements()) * tensorflow::DataTypeSize(dtype);
  if (bytes == 0) {
    *out = tensorflow::Tensor(dtype, shape);
    return absl::OkStatus();
  }
  void* data = pool->Acquire(bytes);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes for a ",
        tensorflow::DataTypeString(dtype), " tensor of shape ",
        shape.DebugString()));
  }
  auto* buffer = new PooledTensorBuffer(pool, data, bytes);
  *out = tensorflow::Tensor(dtype, shape, buffer);
  buffer->Unref();  // the tensor holds its own reference
  return absl::OkStatus();
}

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_POOLED_TENSOR_H_
