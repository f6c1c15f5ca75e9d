// KnownCardinalityDataset(input, cardinality): `input` unchanged, reporting
// `cardinality` without checking it.
//
// Why not tf.data's assert_cardinality: under tf.data service dynamic
// sharding each worker runs the whole graph but yields only the splits it is
// handed, so a worker's stream is shorter than the dataset (or empty), and an
// assertion fails on every worker. The Benzina reader (a flat_map, whose
// cardinality tf.data cannot infer) states its per-pass count with this op;
// the count is exact for a plain iterator, which is what cardinality() is for.

#include <cstdint>

#include "tensorflow/core/framework/dataset.h"
#include "tf_gulp/ops/epoch/epoch_ops.h"
#include "tf_gulp/ops/framework/pass_through_dataset.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

class KnownCardinalityDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit KnownCardinalityDatasetOp(OpKernelConstruction* ctx)
      : UnaryDatasetOpKernel(ctx) {}

 protected:
  void MakeDataset(OpKernelContext* ctx, DatasetBase* input,
                   DatasetBase** output) override;

 private:
  class Dataset;
};

class KnownCardinalityDatasetOp::Dataset : public PassThroughDataset {
 public:
  Dataset(OpKernelContext* ctx, const DatasetBase* input, int64_t cardinality)
      : PassThroughDataset(ctx, input, "KnownCardinality"),
        cardinality_(cardinality) {}

  int64_t CardinalityInternal(
      tensorflow::data::CardinalityOptions options) const override {
    return cardinality_;
  }

 protected:
  absl::Status NodeArgs(DatasetGraphDefBuilder* b, std::vector<Node*>* inputs,
                        GraphAttrs*) const override {
    Node* cardinality = nullptr;
    TF_RETURN_IF_ERROR(b->AddScalar(cardinality_, &cardinality));
    inputs->push_back(cardinality);
    return absl::OkStatus();
  }

 private:
  const int64_t cardinality_;
};

void KnownCardinalityDatasetOp::MakeDataset(OpKernelContext* ctx,
                                            DatasetBase* input,
                                            DatasetBase** output) {
  int64_t cardinality = 0;
  OP_REQUIRES_OK(ctx, tensorflow::data::ParseScalarArgument<int64_t>(
                          ctx, "cardinality", &cardinality));
  // A count, or infinite (a loader that repeats forever).
  OP_REQUIRES(ctx, cardinality >= 0 || cardinality == tensorflow::data::kInfiniteCardinality,
              absl::InvalidArgumentError(absl::StrCat(
                  "KnownCardinalityDataset: cardinality must be >= 0 or ",
                  tensorflow::data::kInfiniteCardinality, " (infinite), got ",
                  cardinality)));
  *output = new Dataset(ctx, input, cardinality);
}

// The op's registration: epoch_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kKnownCardinalityDatasetOp).Device(tensorflow::DEVICE_CPU),
                        KnownCardinalityDatasetOp);

}  // namespace
}  // namespace tf_gulp
