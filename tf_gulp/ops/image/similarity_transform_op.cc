// SimilarityTransformMatrices: the matrices the fused kernels (DecodeHevcWarped,
// DecodeJpegWarped, GulpDataset's fused decode) draw for their elements, as a
// tensor. A path that warps elsewhere (tf_gulp.bzna.DataLoader on a device:
// decoded in tf.data, warped in the training step) takes its matrices from here,
// so the same seed gives the same crops whichever path warps: one random stream,
// cc/warp/similarity_transform.h keyed by (seed, epoch, element).
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/util/stateless_random.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/core_status.h"

namespace tf_gulp {
namespace {

using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;

constexpr char kOpName[] = "TfGulp>SimilarityTransformMatrices";

class SimilarityTransformMatricesOp : public OpKernel {
 public:
  explicit SimilarityTransformMatricesOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::vector<float> warp;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("warp", &warp));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_height", &height_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_width", &width_));
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::warp::ParseTransformSpec(warp, &spec_)));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& elements = ctx->input(3);
    OP_REQUIRES(ctx, sizes.dims() >= 1 && sizes.dim_size(sizes.dims() - 1) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "similarity_transform_matrices: input_sizes must end in (height, width), "
                    "got shape ", sizes.shape().DebugString())));
    TensorShape batch = sizes.shape();
    batch.RemoveLastDims(1);
    OP_REQUIRES(ctx, elements.shape() == batch,
                absl::InvalidArgumentError(absl::StrCat(
                    "similarity_transform_matrices: elements must have the shape of "
                    "input_sizes without its last axis, ", batch.DebugString(), ", got ",
                    elements.shape().DebugString())));
    const uint64_t seed = static_cast<uint64_t>(ctx->input(1).scalar<int64_t>()());
    const uint64_t epoch = static_cast<uint64_t>(ctx->input(2).scalar<int64_t>()());
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
                      "similarity_transform_matrices: input size ", i, " is ", hw(2 * i), "x",
                      hw(2 * i + 1), "; a picture has at least one pixel")));
      double m[9];
      tfg::warp::TransformMatrix(spec_, tfg::HashKey({seed, epoch, static_cast<uint64_t>(ids(i))}),
                                 hw(2 * i), hw(2 * i + 1), height_, width_, m);
      for (int k = 0; k < 9; ++k) m_out(9 * i + k) = static_cast<float>(m[k]);
    }
  }

 private:
  tfg::warp::TransformSpec spec_;
  int64_t height_ = 0, width_ = 0;
};

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(::tensorflow::DEVICE_CPU),
                        SimilarityTransformMatricesOp);

}  // namespace
}  // namespace tf_gulp
