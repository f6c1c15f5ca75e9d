// A split provider that hands out element indices 0..n-1, for tf.data
// service's dynamic sharding: each element (a clip, a record or a batch) is
// read by exactly one worker. TensorFlow's own IndexSplitProvider lives in
// libtensorflow_cc, which a custom op library does not link against.
//
// Each split is an int64 pair [epoch, index]: the epoch (whose order maps
// the index to an element) is decided where the splits are made, on the
// dispatcher, so every worker reads the same epoch's order whatever its own
// history, and each pass (Reset, e.g. under repeat()) is a new epoch.
#ifndef TF_GULP_OPS_FRAMEWORK_ELEMENT_SPLIT_PROVIDER_H_
#define TF_GULP_OPS_FRAMEWORK_ELEMENT_SPLIT_PROVIDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/mutex.h"

namespace tf_gulp {

class ElementSplitProvider : public ::tensorflow::data::SplitProvider {
 public:
  // `next_epoch` gives the epoch of each pass (called now and on Reset).
  ElementSplitProvider(int64_t n, std::function<int64_t()> next_epoch)
      : n_(n), next_epoch_(std::move(next_epoch)), epoch_(next_epoch_()) {}

  absl::Status GetNext(::tensorflow::Tensor* split,
                       bool* end_of_splits) override {
    ::tensorflow::mutex_lock l(mu_);
    *end_of_splits = next_ >= n_;
    if (!*end_of_splits) {
      *split = ::tensorflow::Tensor(::tensorflow::DT_INT64,
                                    ::tensorflow::TensorShape({2}));
      split->vec<int64_t>()(0) = epoch_;
      split->vec<int64_t>()(1) = next_++;
    }
    return absl::OkStatus();
  }
  absl::Status Reset() override {
    ::tensorflow::mutex_lock l(mu_);
    next_ = 0;
    epoch_ = next_epoch_();
    return absl::OkStatus();
  }
  absl::Status Save(std::function<std::string(std::string)> full_name,
                    ::tensorflow::data::IteratorStateWriter* writer) override {
    ::tensorflow::mutex_lock l(mu_);
    TF_RETURN_IF_ERROR(writer->WriteScalar(full_name(kNextKey), next_));
    return writer->WriteScalar(full_name(kEpochKey), epoch_);
  }
  absl::Status Restore(std::function<std::string(std::string)> full_name,
                       ::tensorflow::data::IteratorStateReader* reader) override {
    ::tensorflow::mutex_lock l(mu_);
    TF_RETURN_IF_ERROR(reader->ReadScalar(full_name(kNextKey), &next_));
    return reader->ReadScalar(full_name(kEpochKey), &epoch_);
  }
  int64_t Cardinality() const override { return n_; }

  // Checks a split received from a provider of a dataset with `n` elements.
  static absl::Status Parse(const ::tensorflow::Tensor& split, int64_t n,
                            int64_t* epoch, int64_t* index) {
    if (split.dtype() != ::tensorflow::DT_INT64 || split.NumElements() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected an int64 [epoch, index] split, got ", split.DebugString()));
    }
    *epoch = split.flat<int64_t>()(0);
    *index = split.flat<int64_t>()(1);
    if (*index < 0 || *index >= n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "split ", *index, " is outside the dataset's ", n, " elements"));
    }
    return absl::OkStatus();
  }

 private:
  static constexpr char kNextKey[] = "position";
  static constexpr char kEpochKey[] = "epoch";
  const int64_t n_;
  const std::function<int64_t()> next_epoch_;
  ::tensorflow::mutex mu_;
  int64_t epoch_ TF_GUARDED_BY(mu_) = 0;
  int64_t next_ TF_GUARDED_BY(mu_) = 0;
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_ELEMENT_SPLIT_PROVIDER_H_
