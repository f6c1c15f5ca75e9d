// EpochCountsDataset(input): `input` unchanged; its iterator checkpoints
// also carry the epoch counts of the counters named by `epoch_counters`.
//
// Why: a tf_gulp source's iterator saves its counter's counts, so a restore
// puts them back and later passes get the epochs they would have had. But a
// checkpoint holds only the iterators alive when it is written. A parallel
// interleave reads its inner datasets ahead to their end and keeps their
// elements, not their iterators; a checkpoint written then holds no tf_gulp
// iterator, and after a restore into a fresh process every later pass would
// count from epoch 0 again (the same shuffle order as the first epoch). This
// op sits at the top of the pipeline, where an iterator is alive for as long
// as the pipeline is, and carries the counts in every checkpoint.
//
// The counters are matched by position, not by name: a restoring process
// builds the same pipeline with freshly drawn counter names, in the same
// order (tf_gulp/ops/epoch/epoch_ops.py lists them in the order they were drawn).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/dataset.h"
#include "tf_gulp/ops/epoch/epoch_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/epoch_counter.h"
#include "tf_gulp/ops/framework/pass_through_dataset.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

// Iterator state key: how many counters the checkpoint holds.
constexpr char kNumCounters[] = "num_counters";

using Counters = std::vector<std::shared_ptr<EpochCounter>>;

class EpochCountsDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit EpochCountsDatasetOp(OpKernelConstruction* ctx)
      : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
  }

 protected:
  void MakeDataset(OpKernelContext* ctx, DatasetBase* input,
                   DatasetBase** output) override;

 private:
  class Dataset;
  EpochCountsDatasetAttrs attrs_;
};

class EpochCountsDatasetOp::Dataset : public PassThroughDataset {
 public:
  Dataset(OpKernelContext* ctx, const DatasetBase* input,
          EpochCountsDatasetAttrs attrs, Counters counters)
      : PassThroughDataset(ctx, input, "EpochCounts"),
        attrs_(std::move(attrs)),
        counters_(std::move(counters)) {}

 protected:
  absl::Status NodeArgs(DatasetGraphDefBuilder* b, std::vector<Node*>*,
                        GraphAttrs* attrs) const override {
    AddAttrs(attrs_, b, attrs);
    return absl::OkStatus();
  }
  absl::Status SaveExtra(const std::string& prefix,
                         IteratorStateWriter* writer) const override {
    TF_RETURN_IF_ERROR(writer->WriteScalar(
        prefix, kNumCounters, static_cast<int64_t>(counters_.size())));
    for (size_t i = 0; i < counters_.size(); ++i) {
      TF_RETURN_IF_ERROR(counters_[i]->Save(CounterPrefix(prefix, i), writer));
    }
    return absl::OkStatus();
  }
  // The counts go back before the input's iterators are restored, so the
  // inner datasets an interleave opens after the restore continue the
  // count of the run that wrote the checkpoint.
  absl::Status RestoreExtra(const std::string& prefix,
                            IteratorStateReader* reader) const override {
    int64_t saved = 0;
    TF_RETURN_IF_ERROR(reader->ReadScalar(prefix, kNumCounters, &saved));
    if (saved != static_cast<int64_t>(counters_.size())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "checkpoint: it carries the epoch counts of ", saved,
          " tf_gulp datasets, but this pipeline has ", counters_.size(),
          "; restore a checkpoint into the pipeline that wrote it"));
    }
    for (size_t i = 0; i < counters_.size(); ++i) {
      TF_RETURN_IF_ERROR(counters_[i]->Restore(CounterPrefix(prefix, i), reader));
    }
    return absl::OkStatus();
  }

 private:
  static std::string CounterPrefix(const std::string& prefix, size_t i) {
    return absl::StrCat(prefix, "::counter", i);
  }
  const EpochCountsDatasetAttrs attrs_;
  const Counters counters_;
};

void EpochCountsDatasetOp::MakeDataset(OpKernelContext* ctx,
                                       DatasetBase* input,
                                       DatasetBase** output) {
  Counters counters;
  for (const std::string& name : attrs_.epoch_counters) {
    OP_REQUIRES(ctx, !name.empty(),
                absl::InvalidArgumentError(
                    "EpochCountsDataset: an epoch counter name is empty"));
    std::shared_ptr<EpochCounter> counter;
    OP_REQUIRES_OK(ctx, GetEpochCounter(ctx, name, &counter));
    counters.push_back(std::move(counter));
  }
  *output = new Dataset(ctx, input, attrs_, std::move(counters));
}

// The op's registration: epoch_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kEpochCountsDatasetOp).Device(tensorflow::DEVICE_CPU),
                        EpochCountsDatasetOp);

}  // namespace
}  // namespace tf_gulp
