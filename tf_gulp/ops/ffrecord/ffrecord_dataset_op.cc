// FFRecordDataset: a tf.data source of the records of FFRecord files.
//
// The op takes the file (or directory) paths and options; the kernel opens
// the files and validates their headers itself, so the dataset serializes to
// a small graph (paths + attrs) that can be saved, checkpointed and run on
// tf.data service workers.
//
// Elements are string tensors: one record (shape []) or, with batch_size, a
// batch of records (shape [batch_size], the last one shorter unless
// drop_remainder). A batch's records are located, their output strings
// allocated at their exact sizes (a small batch's in one block they share),
// and all of their reads submitted to the
// kernel at once (io_uring), straight into the output tensor's buffers; the
// CRC-32 of each record is checked as its bytes arrive.
//
// Reading goes through the TensorFlow-free core in cc/ffrecord and cc/io;
// this file only translates options, tensors and errors.

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cc/ffrecord/ffrecord_index.h"
#include "cc/ffrecord/ffrecord_reader.h"
#include "cc/util/ordered_read_ahead.h"
#include "cc/util/shard.h"
#include "cc/io/batch_reader.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/logging.h"
#include "tf_gulp/ops/ffrecord/ffrecord_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/epoch_counter.h"
#include "tf_gulp/ops/framework/positional_source_dataset.h"
#include "tf_gulp/ops/framework/tf_names.h"

namespace tf_gulp {
namespace {

namespace ffr = ::tfg::ffrecord;

// The op's input; its attrs are FFRecordDatasetAttrs' (ffrecord_ops.h).
constexpr char kPaths[] = "paths";

// Without batch_size, records are still read in groups of this many per
// submission (and handed out one by one).
constexpr int64_t kUnbatchedGroup = 32;
// The read-ahead window's bytes, at the mean record size, that decide how
// many read-ahead threads an iterator runs beyond the first (one per core
// otherwise): large batches on many cores would hold gigabytes in flight.
constexpr uint64_t kReadAheadBytes = uint64_t{256} << 20;
// Groups in the window besides one per read-ahead thread: the one the
// consumer takes, and one the first thread to finish starts at once.
constexpr int kExtraGroups = 2;
// A batch of at most this many bytes is read into one block that its strings
// share (counted views), rather than one allocation per record: for small
// records, a malloc and free each are a visible share of the CPU. Larger
// batches keep one allocation per record, so a record kept alone after its
// batch is freed holds at most this much memory.
constexpr uint64_t kSharedBatchBytes = uint64_t{1} << 20;

// Everything the op's attrs say (ffrecord_ops.h), read once in the kernel
// constructor, and what the kernel derives from them.
struct Options : FFRecordDatasetAttrs {
  tfg::IoEngine engine = tfg::IoEngine::kAuto;
  bool batched() const { return batch_size > 0; }
  // Elements of an epoch of `num_records` records, before sharding.
  int64_t EpochElements(int64_t num_records) const {
    if (!batched()) return num_records;
    return drop_remainder ? num_records / batch_size
                          : (num_records + batch_size - 1) / batch_size;
  }
  // Records per read submission.
  int64_t group() const { return batched() ? batch_size : kUnbatchedGroup; }
  int EffectiveQueueDepth() const {
    const int64_t q = queue_depth > 0 ? queue_depth : group();
    return static_cast<int>(std::min<int64_t>(std::max<int64_t>(q, 1), tfg::kMaxQueueDepth));
  }
};

// The op's attrs hold the checks that fit an attr (allowed strings, minimums);
// what is left are the limits an attr cannot state and the core's own checks.
absl::Status ParseOptions(Options* o) {
  if (o->queue_depth > tfg::kMaxQueueDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "queue_depth must be at most ", tfg::kMaxQueueDepth, ", got ", o->queue_depth));
  }
  return ToTfStatus(tfg::ParseIoEngine(o->io_engine, &o->engine));
}

class FFRecordDatasetOp
    : public PositionalSourceOpKernel<FFRecordDatasetAttrs, Options, ParseOptions> {
 public:
  using PositionalSourceOpKernel::PositionalSourceOpKernel;
  void MakeDataset(OpKernelContext* ctx, DatasetBase** output) override;

 private:
  class Dataset;
};

