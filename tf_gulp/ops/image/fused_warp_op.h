// The registration every fused decode + warp op shares (decode_jpeg_warped in
// image_ops.cc, decode_hevc_warped in bzna/bzna_ops.cc): its attrs' table and
// its inputs and output, written once, so the two interfaces cannot drift
// apart (their kernels read the inputs by these positions:
// image/fused_warp_args.h). The registration goes on with the op's shape
// function and doc:
//   TF_GULP_REGISTER_FUSED_WARP_OP(kXOp, XAttrs).SetShapeFn(...).Doc(...);
#ifndef TF_GULP_OPS_IMAGE_FUSED_WARP_OP_H_
#define TF_GULP_OPS_IMAGE_FUSED_WARP_OP_H_

#include "tensorflow/core/framework/op.h"
#include "tf_gulp/ops/framework/attr_table.h"

// contents: [B] pictures; what: [B] what each picture is called in errors
// ("" for its place in the batch only, e.g. "train.ffr record 17" or an
// Example's file name); seed, epoch and elements: the key of each element's
// drawn transform.
#define TF_GULP_REGISTER_FUSED_WARP_OP(name, Attrs) \
  TF_GULP_REGISTER_OP_WITH_ATTRS(name, Attrs)       \
      .Input("contents: string")                    \
      .Input("what: string")                        \
      .Input("seed: int64")                         \
      .Input("epoch: int64")                        \
      .Input("elements: int64")                     \
      .Output("images: output_type")

#endif  // TF_GULP_OPS_IMAGE_FUSED_WARP_OP_H_
