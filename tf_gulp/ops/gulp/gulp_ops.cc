// The registration of the GulpDataset op (its kernel: gulp_dataset_op.cc;
// its Python wrapper: gulp_ops.py). The attrs come from GulpDatasetAttrs'
// table (gulp_ops.h).

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/gulp/gulp_ops.h"

namespace tf_gulp {
namespace {

TF_GULP_REGISTER_OP_WITH_ATTRS(kGulpDatasetOp, GulpDatasetAttrs)
    .Input("directory: string")
    .Output("handle: variant")
    // Source datasets are stateful so graph optimizations never constant-fold
    // or deduplicate them.
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      tensorflow::shape_inference::ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      c->set_output(0, c->Scalar());
      return absl::OkStatus();
    })
    .Doc(R"doc(
Reads a gulp directory (data_N.gulp + meta_N.gmeta chunks) as a dataset of
(frames, id, label, meta). See tf_gulp.GulpDataset for the options.
)doc");

}  // namespace
}  // namespace tf_gulp
