// The image ops' registrations: names, inputs, outputs, attrs and shape
// functions, apart from their kernels (as tensorflow-io keeps `ops/` apart
// from `kernels/`); names and attr tables in image_ops.h. Op names are recorded in dataset graphs, checkpoints and
// SavedModels, so they never change (tests/test_op_names.py).
//
//   SimilarityWarp               similarity_warp_op.cc (GPU: similarity_warp_gpu_op.cc)
//   SimilarityTransformMatrices  similarity_transform_op.cc
//   DecodeJpegWarped             decode_jpeg_warped_op.cc
#include <cstdint>
#include <string>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/fused_warp_op.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

absl::Status SimilarityWarpShape(InferenceContext* c) {
  std::string layout;
  TF_RETURN_IF_ERROR(c->GetAttr("layout", &layout));
  ShapeHandle images = c->input(0);
  ShapeHandle hw;
  TF_RETURN_IF_ERROR(c->MakeShapeFromShapeTensor(2, &hw));
  TF_RETURN_IF_ERROR(c->WithRank(hw, 2, &hw));
  ShapeHandle matrices;
  TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 3, &matrices));
  if (!c->RankKnown(images)) {
    c->set_output(0, c->UnknownShape());
    return absl::OkStatus();
  }
  const int rank = c->Rank(images);
  if (rank != 4 && rank != 5) {
    return absl::InvalidArgumentError(
        "similarity_warp: images must be [B, H, W, C] or [B, T, H, W, C] (NHWC) "
        "or the NCHW equivalent");
  }
  DimensionHandle batch;
  TF_RETURN_IF_ERROR(c->Merge(c->Dim(images, 0), c->Dim(matrices, 0), &batch));
  std::vector<DimensionHandle> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(c->Dim(images, i));
  dims[0] = batch;
  const int h_axis = layout == "NHWC" ? rank - 3 : rank - 2;
  dims[h_axis] = c->Dim(hw, 0);
  dims[h_axis + 1] = c->Dim(hw, 1);
  c->set_output(0, c->MakeShape(dims));
  return absl::OkStatus();
}

TF_GULP_REGISTER_OP_WITH_ATTRS(kSimilarityWarpOp, SimilarityWarpAttrs)
    .Input("images: uint8")
    .Input("matrices: float")
    .Input("output_shape: int32")
    .Input("bias: float")
    .Input("norm: float")
    .Input("oob_color: float")
    .Output("output: float")
    .SetShapeFn(SimilarityWarpShape)
    .Doc(R"doc(
Warps pictures [B, H, W, C] or clips [B, T, H, W, C] (NCHW: [B, C, H, W] /
[B, T, C, H, W]) with one 3x3 matrix per picture or clip mapping output pixels
to input pixels; bilinear sampling, then (round(v) - bias) * norm in float32;
pixels mapping outside the input get oob_color.
)doc");

TF_GULP_REGISTER_OP_WITH_ATTRS(kSimilarityTransformMatricesOp, WarpTransformAttrs)
    .Input("input_sizes: int32")
    .Input("seed: int64")
    .Input("epoch: int64")
    .Input("elements: int64")
    .Output("matrices: float")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle batch;
      TF_RETURN_IF_ERROR(c->Subshape(c->input(0), 0, -1, &batch));
      ShapeHandle out;
      TF_RETURN_IF_ERROR(c->Concatenate(batch, c->MakeShape({3, 3}), &out));
      c->set_output(0, out);
      return absl::OkStatus();
    })
    .Doc(R"doc(
The 3x3 matrices (output pixel -> input pixel) that the fused decode + warp kernels draw for
elements of the given input sizes (see tf_gulp.ops.similarity_transform_matrices).
)doc");

TF_GULP_REGISTER_FUSED_WARP_OP(kDecodeJpegWarpedOp, DecodeJpegWarpedAttrs)
    .SetShapeFn([](InferenceContext* c) {
      std::string colorspace;
      TF_RETURN_IF_ERROR(c->GetAttr("colorspace", &colorspace));
      return FusedWarpShape(c, colorspace == "gray" ? 1 : 3);
    })
    .Doc(R"doc(
Decodes a batch of JPEG (or PNG, BMP, GIF) strings fused with a similarity warp (see
tf_gulp.ops.decode_jpeg_warped).
)doc");

}  // namespace
}  // namespace tf_gulp
