// SimilarityTransformMatrices' kernel (registered in image_ops.cc): the
// matrices the fused kernels (DecodeHevcWarped, DecodeJpegWarped, GulpDataset's
// fused decode) draw for their elements, as a tensor. A path that warps
// elsewhere (tf_gulp.bzna.DataLoader on a device: decoded in tf.data, warped in
// the training step) takes its matrices from here, so the same seed gives the
// same crops whichever path warps: one random stream, the fused ops' own
// (fused_warp_args.h: cc/warp/similarity_transform.h keyed by (seed, epoch,
// element)).
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {
namespace {

constexpr char kOp[] = "similarity_transform_matrices";

class SimilarityTransformMatricesOp : public ::tensorflow::OpKernel {
 public:
  explicit SimilarityTransformMatricesOp(::tensorflow::OpKernelConstruction* ctx)
      : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs_));
    OP_REQUIRES_OK(ctx, attrs_.Parse(kOp));
  }

  void Compute(::tensorflow::OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& elements = ctx->input(3);
    OP_REQUIRES(ctx, sizes.dims() >= 1 && sizes.dim_size(sizes.dims() - 1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    kOp, ": input_sizes must end in (height, width), got shape ",
                    sizes.shape().DebugString())));
    TensorShape batch = sizes.shape();
    batch.RemoveLastDims(1);
    OP_REQUIRES(ctx, elements.shape() == batch,
                absl::InvalidArgumentError(absl::StrCat(
                    kOp, ": elements must have the shape of input_sizes without its last axis, ",
                    batch.DebugString(), ", got ", elements.shape().DebugString())));
    uint64_t seed = 0, epoch = 0;
    OP_REQUIRES_OK(ctx, ScalarInput<int64_t>(ctx, 1, kOp, "seed", &seed));
    OP_REQUIRES_OK(ctx, ScalarInput<int64_t>(ctx, 2, kOp, "epoch", &epoch));
    TensorShape out_shape = batch;
    out_shape.AddDim(3);
    out_shape.AddDim(3);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const auto hw = sizes.flat<int32_t>();
    const auto ids = elements.flat<int64_t>();
    auto m_out = out->flat<float>();
    for (int64_t i = 0; i < ids.size(); ++i) {
      OP_REQUIRES(ctx, hw(2 * i) > 0 && hw(2 * i + 1) > 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      kOp, ": input size ", i, " is ", hw(2 * i), "x", hw(2 * i + 1),
                      "; a picture has at least one pixel")));
      double m[9];
      attrs_.Matrix(seed, epoch, ids(i), hw(2 * i), hw(2 * i + 1), m);
      for (int k = 0; k < 9; ++k) m_out(9 * i + k) = static_cast<float>(m[k]);
    }
  }

 private:
  WarpTransformAttrs attrs_;
};

REGISTER_KERNEL_BUILDER(
    Name("TfGulp>SimilarityTransformMatrices").Device(::tensorflow::DEVICE_CPU),
    SimilarityTransformMatricesOp);

}  // namespace
}  // namespace tf_gulp
