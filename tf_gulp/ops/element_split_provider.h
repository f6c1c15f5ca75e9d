// A split provider that hands out element indices 0..n-1, for tf.data
// service's dynamic sharding: each element (a clip, a record or a batch) is
// read by exactly one worker. TensorFlow's own IndexSplitProvider lives in
// libtensorflow_cc, which a custom op library does not link against.
#ifndef TF_GULP_OPS_ELEMENT_SPLIT_PROVIDER_H_
#define TF_GULP_OPS_ELEMENT_SPLIT_PROVIDER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/mutex.h"

namespace tf_gulp {

class ElementSplitProvider : public ::tensorflow::data::SplitProvider {
 public:
  explicit ElementSplitProvider(int64_t n) : n_(n) {}

  absl::Status GetNext(::tensorflow::Tensor* split,
                       bool* end_of_splits) override {
    ::tensorflow::mutex_lock l(mu_);
    *end_of_splits = next_ >= n_;
    if (!*end_of_splits) *split = ::tensorflow::Tensor(next_++);
    return absl::OkStatus();
  }
  absl::Status Reset() override {
    ::tensorflow::mutex_lock l(mu_);
    next_ = 0;
    return absl::OkStatus();
  }
  absl::Status Save(std::function<std::string(std::string)> full_name,
                    ::tensorflow::data::IteratorStateWriter* writer) override {
    ::tensorflow::mutex_lock l(mu_);
    return writer->WriteScalar(full_name(kNextKey), next_);
  }
  absl::Status Restore(std::function<std::string(std::string)> full_name,
                       ::tensorflow::data::IteratorStateReader* reader) override {
    ::tensorflow::mutex_lock l(mu_);
    return reader->ReadScalar(full_name(kNextKey), &next_);
  }
  int64_t Cardinality() const override { return n_; }

 private:
  static constexpr char kNextKey[] = "position";
  const int64_t n_;
  ::tensorflow::mutex mu_;
  int64_t next_ TF_GUARDED_BY(mu_) = 0;
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_ELEMENT_SPLIT_PROVIDER_H_
