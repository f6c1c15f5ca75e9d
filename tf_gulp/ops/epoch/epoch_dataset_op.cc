// EpochDataset(key): a dataset of one int64 scalar, the number of this pass
// over `key` (0, 1, 2, ... for successive iterators), from the epoch counter
// named by the `epoch_counter` attr (epoch_counter.h).
//
// It is how a pipeline built from ordinary tf.data ops (the Benzina reader)
// gets a new epoch number for every iterator, `repeat()` pass, Keras epoch
// or interleave call: `EpochDataset(...).flat_map(one_epoch)`. Its iterator
// state is the epoch it handed out, so checkpoints restore the same epoch
// and later passes continue from it.
//
// Under tf.data service dynamic sharding the splits come from the
// dispatcher, which decides the epoch. With `elements` = -1 (the default) a
// pass is one split [epoch, 0]: one worker reads the whole pass. With
// `elements` = n >= 0 the element is an int64 pair [epoch, position]: a
// plain iterator yields [epoch, -1] (the whole pass), and under the service
// each of the pass's n positions is one split [epoch, position], so each
// worker reads only the positions it is handed and every position is read
// exactly once per pass (the Benzina reader: one split per image).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/mutex.h"
#include "tf_gulp/ops/epoch/epoch_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/epoch_cursor.h"
#include "tf_gulp/ops/framework/epoch_counter.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

using ::tensorflow::mutex;
using ::tensorflow::mutex_lock;
using ::tensorflow::data::DatasetIterator;
using ::tensorflow::data::IteratorBase;
using ::tensorflow::data::SplitProvider;
namespace model = ::tensorflow::data::model;

// The op's input; its attrs are EpochDatasetAttrs' (epoch_ops.h).
constexpr char kKey[] = "key";
// Iterator state key, besides the cursor's (epoch_cursor.h).
constexpr char kDone[] = "done";

class EpochDatasetOp : public DatasetOpKernel {
 public:
  explicit EpochDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES(ctx, attrs_.elements >= -1,
                absl::InvalidArgumentError(absl::StrCat(
                    "EpochDataset: elements must be -1 or >= 0, got ",
                    attrs_.elements)));
  }

  void MakeDataset(OpKernelContext* ctx, DatasetBase** output) override;

 private:
  class Dataset;
  EpochDatasetAttrs attrs_;
};

class EpochDatasetOp::Dataset : public DatasetBase {
 public:
  Dataset(OpKernelContext* ctx, std::string key, const EpochDatasetAttrs& attrs,
          std::shared_ptr<EpochCounter> epochs)
      : DatasetBase(tensorflow::data::DatasetContext(ctx)),
        key_(std::move(key)),
        attrs_(attrs),
        elements_(attrs.elements),
        epochs_(std::move(epochs)),
        shapes_({elements_ >= 0 ? PartialTensorShape({2})
                                : PartialTensorShape({})}) {}

  std::unique_ptr<IteratorBase> MakeIteratorInternal(
      const std::string& prefix) const override {
    return std::make_unique<Iterator>(
        Iterator::Params{this, absl::StrCat(prefix, "::Epoch")});
  }
  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override {
    return shapes_;
  }
  std::string DebugString() const override { return "EpochDatasetOp::Dataset"; }
  // One element per plain pass; under the service, one per split.
  int64_t CardinalityInternal(
      tensorflow::data::CardinalityOptions options) const override {
    return 1;
  }
  absl::Status InputDatasets(
      std::vector<const DatasetBase*>* inputs) const override {
    return absl::OkStatus();
  }
  absl::Status CheckExternalState() const override { return absl::OkStatus(); }

  absl::Status MakeSplitProviders(
      std::vector<std::unique_ptr<SplitProvider>>* split_providers)
      const override {
    split_providers->push_back(MakeCursor().MakeSplitProvider());
    return absl::OkStatus();
  }

  // An iterator's epoch and splits: one split per position, or one per pass.
  EpochCursor MakeCursor() const {
    return EpochCursor("EpochDataset", epochs_, key_, elements_ >= 0 ? elements_ : 1);
  }