// A unit of reading, a record group: one batch (batched), or a group of
// consecutive records (unbatched); not a gulp chunk. Its output tensors are allocated before the read, with each
// string sized to its record, and the read fills them in place.
struct RecordGroup {
  std::vector<Tensor> tensors;  // batched: one [n] string tensor; else one scalar per record
  std::vector<ffr::RecordLocation> locations;  // the records, in output order
  std::vector<char*> dsts;                     // where each one goes in `tensors`
  std::vector<tfg::Status> statuses;           // one per record
  std::vector<int64_t> records;                // each one's record index
  int64_t epoch = 0;
};

class FFRecordDatasetOp::Dataset : public PositionalSourceDataset<RecordGroup, Options> {
 public:
  Dataset(OpKernelContext* ctx, const std::vector<std::string>& paths, const Options& options,
          std::shared_ptr<const ffr::FFRecordReader> reader,
          std::shared_ptr<EpochCounter> epochs)
      : PositionalSourceDataset(ctx, "FFRecordDataset", "FFRecord", options,
                                reader->num_records(),
                                options.EpochElements(reader->num_records()),
                                // Epochs are counted per path list.
                                absl::StrJoin(paths, "\n"), std::move(epochs)),
        reader_(std::move(reader)),
        num_records_(reader_->num_records()),
        data_bytes_(reader_->record_bytes()) {
    dtypes_ = {tensorflow::DT_STRING};
    if (!options_.batched()) {
      shapes_ = {PartialTensorShape({})};
    } else {
      shapes_ = {PartialTensorShape({options_.drop_remainder ? options_.batch_size : -1})};
    }
    if (options_.keys) {
      // (epoch, index, record): the index has the record's shape.
      dtypes_ = {tensorflow::DT_INT64, tensorflow::DT_INT64, tensorflow::DT_STRING};
      shapes_ = {PartialTensorShape({}), shapes_[0], shapes_[0]};
    }
  }

  absl::Status MakeReader(IteratorContext* ctx,
                          std::unique_ptr<Reader>* reader) const override {
    auto groups = std::make_unique<RecordGroupReader>(this, ctx);
    // Fail now, not on the first read, when the engine cannot be had.
    TF_RETURN_IF_ERROR(groups->CreateFirstReadContext());
    *reader = std::move(groups);
    return absl::OkStatus();
  }

 private:
  // Reads one iterator's record groups: a batch per unit, or kUnbatchedGroup
  // records per unit handed out one by one. Groups are read on several
  // threads at once, each with an io_uring of its own.
  class RecordGroupReader : public Reader {
   public:
    RecordGroupReader(const Dataset* dataset, IteratorContext* ctx)
        : dataset_(dataset), ctx_(ctx), threads_(ReadAheadThreads(*dataset, ctx)) {
      io_.engine = dataset->options_.engine;
      io_.queue_depth = dataset->options_.EffectiveQueueDepth();
    }

    // Makes the first read context (an io_uring when the engine is one).
    absl::Status CreateFirstReadContext() {
      std::unique_ptr<ffr::ReadContext> context;
      TFG_TF_RETURN_IF_ERROR(ffr::ReadContext::Create(io_, &context));
      idle_.push_back(std::move(context));
      return absl::OkStatus();
    }

    int64_t unit_size() const override {
      return dataset_->options_.batched() ? 1 : kUnbatchedGroup;
    }
    // Record groups (batches, or kUnbatchedGroup records) in the read-ahead
    // window, the one being returned included: one per read-ahead thread, one
    // more that the first thread to finish starts at once, and the one the
    // consumer takes, so every core reads or copies while the consumer hands
    // a group over, and the device queue does not drain between batches.
    // Fewer threads left a core idle, and a deeper window did not read
    // faster.
    int64_t read_ahead_units() const override { return threads_ + kExtraGroups; }
    // The groups ahead of the one being returned are read on threads of the
    // iterator's own, one per core (the consumer reads a group no thread has
    // started). tf.data's shared runner threads spin while they look for
    // work, and between tasks as short as a batch of 4 KiB records their
    // spinning cost about a fifth of all the CPU per record (perf: Eigen's
    // GlobalSteal and PopBack; docs/benchmarks.md, "Where FFRecordDataset's
    // CPU goes").
    int read_ahead_threads() const override { return threads_; }

