// Two small ops that let a tf.data pipeline read a Benzina-style container with
// no Python per element:
//
//   BznaTrackIndex(path) -> (offsets, sizes): the byte ranges of every sample
//     of the track named `track` (cc/mp4/mp4_reader: the container's boxes and
//     sample tables are validated against the file). It runs inside the
//     dataset graph, so the index is read where the data is and never becomes
//     a graph constant.
//   BznaEntryIndex(path) -> (offsets, sizes, target_offsets): per entry of a
//     Benzina container, the byte range of its per-image MP4 (bzna_input) and
//     the offset of its 8-byte target (-1: none), judged by
//     cc/mp4/bzna_container (the same code tf_gulp._core gives the Python
//     readers and `tf-gulp bzna info`). Indexes are kept per process
//     (cc/mp4/entry_index_cache.h): under tf.data service every entry is a
//     split that asks for the index again, and a worker reads it once.
//   BznaIndexCacheStats() -> [reads, hits] of that cache, for tests and
//     benchmarks.
//   ReadFileRange(path, offset, size) -> contents: one exact pread of a
//     sample, checked against the file's size first.
//
// Like TensorFlow's ReadFile, neither op is marked stateful: a dataset using
// them can be checkpointed (stateful ops in a map function block iterator
// checkpoints). The dataset feeds the path to the index op as a dataset
// element, so the index is never constant-folded into the graph.
#include <cstdint>
#include <memory>
#include <string>

#include "cc/io/file_cache.h"
#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "cc/mp4/bzna_container.h"
#include "cc/mp4/entry_index_cache.h"
#include "cc/mp4/mp4_reader.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/core_status.h"

namespace tf_gulp {
namespace {

using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

class BznaTrackIndexOp : public OpKernel {
 public:
  explicit BznaTrackIndexOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("track", &track_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& path_t = ctx->input(0);
    OP_REQUIRES(ctx, path_t.dims() == 0,
                absl::InvalidArgumentError("bzna_track_index: path must be a scalar"));
    const std::string path(path_t.scalar<tstring>()());
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
    const Tensor& path_t = ctx->input(0);
    OP_REQUIRES(ctx, path_t.dims() == 0,
                absl::InvalidArgumentError("bzna_entry_index: path must be a scalar"));
    const std::string path(path_t.scalar<tstring>()());
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

class ReadFileRangeOp : public OpKernel {
 public:
  explicit ReadFileRangeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  absl::InvalidArgumentError("read_file_range: path, offset and size must be scalars"));
    }
    const std::string path(ctx->input(0).scalar<tstring>()());
    const int64_t offset = ctx->input(1).scalar<int64_t>()();
    const int64_t size = ctx->input(2).scalar<int64_t>()();
    // A local file is opened per call (an open(2) is cheap, and a file replaced between epochs
    // is read afresh). On a remote file system opening costs round trips (a stat, an open), so
    // those files stay open in a small cache shared by this kernel's calls.
    std::shared_ptr<tfg::RandomAccessFile> file;
    if (tfg::IsRemotePath(path)) {
      OP_REQUIRES_OK(ctx, ToTfStatus(remote_files_.Get(path, &file)));
    } else {
      std::unique_ptr<tfg::RandomAccessFile> opened;
      OP_REQUIRES_OK(ctx, ToTfStatus(tfg::RandomAccessFile::Open(path, &opened)));
      file = std::move(opened);
    }
    OP_REQUIRES(ctx,
                offset >= 0 && size >= 0 && static_cast<uint64_t>(offset) <= file->size() &&
                    static_cast<uint64_t>(size) <= file->size() - offset,
                absl::DataLossError(absl::StrCat(path, ": ", size, " bytes at byte offset ",
                                                 offset, " run past the end of the file (",
                                                 file->size(), " bytes)")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
    tstring& contents = out->scalar<tstring>()();
    contents.resize_uninitialized(size);
    OP_REQUIRES_OK(ctx, ToTfStatus(file->ReadAt(offset, size, contents.data())));
  }

 private:
  tfg::FileCache remote_files_{8};
};

REGISTER_OP("TfGulp>BznaTrackIndex")
    .Input("path: string")
    .Output("offsets: int64")
    .Output("sizes: int64")
    .Attr("track: string")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      c->set_output(0, c->Vector(c->UnknownDim()));
      c->set_output(1, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc("Byte ranges of the samples of an MP4 track found by its hdlr name.");

REGISTER_OP("TfGulp>BznaEntryIndex")
    .Input("path: string")
    .Output("offsets: int64")
    .Output("sizes: int64")
    .Output("target_offsets: int64")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      for (int k = 0; k < 3; ++k) c->set_output(k, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc("Per entry of a Benzina container: image sample range and target offset (-1: none).");

REGISTER_OP("TfGulp>BznaIndexCacheStats")
    .Output("reads_and_hits: int64")
    .SetIsStateful()  // its value changes between calls: never constant-folded
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Vector(2));
      return absl::OkStatus();
    })
    .Doc("[reads, hits] of this process's Benzina entry index cache.");

REGISTER_OP("TfGulp>ReadFileRange")
    .Input("path: string")
    .Input("offset: int64")
    .Input("size: int64")
    .Output("contents: string")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Scalar());
      return absl::OkStatus();
    })
    .Doc("Reads exactly `size` bytes at `offset` of a file.");

REGISTER_KERNEL_BUILDER(Name("TfGulp>BznaTrackIndex").Device(tensorflow::DEVICE_CPU), BznaTrackIndexOp);
REGISTER_KERNEL_BUILDER(Name("TfGulp>BznaEntryIndex").Device(tensorflow::DEVICE_CPU), BznaEntryIndexOp);
REGISTER_KERNEL_BUILDER(Name("TfGulp>BznaIndexCacheStats").Device(tensorflow::DEVICE_CPU),
                        BznaIndexCacheStatsOp);
REGISTER_KERNEL_BUILDER(Name("TfGulp>ReadFileRange").Device(tensorflow::DEVICE_CPU), ReadFileRangeOp);

}  // namespace
}  // namespace tf_gulp
