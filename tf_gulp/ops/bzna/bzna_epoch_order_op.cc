// BznaEpochOrder: the shuffled order of one epoch of a Benzina split, from the
// keyed permutation FFRecordDataset visits its records in
// (cc/util/record_order.h, keyed by (seed, epoch)), so the three sources
// draw their shuffle in C++ from one kind of key. The Benzina reader is a
// pipeline of plain tf.data stages, not a source kernel: it asks for the
// entries at the epoch positions its skip / take / shard keep (all of them for
// a pass, one for a tf.data service split). The op is registered in
// bzna_ops.cc.
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/util/record_order.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"

namespace tf_gulp {
namespace {

namespace tf = ::tensorflow;

class BznaEpochOrderOp : public tf::OpKernel {
 public:
  explicit BznaEpochOrderOp(tf::OpKernelConstruction* ctx) : tf::OpKernel(ctx) {}

  void Compute(tf::OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(ctx, tf::TensorShapeUtils::IsScalar(ctx->input(i).shape()),
                  absl::InvalidArgumentError(absl::StrCat(
                      "bzna_epoch_order: count, seed and epoch are scalars, got input ", i,
                      " of shape ", ctx->input(i).shape().DebugString())));
    }
    const int64_t count = ctx->input(0).scalar<int64_t>()();
    const uint64_t seed = static_cast<uint64_t>(ctx->input(1).scalar<int64_t>()());
    const int64_t epoch = ctx->input(2).scalar<int64_t>()();
    const tf::Tensor& positions = ctx->input(3);
    tf::Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, positions.shape(), &out));
    // O(1) per position: a tf.data service split (one position) costs nothing per entry of the
    // file.
    const tfg::RecordOrder order(count, /*shuffle=*/true, seed, epoch);
    const auto in = positions.flat<int64_t>();
    auto entries = out->flat<int64_t>();
    for (int64_t i = 0; i < in.size(); ++i) {
      OP_REQUIRES(ctx, in(i) >= 0 && in(i) < count,
                  absl::InvalidArgumentError(absl::StrCat(
                      "bzna_epoch_order: position ", in(i), " is outside the epoch's [0, ",
                      count, ")")));
      entries(i) = order[in(i)];
    }
  }
};

REGISTER_KERNEL_BUILDER(Name(kBznaEpochOrderOp).Device(tf::DEVICE_CPU), BznaEpochOrderOp);

}  // namespace
}  // namespace tf_gulp