    // One read-ahead thread per core, as many as keep the window (threads +
    // kExtraGroups groups) within kReadAheadBytes at the dataset's mean
    // record size.
    static int ReadAheadThreads(const Dataset& d, IteratorContext* ctx) {
      const double records_per_group =
          d.options_.batched() ? static_cast<double>(d.options_.batch_size) : kUnbatchedGroup;
      const double mean_record_bytes =
          d.num_records_ > 0 ? static_cast<double>(d.data_bytes_) / d.num_records_ : 0.0;
      return tfg::ReadAheadThreadsWithin(ctx->runner_threadpool_size(),
                                         records_per_group * mean_record_bytes,
                                         static_cast<double>(kReadAheadBytes), kExtraGroups);
    }

    // Locates the records of elements [first, first + count) of `epoch` and
    // allocates their output strings at their exact sizes, on the consumer's
    // thread (the thread that frees them: see cc/util/ordered_read_ahead.h).
    RecordGroup PrepareOnConsumerThread(int64_t epoch, int64_t first, int64_t count) override {
      const Dataset& d = *dataset_;
      const Options& o = d.options_;
      RecordGroup group;
      // Record positions in the epoch's order: element e of this iterator is
      // the epoch's element shard.Global(e) (e itself when not sharded).
      const tfg::Shard& shard = d.shard();
      int64_t begin = 0, end = 0;
      if (o.batched()) {
        begin = shard.Global(first) * o.batch_size;
        end = std::min(begin + o.batch_size, d.num_records_);
        group.tensors.emplace_back(ctx_->allocator({}), tensorflow::DT_STRING,
                                   TensorShape({end - begin}));
      } else {
        for (int64_t k = 0; k < count; ++k) {
          group.tensors.emplace_back(ctx_->allocator({}), tensorflow::DT_STRING, TensorShape({}));
        }
      }
      const size_t n = static_cast<size_t>(o.batched() ? end - begin : count);
      std::vector<ffr::RecordLocation>& locations = group.locations;
      std::vector<char*>& dsts = group.dsts;
      locations.resize(n);
      dsts.resize(n);
      group.statuses.resize(n);
      group.epoch = epoch;
      group.records.resize(n);
      for (size_t k = 0; k < n; ++k) {
        const int64_t position = o.batched() ? begin + static_cast<int64_t>(k)
                                             : shard.Global(first + static_cast<int64_t>(k));
        group.records[k] = order()[position];
      }
      // Positions are in range by construction, so Locate cannot fail.
      d.reader_->Locate(group.records.data(), n, locations.data());
      uint64_t total = 0;
      for (const ffr::RecordLocation& loc : locations) total += loc.length;
      if (o.batched() && total <= kSharedBatchBytes) {
        // One block for the whole batch, each string a counted view of its
        // part: one allocation instead of one per record.
        auto* block = new tstring::owner<std::unique_ptr<char[]>>(
            std::unique_ptr<char[]>(new char[std::max<uint64_t>(total, 1)]));
        char* p = block->value().get();
        for (size_t k = 0; k < n; ++k) {
          const size_t length = static_cast<size_t>(locations[k].length);
          group.tensors[0].flat<tstring>()(k).assign_as_shared_view(p, length, block);
          dsts[k] = p;
          p += length;
        }
        block->Unref();  // the strings hold it now
        return group;
      }
      for (size_t k = 0; k < n; ++k) {
        tstring* s = o.batched() ? &group.tensors[0].flat<tstring>()(k)
                                 : &group.tensors[k].scalar<tstring>()();
        s->resize_uninitialized(locations[k].length);
        dsts[k] = s->mdata();
      }
      return group;
    }

    // Reads the prepared records straight into their output strings.
    void Read(int64_t epoch, int64_t first, int64_t count, bool alone, RecordGroup* group) override {
      ReadRecords(group->locations, group->dsts.data(), group->statuses.data());
    }

