// SimilarityWarp: the batched bilinear affine (or projective) warp with fused
// bias/norm, on pictures [B, H, W, C] or clips [B, T, H, W, C] (one matrix per
// picture or clip). The math is in cc/warp/similarity_warp.*; this file
// validates tensors and shards output rows over TF's intra-op threads.
//
// The CPU kernel is registered here, the GPU kernel in
// similarity_warp_gpu_op.cc; both check their inputs with
// similarity_warp_args.h.
#include <cstdint>
#include <string>

#include "cc/warp/similarity_warp.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/util/work_sharder.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/image/image_ops.h"
#include "tf_gulp/ops/image/similarity_warp_args.h"

namespace tf_gulp {

void WarpOnCpu(::tensorflow::OpKernelContext* ctx, const SimilarityWarpArgs& args,
               const ::tensorflow::Tensor& images, ::tensorflow::Tensor* output) {
  const tfg::warp::WarpGeometry& g = args.g;
  const int64_t frames = args.frames;
  const float* m = ctx->input(1).flat<float>().data();
  const ::tensorflow::Tensor& bias = ctx->input(3);
  const ::tensorflow::Tensor& norm = ctx->input(4);
  const ::tensorflow::Tensor& oob = ctx->input(5);
  const int64_t batch = args.batch;
  const uint8_t* src = images.flat<uint8_t>().data();
  float* dst = output->flat<float>().data();
  const float* bias_p = bias.flat<float>().data();
  const float* norm_p = norm.flat<float>().data();
  const float* oob_p = oob.flat<float>().data();
  const int64_t in_size = g.in_height * g.in_width * g.channels;
  const int64_t out_size = g.out_height * g.out_width * g.channels;
  const int64_t pictures = batch * frames;
  const int64_t total_rows = pictures * g.out_height;
  // Rows of all pictures form one range; each shard may span pictures.
  auto work = [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t p = begin / g.out_height;
      const int64_t row = begin % g.out_height;
      const int64_t stop = std::min(end - p * g.out_height, g.out_height);
      tfg::warp::WarpRows(g, src + p * in_size, m + 9 * (p / frames), bias_p,
                          norm_p, oob_p, row, stop, dst + p * out_size);
      begin = p * g.out_height + stop;
    }
  };
  auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
  const int64_t cost_per_row = g.out_width * (g.channels * 12 + 30);
  ::tensorflow::Shard(threads->num_threads, threads->workers, total_rows,
                      cost_per_row, work);
}

namespace {

using ::tensorflow::DEVICE_CPU;

class SimilarityWarpOp : public OpKernel {
 public:
  explicit SimilarityWarpOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadSimilarityWarpLayout(ctx, &layout_));
  }

  void Compute(OpKernelContext* ctx) override {
    SimilarityWarpArgs args;
    OP_REQUIRES_OK(ctx, ParseSimilarityWarpArgs(ctx, layout_, &args));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, args.out_shape, &output));
    if (output->NumElements() == 0) return;
    WarpOnCpu(ctx, args, ctx->input(0), output);
  }

 private:
  tfg::warp::Layout layout_ = tfg::warp::Layout::kNHWC;
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name(kSimilarityWarpOp).Device(DEVICE_CPU), SimilarityWarpOp);

}  // namespace tf_gulp
