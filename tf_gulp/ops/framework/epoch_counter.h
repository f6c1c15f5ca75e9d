// Epoch numbers that survive tf.data re-creating a dataset.
//
// A source dataset's shuffle and random choices are functions of (seed,
// epoch, element). The epoch cannot live in the dataset object: tf.data's
// graph rewrites re-create the dataset from its graph for every iterator, and
// `interleave` over a dataset-valued function makes a new dataset for every
// input element and epoch, so a counter in the object starts at 0 each time
// and every epoch repeats the same order.
//
// So the counter lives in the device's ResourceMgr, named by a token that the
// Python dataset draws once when it is constructed (outside or inside a
// traced function alike) and passes as an attr. Everything re-created from
// the same Python dataset (rewritten graphs, each call of an interleave
// function) finds the same counter. Within one counter each key (the
// directory, the file list) counts its own epochs, so an interleave over
// several directories numbers the passes over each directory 0, 1, 2, ...
// whatever order tf.data happens to open them in.
//
// An attr (not a resource-handle input) keeps the dataset's graph plain data:
// it serializes for tf.data service and Dataset.save unchanged, and a process
// that rebuilds the graph (a service worker) gets its own counter.
#ifndef TF_GULP_OPS_FRAMEWORK_EPOCH_COUNTER_H_
#define TF_GULP_OPS_FRAMEWORK_EPOCH_COUNTER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/resource_base.h"
#include "tensorflow/core/framework/resource_mgr.h"
#include "tensorflow/core/platform/mutex.h"

namespace tf_gulp {

class EpochCounter : public ::tensorflow::ResourceBase {
 public:
  // The epoch of a new pass over `key`; the next call returns one more.
  int64_t Next(const std::string& key) {
    ::tensorflow::mutex_lock l(mu_);
    return next_[key]++;
  }
  // After a checkpoint of epoch e is restored (Restore below), the next pass
  // over `key` is at least e + 1, as it was in the run that wrote it.
  void SetNextAtLeast(const std::string& key, int64_t next) {
    ::tensorflow::mutex_lock l(mu_);
    int64_t& n = next_[key];
    n = std::max(n, next);
  }
  std::string DebugString() const override { return "tf_gulp::EpochCounter"; }

  // What every re-creation of the dataset this counter counts can share
  // instead of computing again: its parsed index (tf.data re-creates a
  // dataset from its graph for each iterator's optimizations and each
  // pipeline built on it; one Python dataset parses its index once). Held
  // weakly: it is freed with the last dataset holding it. Null when absent.
  std::shared_ptr<const void> FindShared(const std::string& key) {
    ::tensorflow::mutex_lock l(mu_);
    auto it = shared_.find(key);
    if (it == shared_.end()) return nullptr;
    std::shared_ptr<const void> value = it->second.lock();
    if (value == nullptr) shared_.erase(it);
    return value;
  }
  void SetShared(const std::string& key, std::shared_ptr<const void> value) {
    ::tensorflow::mutex_lock l(mu_);
    shared_[key] = value;
  }

  // Every key's count, saved with each iterator's checkpoint: an interleave
  // restored between two passes must also give the datasets it opens later
  // the epochs they would have had (not just the restored iterator's key).
  absl::Status Save(const std::string& prefix,
                    ::tensorflow::data::IteratorStateWriter* writer) {
    ::tensorflow::Tensor keys, values;
    {
      ::tensorflow::mutex_lock l(mu_);
      const int64_t n = static_cast<int64_t>(next_.size());
      keys = ::tensorflow::Tensor(::tensorflow::DT_STRING, ::tensorflow::TensorShape({n}));
      values = ::tensorflow::Tensor(::tensorflow::DT_INT64, ::tensorflow::TensorShape({n}));
      int64_t i = 0;
      for (const auto& [key, next] : next_) {
        keys.vec<::tensorflow::tstring>()(i) = key;
        values.vec<int64_t>()(i) = next;
        ++i;
      }
    }
    TF_RETURN_IF_ERROR(writer->WriteTensor(prefix, kKeys, keys));
    return writer->WriteTensor(prefix, kValues, values);
  }
  // Replaces the counts with those Save wrote. A checkpoint written before
  // the counts were saved has none: the counts are left as they are.
  absl::Status Restore(const std::string& prefix,
                       ::tensorflow::data::IteratorStateReader* reader) {
    if (!reader->Contains(prefix, kKeys)) return absl::OkStatus();
    ::tensorflow::Tensor keys, values;
    TF_RETURN_IF_ERROR(reader->ReadTensor(prefix, kKeys, &keys));
    TF_RETURN_IF_ERROR(reader->ReadTensor(prefix, kValues, &values));
    if (keys.dtype() != ::tensorflow::DT_STRING ||
        values.dtype() != ::tensorflow::DT_INT64 || keys.dims() != 1 ||
        values.dims() != 1 || keys.NumElements() != values.NumElements()) {
      return absl::DataLossError(
          "checkpoint: the epoch counts are not a [n] string and a [n] int64 tensor");
    }
    ::tensorflow::mutex_lock l(mu_);
    next_.clear();
    for (int64_t i = 0; i < keys.NumElements(); ++i) {
      next_[std::string(keys.vec<::tensorflow::tstring>()(i))] = values.vec<int64_t>()(i);
    }
    return absl::OkStatus();
  }

 private:
  static constexpr char kKeys[] = "epoch_counter_keys";
  static constexpr char kValues[] = "epoch_counter_values";
  ::tensorflow::mutex mu_;
  absl::flat_hash_map<std::string, int64_t> next_ TF_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::weak_ptr<const void>> shared_ TF_GUARDED_BY(mu_);
};

// Where the counters live in the ResourceMgr.
inline constexpr char kEpochCounterContainer[] = "tf_gulp_epoch_counters";
// The attr that names a dataset's counter, shared by the dataset ops.
inline constexpr char kEpochCounterAttr[] = "epoch_counter";

// The counter named `name` in ctx's resource manager, created on first use.
// An empty name, or a context without a resource manager, gets a counter of
// its own (a pass count private to one dataset object, the old behaviour).
inline absl::Status GetEpochCounter(::tensorflow::OpKernelContext* ctx,
                                    const std::string& name,
                                    std::shared_ptr<EpochCounter>* out) {
  ::tensorflow::ResourceMgr* rm = ctx->resource_manager();
  if (name.empty() || rm == nullptr) {
    auto* counter = new EpochCounter();
    *out = std::shared_ptr<EpochCounter>(counter, [](EpochCounter* c) { c->Unref(); });
    return absl::OkStatus();
  }
  EpochCounter* counter = nullptr;
  TF_RETURN_IF_ERROR(rm->LookupOrCreate<EpochCounter>(
      kEpochCounterContainer, name, &counter, [](EpochCounter** c) {
        *c = new EpochCounter();
        return absl::OkStatus();
      }));
  // LookupOrCreate hands back one reference; the shared_ptr owns it.
  *out = std::shared_ptr<EpochCounter>(counter, [](EpochCounter* c) { c->Unref(); });
  return absl::OkStatus();
}

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_EPOCH_COUNTER_H_