    // Element `k` of a group: a batch fails with the first error among its
    // records, a single record with its own.
    absl::Status Output(RecordGroup& group, int64_t k, std::vector<Tensor>* out) override {
      const bool batched = dataset_->options_.batched();
      if (batched) {
        for (const tfg::Status& s : group.statuses) TFG_TF_RETURN_IF_ERROR(s);
      } else {
        TFG_TF_RETURN_IF_ERROR(group.statuses[k]);
      }
      if (dataset_->options_.keys) {
        out->emplace_back(group.epoch);
        if (batched) {
          Tensor index(ctx_->allocator({}), tensorflow::DT_INT64,
                       TensorShape({static_cast<int64_t>(group.records.size())}));
          std::copy(group.records.begin(), group.records.end(), index.flat<int64_t>().data());
          out->push_back(std::move(index));
        } else {
          out->emplace_back(group.records[k]);
        }
      }
      out->push_back(group.tensors[batched ? 0 : k]);
      return absl::OkStatus();
    }

   private:
    // Reads `locations` into `dsts` with an idle read context (a new one when
    // every context is busy on another thread).
    void ReadRecords(const std::vector<ffr::RecordLocation>& locations, char* const* dsts,
                     tfg::Status* statuses) {
      std::unique_ptr<ffr::ReadContext> context;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!idle_.empty()) {
          context = std::move(idle_.back());
          idle_.pop_back();
        }
      }
      tfg::Status status;
      if (!context) status = ffr::ReadContext::Create(io_, &context);
      if (status.ok()) {
        dataset_->reader_->Read(context.get(), locations.data(), locations.size(), dsts,
                                statuses);
      } else {
        for (size_t k = 0; k < locations.size(); ++k) statuses[k] = status;
      }
      if (!context) return;
      std::lock_guard<std::mutex> lock(mu_);
      idle_.push_back(std::move(context));
    }

    const Dataset* const dataset_;
    IteratorContext* const ctx_;  // the iterator's copy (see MakeReader)
    const int threads_;           // read-ahead threads: one per core
    tfg::BatchReaderOptions io_;
    std::mutex mu_;
    std::vector<std::unique_ptr<ffr::ReadContext>> idle_;  // one io_uring each
  };

  const std::shared_ptr<const ffr::FFRecordReader> reader_;
  const int64_t num_records_;
  // All records' bytes, headers excluded: with the record count, the mean
  // record size that bounds the read-ahead window.
  const uint64_t data_bytes_;
};

void FFRecordDatasetOp::MakeDataset(OpKernelContext* ctx, DatasetBase** output) {
  const Tensor* paths_tensor = nullptr;
  OP_REQUIRES_OK(ctx, ctx->input(kPaths, &paths_tensor));
  OP_REQUIRES(ctx, paths_tensor->dims() <= 1,
              absl::InvalidArgumentError(absl::StrCat(
                  "paths must be a string scalar or vector, got shape ",
                  paths_tensor->shape().DebugString())));
  std::vector<std::string> paths;
  for (int64_t i = 0; i < paths_tensor->NumElements(); ++i) {
    paths.emplace_back(paths_tensor->flat<tstring>()(i));
  }
  std::vector<std::string> files;
  OP_REQUIRES_OK(ctx, ToTfStatus(ffr::ExpandPaths(paths, &files)));
  ffr::ReaderOptions reader_options;
  reader_options.check_data = options_.check_data;
  reader_options.direct_io = options_.direct_io;
  reader_options.access =
      options_.source.shuffle ? ffr::AccessPattern::kRandom : ffr::AccessPattern::kSequential;
  std::unique_ptr<ffr::FFRecordReader> reader;
  OP_REQUIRES_OK(ctx, ToTfStatus(ffr::FFRecordReader::Open(files, reader_options, &reader)));
  for (const std::string& warning : reader->warnings()) LOG(WARNING) << warning;
  std::shared_ptr<EpochCounter> epochs;
  OP_REQUIRES_OK(ctx, GetEpochs(ctx, &epochs));
  *output = new Dataset(ctx, paths, options_, std::move(reader), std::move(epochs));
}

// The op's registration: ffrecord_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kFFRecordDatasetOp).Device(tensorflow::DEVICE_CPU), FFRecordDatasetOp);

}  // namespace
}  // namespace tf_gulp
