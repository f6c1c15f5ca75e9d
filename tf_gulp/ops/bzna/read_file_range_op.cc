// ReadFileRange(path, offset, size) -> contents: one exact pread of a
// Benzina sample (or of any byte range), checked against the file's size
// first (registered in bzna_ops.cc). The Benzina reader's per-element read:
// the index ops (bzna_index_op.cc) give the ranges.
//
// Like TensorFlow's ReadFile, it is not marked stateful, so a dataset using it
// can be checkpointed.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cc/io/file_cache.h"
#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
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

class ReadFileRangeOp : public OpKernel {
 public:
  explicit ReadFileRangeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalarInputs(ctx, {0, 1, 2},
                                          "read_file_range: path, offset and size must be "
                                          "scalars"));
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

REGISTER_KERNEL_BUILDER(Name(kReadFileRangeOp).Device(tensorflow::DEVICE_CPU),
                        ReadFileRangeOp);

}  // namespace
}  // namespace tf_gulp
