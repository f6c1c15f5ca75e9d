// The registration of the FFRecordDataset op (its kernel:
// ffrecord_dataset_op.cc; its Python class, whose options
// tf_gulp/_options.py reads from this registration: tf_gulp.FFRecordDataset).
// The attrs come from FFRecordDatasetAttrs' table (ffrecord_ops.h).

#include "tensorflow/core/framework/op.h"
#include "tf_gulp/ops/ffrecord/ffrecord_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/dataset_shapes.h"

namespace tf_gulp {
namespace {

TF_GULP_REGISTER_OP_WITH_ATTRS(kFFRecordDatasetOp, FFRecordDatasetAttrs)
    .Input("paths: string")
    .Output("handle: variant")
    // Source datasets are stateful so graph optimizations never constant-fold
    // or deduplicate them.
    .SetIsStateful()
    .SetShapeFn(DatasetShape</*input=*/0, /*rank=*/1, /*at_most=*/true>)
    .Doc(R"doc(
Reads the records of FFRecord files (paths: files, or directories of *.ffr
files) as a dataset of strings, single or batched. See
tf_gulp.FFRecordDataset for the options.
)doc");

}  // namespace
}  // namespace tf_gulp
