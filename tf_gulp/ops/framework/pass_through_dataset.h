// A dataset that yields its input's elements unchanged and adds something
// around them: a stated cardinality (KnownCardinalityDataset), the epoch
// counts in every checkpoint (EpochCountsDataset). The forwarding (iterator,
// element spec, inputs, the input's checkpoint) is written once here; a
// subclass says what it adds and what its graph node takes besides the input
// (NodeArgs).
#ifndef TF_GULP_OPS_FRAMEWORK_PASS_THROUGH_DATASET_H_
#define TF_GULP_OPS_FRAMEWORK_PASS_THROUGH_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tf_gulp/ops/framework/attr_table.h"

namespace tf_gulp {

class PassThroughDataset : public ::tensorflow::data::DatasetBase {
 public:
  // `name` names the iterator in checkpoints and debug strings.
  PassThroughDataset(::tensorflow::OpKernelContext* ctx,
                     const ::tensorflow::data::DatasetBase* input,
                     std::string name)
      : DatasetBase(::tensorflow::data::DatasetContext(ctx)),
        input_(input),
        name_(std::move(name)) {
    input_->Ref();
  }
  ~PassThroughDataset() override { input_->Unref(); }

  std::unique_ptr<::tensorflow::data::IteratorBase> MakeIteratorInternal(
      const std::string& prefix) const override {
    return std::make_unique<Iterator>(
        Iterator::Params{this, absl::StrCat(prefix, "::", name_)});
  }
  const ::tensorflow::DataTypeVector& output_dtypes() const override {
    return input_->output_dtypes();
  }
  const std::vector<::tensorflow::PartialTensorShape>& output_shapes()
      const override {
    return input_->output_shapes();
  }
  std::string DebugString() const override {
    return absl::StrCat(name_, "DatasetOp::Dataset");
  }
  int64_t CardinalityInternal(
      ::tensorflow::data::CardinalityOptions options) const override {
    return input_->Cardinality(options);
  }
  absl::Status InputDatasets(
      std::vector<const DatasetBase*>* inputs) const override {
    inputs->push_back(input_);
    return absl::OkStatus();
  }
  absl::Status CheckExternalState() const override {
    return input_->CheckExternalState();
  }

 protected:
  const DatasetBase* input() const { return input_; }

  // This op's node over its input's graph, with NodeArgs' inputs and attrs.
  absl::Status AsGraphDefInternal(::tensorflow::data::SerializationContext* ctx,
                                  DatasetGraphDefBuilder* b,
                                  ::tensorflow::Node** output) const final {
    ::tensorflow::Node* input_node = nullptr;
    TF_RETURN_IF_ERROR(b->AddInputDataset(ctx, input_, &input_node));
    std::vector<::tensorflow::Node*> inputs = {input_node};
    GraphAttrs attrs;
    TF_RETURN_IF_ERROR(NodeArgs(b, &inputs, &attrs));
    return b->AddDataset(this, inputs, attrs, output);
  }
  // What the node takes besides the input dataset: further inputs (appended
  // to `inputs`) and attrs.
  virtual absl::Status NodeArgs(DatasetGraphDefBuilder* b,
                                std::vector<::tensorflow::Node*>* inputs,
                                GraphAttrs* attrs) const = 0;

  // What the subclass keeps in a checkpoint besides the input's state,
  // under the iterator's `prefix`. Restore runs before the input's restore.
  virtual absl::Status SaveExtra(
      const std::string& prefix,
      ::tensorflow::data::IteratorStateWriter* writer) const {
    return absl::OkStatus();
  }
  virtual absl::Status RestoreExtra(
      const std::string& prefix,
      ::tensorflow::data::IteratorStateReader* reader) const {
    return absl::OkStatus();
  }

 private:
  class Iterator
      : public ::tensorflow::data::DatasetIterator<PassThroughDataset> {
   public:
    explicit Iterator(const Params& params)
        : DatasetIterator<PassThroughDataset>(params) {}

    absl::Status Initialize(::tensorflow::data::IteratorContext* ctx) override {
      return dataset()->input_->MakeIterator(ctx, this, prefix(), &input_impl_);
    }
    absl::Status GetNextInternal(::tensorflow::data::IteratorContext* ctx,
                                 std::vector<::tensorflow::Tensor>* out_tensors,
                                 bool* end_of_sequence) override {
      return input_impl_->GetNext(ctx, out_tensors, end_of_sequence);
    }
    bool SymbolicCheckpointCompatible() const override { return true; }

   protected:
    std::shared_ptr<::tensorflow::data::model::Node> CreateNode(
        ::tensorflow::data::IteratorContext* ctx,
        ::tensorflow::data::model::Node::Args args) const override {
      return ::tensorflow::data::model::MakeKnownRatioNode(std::move(args),
                                                           /*ratio=*/1);
    }
    absl::Status SaveInternal(
        ::tensorflow::data::SerializationContext* ctx,
        ::tensorflow::data::IteratorStateWriter* writer) override {
      TF_RETURN_IF_ERROR(dataset()->SaveExtra(prefix(), writer));
      return SaveInput(ctx, writer, input_impl_);
    }
    absl::Status RestoreInternal(
        ::tensorflow::data::IteratorContext* ctx,
        ::tensorflow::data::IteratorStateReader* reader) override {
      TF_RETURN_IF_ERROR(dataset()->RestoreExtra(prefix(), reader));
      return RestoreInput(ctx, reader, input_impl_);
    }

   private:
    std::unique_ptr<::tensorflow::data::IteratorBase> input_impl_;
  };

  const DatasetBase* const input_;
  const std::string name_;
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_PASS_THROUGH_DATASET_H_
