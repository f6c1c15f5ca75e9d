// Shape functions of the dataset ops' registrations: a dataset op's output is
// a scalar variant handle (the element shapes are in the dataset); what
// differs is the rank its one shaped input must have.
#ifndef TF_GULP_OPS_FRAMEWORK_DATASET_SHAPES_H_
#define TF_GULP_OPS_FRAMEWORK_DATASET_SHAPES_H_

#include "tensorflow/core/framework/shape_inference.h"

namespace tf_gulp {

// Input `kInput` has rank `kRank` (a path or key: 0), or at most `kRank`
// when `kAtMost` (a path or a list of paths: 1).
template <int kInput, int kRank, bool kAtMost = false>
absl::Status DatasetShape(::tensorflow::shape_inference::InferenceContext* c) {
  ::tensorflow::shape_inference::ShapeHandle unused;
  TF_RETURN_IF_ERROR(kAtMost ? c->WithRankAtMost(c->input(kInput), kRank, &unused)
                             : c->WithRank(c->input(kInput), kRank, &unused));
  c->set_output(0, c->Scalar());
  return absl::OkStatus();
}

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_DATASET_SHAPES_H_
