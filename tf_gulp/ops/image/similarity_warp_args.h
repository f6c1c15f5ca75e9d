// The SimilarityWarp op's inputs checked and turned into a warp geometry, for
// both of its kernels (CPU: similarity_warp_op.cc, GPU:
// similarity_warp_gpu_op.cc). Every input but `images` is in host memory for
// both, so the checks read them directly.
#ifndef TF_GULP_OPS_IMAGE_SIMILARITY_WARP_ARGS_H_
#define TF_GULP_OPS_IMAGE_SIMILARITY_WARP_ARGS_H_

#include <cstdint>

#include "cc/warp/similarity_warp.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {

struct SimilarityWarpArgs {
  tfg::warp::WarpGeometry g;
  int64_t batch = 0;   // pictures or clips, one matrix each
  int64_t frames = 1;  // frames per clip (1 for pictures)
  ::tensorflow::TensorShape out_shape;
};

// The layout attr, which both kernels read when they are built.
inline absl::Status ReadSimilarityWarpLayout(::tensorflow::OpKernelConstruction* ctx,
                                             tfg::warp::Layout* layout) {
  SimilarityWarpAttrs attrs;
  TF_RETURN_IF_ERROR(ReadAttrs(ctx, &attrs));
  return ToTfStatus(tfg::warp::ParseLayout(attrs.layout, layout));
}

// Inputs: images, matrices, output_shape, bias, norm, oob_color.
inline absl::Status ParseSimilarityWarpArgs(::tensorflow::OpKernelContext* ctx,
                                            tfg::warp::Layout layout,
                                            SimilarityWarpArgs* args) {
  const ::tensorflow::Tensor& images = ctx->input(0);
  const ::tensorflow::Tensor& matrices = ctx->input(1);
  const ::tensorflow::Tensor& output_shape = ctx->input(2);
  const ::tensorflow::Tensor& bias = ctx->input(3);
  const ::tensorflow::Tensor& norm = ctx->input(4);
  const ::tensorflow::Tensor& oob = ctx->input(5);

  const int rank = images.dims();
  if (rank != 4 && rank != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "similarity_warp: images must have rank 4 ([B, H, W, C]) or 5 ([B, T, H, W, C]), got "
        "shape ",
        images.shape().DebugString()));
  }
  const int64_t batch = images.dim_size(0);
  if (!(matrices.dims() == 3 && matrices.dim_size(0) == batch && matrices.dim_size(1) == 3 &&
        matrices.dim_size(2) == 3)) {
    return absl::InvalidArgumentError(absl::StrCat("similarity_warp: matrices must be [", batch,
                                                   ", 3, 3], got ",
                                                   matrices.shape().DebugString()));
  }
  if (!(output_shape.dims() == 1 && output_shape.NumElements() == 2)) {
    return absl::InvalidArgumentError("similarity_warp: output_shape must be [height, width]");
  }
  for (const ::tensorflow::Tensor* t : {&bias, &norm, &oob}) {
    if (t->dims() != 1) {
      return absl::InvalidArgumentError(
          "similarity_warp: bias, norm and oob_color must be vectors with one value per "
          "channel");
    }
  }

  const bool nhwc = layout == tfg::warp::Layout::kNHWC;
  const int h_axis = nhwc ? rank - 3 : rank - 2;
  const int c_axis = nhwc ? rank - 1 : rank - 3;
  args->batch = batch;
  args->frames = rank == 5 ? images.dim_size(1) : 1;
  tfg::warp::WarpGeometry& g = args->g;
  g.layout = layout;
  g.in_height = images.dim_size(h_axis);
  g.in_width = images.dim_size(h_axis + 1);
  g.channels = images.dim_size(c_axis);
  auto hw = output_shape.vec<int32_t>();
  g.out_height = hw(0);
  g.out_width = hw(1);
  if (batch == 0 || args->frames == 0) {
    // Nothing to warp; still report a bad output_shape.
    if (!(g.out_height > 0 && g.out_width > 0)) {
      return absl::InvalidArgumentError("similarity_warp: output_shape must be positive");
    }
  } else {
    TF_RETURN_IF_ERROR(ToTfStatus(tfg::warp::ValidateGeometry(
        g, bias.NumElements(), norm.NumElements(), oob.NumElements())));
  }
  const float* m = matrices.flat<float>().data();
  for (int64_t b = 0; b < batch; ++b) {
    TF_RETURN_IF_ERROR(ToTfStatus(tfg::warp::ValidateMatrix(m + 9 * b, b)));
  }
  args->out_shape = images.shape();
  TF_RETURN_IF_ERROR(args->out_shape.SetDimWithStatus(h_axis, g.out_height));
  TF_RETURN_IF_ERROR(args->out_shape.SetDimWithStatus(h_axis + 1, g.out_width));
  return absl::OkStatus();
}

// Warps on the host with TensorFlow's CPU worker threads: the CPU kernel, and
// the GPU kernel's fallback on host copies. `images` and `output` are host
// tensors; the other inputs are read from `ctx` (host memory in both kernels).
void WarpOnCpu(::tensorflow::OpKernelContext* ctx, const SimilarityWarpArgs& args,
               const ::tensorflow::Tensor& images, ::tensorflow::Tensor* output);

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_IMAGE_SIMILARITY_WARP_ARGS_H_
