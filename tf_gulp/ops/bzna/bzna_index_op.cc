// The kernels of the Benzina ops for tests and benchmarks (registered in
// bzna_ops.cc), named InternalTesting so that no one builds on them:
//
//   InternalTestingBznaTrackIndex(path, track) -> (offsets, sizes): the byte ranges
//     of every sample of the track named `track` (cc/mp4/mp4_reader: the
//     container's boxes and sample tables are validated against the file).
//   InternalTestingBznaIndexCacheStats() -> [reads, hits] of the entry index
//     cache (cc/mp4/entry_index_cache.h), which BenzinaDataset's kernel reads
//     its index through.
//
// The track index op is not marked stateful, like TensorFlow's ReadFile.
#include <cstdint>
#include <memory>
#include <string>

#include "cc/io/random_access_file.h"
#include "cc/mp4/entry_index_cache.h"
#include "cc/mp4/mp4_reader.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

class BznaTrackIndexOp : public OpKernel {
 public:
  explicit BznaTrackIndexOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    std::string path;
    std::string name;
    OP_REQUIRES_OK(ctx, ScalarInput<tstring>(ctx, 0, "bzna_track_index", "path", &path));
    OP_REQUIRES_OK(ctx, ScalarInput<tstring>(ctx, 1, "bzna_track_index", "track", &name));
    std::unique_ptr<tfg::RandomAccessFile> file;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::RandomAccessFile::Open(path, &file)));
    tfg::mp4::Movie movie;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::ReadMovie(*file, &movie)));
    const tfg::mp4::Track* track = nullptr;
    OP_REQUIRES_OK(ctx, ToTfStatus(movie.GetTrack(name, &track)));
    const int64_t n = static_cast<int64_t>(track->num_samples());
    Tensor* offsets = nullptr;
    Tensor* sizes = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n}), &offsets));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({n}), &sizes));
    auto o = offsets->vec<int64_t>();
    auto s = sizes->vec<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      o(i) = static_cast<int64_t>(track->sample_offsets[i]);
      s(i) = static_cast<int64_t>(track->sample_sizes[i]);
    }
  }
};

class BznaIndexCacheStatsOp : public OpKernel {
 public:
  explicit BznaIndexCacheStatsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({2}), &out));
    const tfg::mp4::EntryIndexCache* cache = tfg::mp4::EntryIndexCache::Global();
    out->vec<int64_t>()(0) = static_cast<int64_t>(cache->reads());
    out->vec<int64_t>()(1) = static_cast<int64_t>(cache->hits());
  }
};

REGISTER_KERNEL_BUILDER(Name(kBznaTrackIndexOp).Device(tensorflow::DEVICE_CPU),
                        BznaTrackIndexOp);
REGISTER_KERNEL_BUILDER(
    Name(kBznaIndexCacheStatsOp).Device(tensorflow::DEVICE_CPU),
    BznaIndexCacheStatsOp);

}  // namespace
}  // namespace tf_gulp
