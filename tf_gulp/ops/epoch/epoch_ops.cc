// The registrations of EpochDataset, EpochCountsDataset and
// KnownCardinalityDataset (kernels: epoch_dataset_op.cc,
// epoch_counts_dataset_op.cc, known_cardinality_dataset_op.cc; Python
// wrappers: epoch_ops.py, cardinality_ops.py). Their own attrs come from the
// tables of epoch_ops.h.

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tf_gulp/ops/epoch/epoch_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/dataset_shapes.h"

namespace tf_gulp {
namespace {

TF_GULP_REGISTER_OP_WITH_ATTRS(kEpochDatasetOp, EpochDatasetAttrs)
    .Input("key: string")
    .Output("handle: variant")
    // Stateful so graph optimizations never constant-fold or deduplicate it.
    .SetIsStateful()
    // A variant handle: the element shape ([] or [2]) is in the dataset.
    .SetShapeFn(DatasetShape</*input=*/0, /*rank=*/0>)
    .Doc(R"doc(
One int64 element: the number of this pass over `key` counted by the epoch
counter `epoch_counter` (0 for the first iterator, then 1, 2, ...). With
`elements` >= 0 the element is [epoch, -1], and under tf.data service dynamic
sharding each of the pass's `elements` positions is a split [epoch, position].
)doc");

TF_GULP_REGISTER_OP_WITH_ATTRS(kEpochCountsDatasetOp, EpochCountsDatasetAttrs)
    .Input("input_dataset: variant")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetShapeFn(tensorflow::shape_inference::ScalarShape)
    .Doc(R"doc(
`input_dataset` unchanged; its iterator checkpoints also carry the epoch counts
of the tf_gulp epoch counters named in `epoch_counters` (matched by position on
restore).
)doc");

REGISTER_OP(kKnownCardinalityDatasetOp)
    .Input("input_dataset: variant")
    .Input("cardinality: int64")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetShapeFn(DatasetShape</*input=*/1, /*rank=*/0>)
    .Doc(R"doc(
`input_dataset` unchanged, with cardinality `cardinality` (a count, or -1 for
infinite; not checked: under tf.data service dynamic sharding a worker yields
only its splits).
)doc");

}  // namespace
}  // namespace tf_gulp