 protected:
  absl::Status AsGraphDefInternal(SerializationContext* ctx,
                                  DatasetGraphDefBuilder* b,
                                  Node** output) const override {
    Node* key = nullptr;
    TF_RETURN_IF_ERROR(b->AddScalar(tensorflow::tstring(key_), &key));
    GraphAttrs attrs;
    AddAttrs(attrs_, b, &attrs);
    return b->AddDataset(this, {key}, attrs, output);
  }

 private:
  class Iterator : public DatasetIterator<Dataset> {
   public:
    explicit Iterator(const Params& params)
        : DatasetIterator<Dataset>(params), cursor_(params.dataset->MakeCursor()) {}

    absl::Status Initialize(IteratorContext* ctx) override {
      mutex_lock l(mu_);
      return cursor_.Initialize(ctx);
    }

    absl::Status GetNextInternal(IteratorContext* ctx,
                                 std::vector<Tensor>* out_tensors,
                                 bool* end_of_sequence) override {
      mutex_lock l(mu_);
      if (cursor_.has_splits()) {  // tf.data service: the dispatcher's epoch
        int64_t index = 0;
        TF_RETURN_IF_ERROR(cursor_.NextSplit(&index, end_of_sequence));
        if (!*end_of_sequence) {
          out_tensors->push_back(dataset()->Element(cursor_.epoch(), index));
        }
        return absl::OkStatus();
      }
      *end_of_sequence = done_;
      if (!done_) {
        out_tensors->push_back(dataset()->Element(cursor_.epoch(), -1));
        done_ = true;
      }
      return absl::OkStatus();
    }

    bool SymbolicCheckpointCompatible() const override { return true; }

   protected:
    std::shared_ptr<model::Node> CreateNode(
        IteratorContext* ctx, model::Node::Args args) const override {
      return model::MakeSourceNode(std::move(args));
    }

    absl::Status SaveInternal(SerializationContext* ctx,
                              IteratorStateWriter* writer) override {
      mutex_lock l(mu_);
      TF_RETURN_IF_ERROR(cursor_.Save(prefix(), writer));
      return writer->WriteScalar(prefix(), kDone, static_cast<int64_t>(done_));
    }

    absl::Status RestoreInternal(IteratorContext* ctx,
                                 IteratorStateReader* reader) override {
      mutex_lock l(mu_);
      int64_t done = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), kDone, &done));
      done_ = done != 0;
      return cursor_.Restore(prefix(), reader);
    }

   private:
    mutex mu_;
    // The pass's epoch, or tf.data service's splits.
    EpochCursor cursor_ TF_GUARDED_BY(mu_);
    // A plain pass's one element was returned.
    bool done_ TF_GUARDED_BY(mu_) = false;
  };

  // The epoch, or [epoch, position] when elements_ >= 0 (-1: the whole pass).
  Tensor Element(int64_t epoch, int64_t position) const {
    if (elements_ < 0) return Tensor(epoch);
    Tensor t(tensorflow::DT_INT64, tensorflow::TensorShape({2}));
    t.vec<int64_t>()(0) = epoch;
    t.vec<int64_t>()(1) = position;
    return t;
  }

  const std::string key_;
  const EpochDatasetAttrs attrs_;
  const int64_t elements_;  // attrs_.elements
  const std::shared_ptr<EpochCounter> epochs_;
  const DataTypeVector dtypes_ = {tensorflow::DT_INT64};
  const std::vector<PartialTensorShape> shapes_;
};

void EpochDatasetOp::MakeDataset(OpKernelContext* ctx, DatasetBase** output) {
  tensorflow::tstring key;
  OP_REQUIRES_OK(ctx, tensorflow::data::ParseScalarArgument<tensorflow::tstring>(
                          ctx, kKey, &key));
  std::shared_ptr<EpochCounter> epochs;
  OP_REQUIRES_OK(ctx, GetEpochCounter(ctx, attrs_.epoch_counter, &epochs));
  *output = new Dataset(ctx, std::string(key), attrs_, std::move(epochs));
}

// The op's registration: epoch_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kEpochDatasetOp).Device(tensorflow::DEVICE_CPU),
                        EpochDatasetOp);

}  // namespace
}  // namespace tf_gulp
