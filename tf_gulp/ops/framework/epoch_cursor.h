// The epoch of one iterator of a source dataset, and the tf.data service
// splits it takes instead when the dispatcher hands them out: the part of an
// iterator's cursor that every tf_gulp source shares (the position within
// the epoch is the source's own: positional_source_dataset.h counts
// elements, EpochDataset has one element per pass).
//
// - A plain iterator is a new pass over the dataset's key: its epoch is the
//   next of the EpochCounter shared by every re-creation of the dataset
//   (epoch_counter.h).
// - Under tf.data service dynamic sharding the dispatcher decides the epoch:
//   each split is [epoch, index] (element_split_provider.h), and the cursor's
//   epoch is that of the last split taken.
// - A checkpoint holds the epoch, every count of the counter (so passes
//   opened after a restore get the epochs they would have had) and the split
//   provider's state; a restore puts them back, and later passes over the key
//   continue after the restored epoch.
// - A dataset made to start at epoch e (`first_epoch`, the Python `epoch=`)
//   numbers its passes e, e + 1, ...: its first pass is pass e of one made at
//   epoch 0, and nothing of the skipped epochs is read. The counter still
//   counts passes from 0; the epoch adds `first_epoch` to it.
#ifndef TF_GULP_OPS_FRAMEWORK_EPOCH_CURSOR_H_
#define TF_GULP_OPS_FRAMEWORK_EPOCH_CURSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/element_split_provider.h"
#include "tf_gulp/ops/framework/epoch_counter.h"

namespace tf_gulp {

class EpochCursor {
 public:
  // `name` names the dataset in errors; `key` keys its passes in `epochs`;
  // a pass has `num_splits` splits under tf.data service; pass p is epoch
  // `first_epoch` + p.
  EpochCursor(std::string name, std::shared_ptr<EpochCounter> epochs, std::string key,
              int64_t num_splits, int64_t first_epoch = 0)
      : name_(std::move(name)),
        epochs_(std::move(epochs)),
        key_(std::move(key)),
        num_splits_(num_splits),
        first_epoch_(first_epoch) {}

  // The split provider a dataset offers tf.data service: one split per
  // position of a pass, each pass (Reset) the counter's next epoch. It may
  // outlive the dataset: it keeps its own references.
  std::unique_ptr<::tensorflow::data::SplitProvider> MakeSplitProvider() const {
    std::shared_ptr<EpochCounter> epochs = epochs_;
    std::string key = key_;
    const int64_t first = first_epoch_;
    return std::make_unique<ElementSplitProvider>(
        num_splits_, [epochs, key, first]() { return first + epochs->Next(key); });
  }

  // At the iterator's start: takes the dispatcher's split provider when the
  // iterator has one, else draws the pass's epoch.
  absl::Status Initialize(::tensorflow::data::IteratorContext* ctx) {
    if (ctx->split_providers().empty()) {
      epoch_ = first_epoch_ + epochs_->Next(key_);
      return absl::OkStatus();
    }
    if (ctx->split_providers().size() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          name_, " expects one split provider, got ", ctx->split_providers().size()));
    }
    split_provider_ = ctx->split_providers()[0];
    return absl::OkStatus();
  }

  // Whether positions come from tf.data service's splits (NextSplit).
  bool has_splits() const { return split_provider_ != nullptr; }
  int64_t epoch() const { return epoch_; }

  // The next split's position; its epoch becomes the cursor's. `end`: no
  // split is left.
  absl::Status NextSplit(int64_t* index, bool* end) {
    ::tensorflow::Tensor split;
    TF_RETURN_IF_ERROR(split_provider_->GetNext(&split, end));
    if (*end) return absl::OkStatus();
    return ElementSplitProvider::Parse(split, num_splits_, &epoch_, index);
  }

  // Under the iterator's `prefix`.
  absl::Status Save(const std::string& prefix,
                    ::tensorflow::data::IteratorStateWriter* writer) const {
    TF_RETURN_IF_ERROR(writer->WriteScalar(prefix, kEpoch, epoch_));
    TF_RETURN_IF_ERROR(epochs_->Save(prefix, writer));
    if (!split_provider_) return absl::OkStatus();
    return split_provider_->Save(
        [&prefix](const std::string& key) { return SplitProviderKey(prefix, key); }, writer);
  }
  absl::Status Restore(const std::string& prefix,
                       ::tensorflow::data::IteratorStateReader* reader) {
    TF_RETURN_IF_ERROR(reader->ReadScalar(prefix, kEpoch, &epoch_));
    // Later passes (e.g. under repeat()) continue from the restored one.
    TF_RETURN_IF_ERROR(epochs_->Restore(prefix, reader));
    epochs_->SetNextAtLeast(key_, epoch_ - first_epoch_ + 1);
    if (!split_provider_) return absl::OkStatus();
    return split_provider_->Restore(
        [&prefix](const std::string& key) { return SplitProviderKey(prefix, key); }, reader);
  }

 private:
  // Where the split provider's state lives in a checkpoint.
  static std::string SplitProviderKey(const std::string& prefix, const std::string& key) {
    return ::tensorflow::data::FullName(prefix, absl::StrCat(kSplitProvider, key));
  }

  // Iterator state keys.
  static constexpr char kEpoch[] = "epoch";
  static constexpr char kSplitProvider[] = "split_provider";

  const std::string name_;
  const std::shared_ptr<EpochCounter> epochs_;
  const std::string key_;
  const int64_t num_splits_;
  const int64_t first_epoch_;
  // The epoch itself (first_epoch_ + the pass), as checkpoints hold it.
  int64_t epoch_ = 0;
  std::shared_ptr<::tensorflow::data::SplitProvider> split_provider_;
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_EPOCH_CURSOR_H_
