// The registration of the GulpDataset op (its kernel: gulp_dataset_op.cc;
// its Python class, whose options tf_gulp/_options.py reads from this
// registration: tf_gulp.GulpDataset), and of GulpElementViews. The attrs come
// from GulpDatasetAttrs' table (gulp_ops.h).

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/dataset_shapes.h"
#include "tf_gulp/ops/gulp/gulp_ops.h"

namespace tf_gulp {
namespace {

TF_GULP_REGISTER_OP_WITH_ATTRS(kGulpDatasetOp, GulpDatasetAttrs)
    .Input("directory: string")
    .Output("handle: variant")
    // Source datasets are stateful so graph optimizations never constant-fold
    // or deduplicate them.
    .SetIsStateful()
    .SetShapeFn(DatasetShape</*input=*/0, /*rank=*/0>)
    .Doc(R"doc(
Reads a gulp directory (data_N.gulp + meta_N.gmeta chunks) as a dataset of
(frames, id, label, meta). See tf_gulp.GulpDataset for the options.
)doc");

TF_GULP_REGISTER_OP_WITH_ATTRS(kGulpElementViewsOp, GulpElementViewsAttrs)
    .Output("views: int64")
    .SetShapeFn([](::tensorflow::shape_inference::InferenceContext* c) {
      c->set_output(0, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc(R"doc(
The views axis of GulpDataset's frames with these options: [] when an element
is one view (frames [T, ...]), [V] for V views (frames [V, T, ...], clips x
crops). Its kernel parses the options as GulpDataset's does; tf_gulp.GulpDataset's
element spec takes the axis from it.
)doc");

}  // namespace
}  // namespace tf_gulp
