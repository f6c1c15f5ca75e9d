// BznaDataset (tf_gulp.BenzinaDataset's source): a tf.data source of the
// entries of a Benzina container.
//
// The op takes the container's path and the entry range of its split; the
// kernel reads and judges the container's index itself (cc/mp4, through the
// process's index cache), so the dataset serializes to a small graph (path +
// attrs) that can be saved, checkpointed and run on tf.data service workers.
//
// Element i of an epoch is entry start + order[i] (the base's order of the
// epoch's records, a keyed permutation of (seed, epoch) when shuffling), read
// by the core's EntryReader (cc/mp4/bzna_reader.h): the per-image MP4 straight
// into its output string, then the 8-byte target. Decoding is a map after this
// source (decode_hevc, decode_hevc_warped), in Python's BenzinaDataset and
// DataLoader. The epoch, checkpoints, skip, Dataset.shard and tf.data service
// splits are positional_source_dataset.h's, as for the other sources.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/mp4/bzna_reader.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/positional_source_dataset.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

// Entries read ahead of the consumer (each one pread of an image, some
// hundred kilobytes): the decode map that follows has its own parallelism.
constexpr int64_t kReadAheadEntries = 8;

// One entry, its sample's output string allocated before the read.
struct BznaEntry {
  Tensor sample;
  int64_t entry = 0;
  int64_t label = -1;
  int64_t epoch = 0;
  tfg::Status status;
};

// Reads one iterator's entries, one per unit, on tf.data's threads, through
// the core's reader of the container (shared by the dataset's iterators).
class EntryReader : public PositionalSourceDataset<BznaEntry, BznaDatasetAttrs>::Reader {
 public:
  EntryReader(const BznaDatasetAttrs& options, const tfg::mp4::EntryReader& file,
              IteratorContext* ctx)
      : options_(options), file_(file), ctx_(ctx) {}

  int64_t read_ahead_units() const override { return kReadAheadEntries; }

  // Finds the entry at the iterator's element `first` of `epoch` and
  // allocates its sample's string at its size, on the consumer's thread
  // (the thread that frees it: see cc/util/ordered_read_ahead.h).
  BznaEntry PrepareOnConsumerThread(int64_t epoch, int64_t first, int64_t count) override {
    BznaEntry unit;
    unit.epoch = epoch;
    unit.entry = options_.start + Record(first);
    unit.sample = Tensor(ctx_->allocator({}), tensorflow::DT_STRING, TensorShape({}));
    unit.sample.scalar<tstring>()().resize_uninitialized(
        file_.sample_size(static_cast<uint64_t>(unit.entry)));
    return unit;
  }

  void Read(int64_t epoch, int64_t first, int64_t count, bool alone, BznaEntry* unit) override {
    unit->status = file_.Read(static_cast<uint64_t>(unit->entry),
                              unit->sample.scalar<tstring>()().mdata(), &unit->label);
  }

  // (epoch, index, label, sample[, what]): a dict's keys in sorted order.
  absl::Status Output(BznaEntry& unit, int64_t k, std::vector<Tensor>* out) override {
    TFG_TF_RETURN_IF_ERROR(unit.status);
    out->emplace_back(unit.epoch);
    out->emplace_back(unit.entry);
    out->emplace_back(unit.label);
    out->push_back(std::move(unit.sample));
    if (options_.names) {
      out->emplace_back(tstring(file_.Describe(static_cast<uint64_t>(unit.entry))));
    }
    return absl::OkStatus();
  }

 private:
  const BznaDatasetAttrs& options_;
  const tfg::mp4::EntryReader& file_;
  IteratorContext* const ctx_;  // the iterator's copy (see MakeReader)
};

// One element per entry (a record of the epoch's order).
class BznaDataset : public PositionalSourceDataset<BznaEntry, BznaDatasetAttrs> {
 public:
  BznaDataset(OpKernelContext* ctx, std::string path, const BznaDatasetAttrs& options,
                 std::shared_ptr<const tfg::mp4::EntryReader> file,
                 std::shared_ptr<EpochCounter> epochs)
      // Epochs are counted per container.
      : PositionalSourceDataset(ctx, "BenzinaDataset", "Benzina", options,
                                options.stop - options.start, options.stop - options.start,
                                std::move(path), std::move(epochs)),
        file_(std::move(file)) {
    dtypes_ = {tensorflow::DT_INT64, tensorflow::DT_INT64, tensorflow::DT_INT64,
               tensorflow::DT_STRING};
    if (options_.names) dtypes_.push_back(tensorflow::DT_STRING);
    shapes_.assign(dtypes_.size(), PartialTensorShape({}));
  }

  absl::Status MakeReader(IteratorContext* ctx, std::unique_ptr<Reader>* reader) const override {
    *reader = std::make_unique<EntryReader>(options_, *file_, ctx);
    return absl::OkStatus();
  }

 private:
  const std::shared_ptr<const tfg::mp4::EntryReader> file_;
};

absl::Status ParseOptions(BznaDatasetAttrs* o) {
  if (o->stop < o->start) {
    return absl::InvalidArgumentError(
        absl::StrCat("BenzinaDataset: the entry range [", o->start, ", ", o->stop,
                     ") ends before it starts"));
  }
  return absl::OkStatus();
}

// The kernel: the container opened and its split checked against it, once
// per dataset made.
class BznaDatasetOp
    : public PositionalSourceOpKernel<BznaDatasetAttrs, BznaDatasetAttrs, ParseOptions> {
 public:
  using PositionalSourceOpKernel::PositionalSourceOpKernel;

  void MakeDataset(OpKernelContext* ctx, DatasetBase** output) override {
    std::string path;
    OP_REQUIRES_OK(ctx, ScalarInput<tstring>(ctx, 0, "BenzinaDataset", "path", &path));
    std::unique_ptr<tfg::mp4::EntryReader> file;
    OP_REQUIRES_OK(ctx, ToTfStatus(tfg::mp4::EntryReader::Open(path, &file)));
    // The container is judged again where it is read: it may have changed
    // since Python resolved the split.
    OP_REQUIRES(ctx, static_cast<uint64_t>(options_.stop) <= file->entries(),
                absl::InvalidArgumentError(absl::StrCat(
                    path, ": the split [", options_.start, ", ", options_.stop,
                    ") is past the end of the file (", file->entries(), " entries)")));
    std::shared_ptr<EpochCounter> epochs;
    OP_REQUIRES_OK(ctx, GetEpochs(ctx, &epochs));
    *output = new BznaDataset(ctx, std::move(path), options_, std::move(file),
                                 std::move(epochs));
  }
};

// The op's registration: bzna_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kBznaDatasetOp).Device(tensorflow::DEVICE_CPU), BznaDatasetOp);

}  // namespace
}  // namespace tf_gulp
