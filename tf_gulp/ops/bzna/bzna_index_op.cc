// The kernels of the Benzina index ops (registered in bzna_ops.cc):
//
//   BznaEntryIndex(path) -> (offsets, sizes, target_offsets): per entry of a
//     Benzina container, the byte range of its per-image MP4 (bzna_input) and
//     the offset of its 8-byte target (-1: none), judged by
//     cc/mp4/bzna_container (the same code tf_gulp._core gives the Python
//     readers and `tf-gulp bzna info`). A tf.data pipeline reads a container
//     through it with no Python per element. Indexes are kept per process
//     (cc/mp4/entry_index_cache.h): under tf.data service every entry is a
//     split that asks for the index again, and a worker reads it once.
//   InternalTestingBznaTrackIndex(path) -> (offsets, sizes): the byte ranges
//     of every sample of the track named `track` (cc/mp4/mp4_reader: the
//     container's boxes and sample tables are validated against the file).
//   InternalTestingBznaIndexCacheStats() -> [reads, hits] of the entry index
//     cache.
// The last two serve tests and benchmarks only; their names say so, so that
// no one builds on them.
//
// Like TensorFlow's ReadFile, the two index ops are not marked stateful: a
// dataset using them can be checkpointed (stateful ops in a map function
// block iterator checkpoints). The dataset feeds the path to the index op as a
// dataset element, so the index is never constant-folded into the graph. The
// samples themselves are read by ReadFileRange (read_file_range_op.cc).
#include <cstdint>
#include <memory>
#include <string>

#include "cc/io/random_access_file.h"
#include "cc/mp4/entry_index_cache.h"
#include "cc/mp4/mp4_reader.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"

namespace tf_gulp {
namespace {

using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;

class BznaTrackIndexOp : public OpKernel {
 public:
  explicit BznaTrackIndexOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    BznaTrackIndexAttrs attrs;
    OP_REQUIRES_OK(ctx, ReadAttrs(ctx, &attrs));
    track_ = attrs.track;
  }

  void Compute(OpKernelContext* ctx) override {
    std::string path;
    OP_REQUIRES_OK(ctx, ScalarInput<tstring>(ctx, 0, "bzna_track_index", "path", &path));
    std::unique_ptr<tfg::RandomAccessFile> file;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::RandomAccessFile::Open(path, &file)));
    tfg::mp4::Movie movie;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::ReadMovie(*file, &movie)));
    const tfg::mp4::Track* track = nullptr;
    OP_REQUIRES_OK(ctx, ToTfStatus(movie.GetTrack(track_, &track)));
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

 private:
  std::string track_;
};

class BznaEntryIndexOp : public OpKernel {
 public:
  explicit BznaEntryIndexOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    std::string path;
    OP_REQUIRES_OK(ctx, ScalarInput<tstring>(ctx, 0, "bzna_entry_index", "path", &path));
    std::shared_ptr<const tfg::mp4::EntryIndex> cached;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::EntryIndexCache::Global()->Get(path, &cached)));
    const tfg::mp4::EntryIndex& index = *cached;
    const int64_t n = static_cast<int64_t>(index.entries);
    Tensor* out[3] = {nullptr, nullptr, nullptr};
    for (int k = 0; k < 3; ++k) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(k, TensorShape({n}), &out[k]));
    }
    auto o = out[0]->vec<int64_t>();
    auto s = out[1]->vec<int64_t>();
    auto t = out[2]->vec<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      o(i) = static_cast<int64_t>(index.offsets[i]);
      s(i) = static_cast<int64_t>(index.sizes[i]);
      t(i) = index.target_offsets[i];
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

REGISTER_KERNEL_BUILDER(Name(kBznaEntryIndexOp).Device(tensorflow::DEVICE_CPU),
                        BznaEntryIndexOp);
REGISTER_KERNEL_BUILDER(Name(kBznaTrackIndexOp).Device(tensorflow::DEVICE_CPU),
                        BznaTrackIndexOp);
REGISTER_KERNEL_BUILDER(
    Name(kBznaIndexCacheStatsOp).Device(tensorflow::DEVICE_CPU),
    BznaIndexCacheStatsOp);

}  // namespace
}  // namespace tf_gulp
