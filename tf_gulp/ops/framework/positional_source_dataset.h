// The skeleton of a positional source dataset: a tf.data source whose
// elements are a pure function of (epoch, position), as TensorFlow's
// RangeDataset is with its RangeCounter and single split provider.
//
// GulpDataset and FFRecordDataset are both such sources. This file owns what
// they share, written once:
//   - the kernel: the op's attrs read from its table (attr_table.h), checked,
//     and the source attrs (source_attrs.h) with them (PositionalSourceOpKernel);
//   - the element spec, cardinality and debug string of the dataset;
//   - its graph node (AsGraphDefInternal): the op's input tensors as given and
//     every attr of its table, so save(), checkpoints and tf.data service make
//     the same dataset again;
//   - each epoch's order of records (cc/util/record_order.h), from the source
//     attrs' shuffle and seed: a source says only how many records an epoch
//     has, and its Reader finds them with order() and Record();
//   - the epoch: each iterator is a new pass over the dataset's key (the
//     directory, the file list), counted by an EpochCounter shared by every
//     re-creation of one Python dataset (epoch_counter.h, epoch_cursor.h),
//     from the source attrs' first_epoch (a dataset that starts at epoch e);
//   - the position of the next element in the epoch, which is the whole
//     checkpoint (elements read ahead are recomputed after a restore), and
//     skip(), which moves it without reading anything;
//   - Dataset.shard(num_shards, shard_index): the iterator's element e is the
//     epoch's element shard.Global(e), so nothing of the other shards is read;
//   - tf.data service's dynamic sharding: one split [epoch, index] per
//     element (epoch_cursor.h, element_split_provider.h);
//   - reading ahead of the consumer, in units of one or more consecutive
//     elements, on tf.data's runner threads (cc/util/ordered_read_ahead.h).
//
// A source supplies only its Options' parsing, MakeDataset, its element spec
// and a Reader: how the elements [first, first + count) of an epoch are read
// into a Unit, and how element k of a Unit is output.
//
// `Options` is the op's attr table struct (attr_table.h), or one derived from
// it with what the kernel derives; its `source` member is the SourceAttrs.
#ifndef TF_GULP_OPS_FRAMEWORK_POSITIONAL_SOURCE_DATASET_H_
#define TF_GULP_OPS_FRAMEWORK_POSITIONAL_SOURCE_DATASET_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/util/ordered_read_ahead.h"
#include "cc/util/record_order.h"
#include "cc/util/shard.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/mutex.h"
#include "tensorflow/core/platform/threadpool.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/epoch_counter.h"
#include "tf_gulp/ops/framework/epoch_cursor.h"
#include "tf_gulp/ops/framework/source_attrs.h"

namespace tf_gulp {

// A source dataset whose elements are read in Units (see Reader), made with
// the op's Options.
template <typename Unit, typename Options>
class PositionalSourceDataset : public ::tensorflow::data::DatasetBase {
  class Iterator;

 public:
  // What a source supplies: one per iterator, made by MakeReader.
  class Reader {
   public:
    virtual ~Reader() = default;

    // Consecutive elements read together (one read submission): unit u holds
    // the iterator's elements [u * unit_size, (u + 1) * unit_size).
    virtual int64_t unit_size() const { return 1; }
    // How many units are read ahead of the consumer, counting the one it
    // takes next.
    virtual int64_t read_ahead_units() const = 0;
    // Threads of a pool of the iterator's own that read ahead (without
    // spinning while idle); 0: tf.data's shared runner threads.
    virtual int read_ahead_threads() const { return 0; }

    // Called whenever the iterator's epoch changes (its first epoch, a split
    // of another epoch, a restore), under the iterator's lock and with no
    // read running; `Read` then reads that epoch.
    virtual void SetEpoch(int64_t epoch) {}

    // Starts the unit of the iterator's elements [first, first + count) of
    // `epoch`, on the consumer's thread, under the iterator's lock: what must
    // be allocated by the thread that will free it, i.e. output tensors (see
    // cc/util/ordered_read_ahead.h). By default nothing.
    virtual Unit PrepareOnConsumerThread(int64_t epoch, int64_t first, int64_t count) {
      return Unit();
    }

    // Reads the iterator's elements [first, first + count) of `epoch` (the
    // epoch's elements shard.Global(first), ... when sharded) into `unit`,
    // which PrepareOnConsumerThread returned. Runs on tf.data's runner threads, several at
    // once, without the iterator's lock. `alone`: a single element wanted
    // now, with nothing read ahead (a tf.data service split): its own work
    // may be spread over threads.
    virtual void Read(int64_t epoch, int64_t first, int64_t count, bool alone,
                      Unit* unit) = 0;

    // Element `k` of a unit that Read returned: its tensors, or its error.
    virtual absl::Status Output(Unit& unit, int64_t k,
                                std::vector<::tensorflow::Tensor>* out) = 0;

    // The order of the records of the epoch being read (the epoch SetEpoch
    // was last told): the whole epoch's position q, before sharding, holds
    // record order()[q]. A shuffle of (seed, epoch) or storage order, from the
    // source attrs; set by the iterator with the epoch, while no read runs.
    const tfg::RecordOrder& order() const { return order_; }
    // The record of the iterator's element `e` when an element is one
    // record: the epoch's order at the shard's global position (the shards
    // of an epoch are disjoint and cover it).
    int64_t Record(int64_t e) const { return order_[shard_.Global(e)]; }

   private:
    friend class Iterator;
    tfg::RecordOrder order_{0, false, 0, 0};
    tfg::Shard shard_;
  };

  // `ctx` is the op's (its inputs are the graph node's); `name` names the
  // dataset in errors ("GulpDataset"); `iterator_prefix` is its iterator's
  // name in checkpoint keys ("Gulp": "...::Gulp"). `epoch_records` is the
  // number of records of a whole epoch, which order() permutes, and
  // `epoch_elements` the number of its elements, before sharding (the same
  // unless an element holds several records); `epoch_key` keys this
  // dataset's epochs in `epochs`.
  PositionalSourceDataset(::tensorflow::OpKernelContext* ctx, std::string name,
                          std::string iterator_prefix, const Options& options,
                          int64_t epoch_records, int64_t epoch_elements, std::string epoch_key,
                          std::shared_ptr<EpochCounter> epochs)
      : DatasetBase(::tensorflow::data::DatasetContext(ctx)),
        options_(options),
        name_(std::move(name)),
        iterator_prefix_(std::move(iterator_prefix)),
        epoch_records_(epoch_records),
        num_elements_(options.source.shard.Size(epoch_elements)),
        epoch_key_(std::move(epoch_key)),
        epochs_(std::move(epochs)) {
    for (int i = 0; i < ctx->num_inputs(); ++i) inputs_.push_back(ctx->input(i));
  }

  // The per-iterator reader. `ctx` is a copy of the iterator's context that
  // lives as long as the reader: read-ahead tasks outlive the GetNext call
  // that scheduled them and use it for the runner and the allocator, as
  // tf.data's own parallel iterators do.
  virtual absl::Status MakeReader(::tensorflow::data::IteratorContext* ctx,
                                  std::unique_ptr<Reader>* reader) const = 0;

  std::unique_ptr<::tensorflow::data::IteratorBase> MakeIteratorInternal(
      const std::string& prefix) const override {
    return std::make_unique<Iterator>(
        typename Iterator::Params{this, absl::StrCat(prefix, "::", iterator_prefix_)});
  }

  const ::tensorflow::DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<::tensorflow::PartialTensorShape>& output_shapes() const override {
    return shapes_;
  }
  std::string DebugString() const override { return absl::StrCat(name_, "Op::Dataset"); }
  int64_t CardinalityInternal(::tensorflow::data::CardinalityOptions options) const override {
    return num_elements_;
  }
  absl::Status InputDatasets(std::vector<const DatasetBase*>* inputs) const override {
    return absl::OkStatus();
  }
  absl::Status CheckExternalState() const override { return absl::OkStatus(); }

  absl::Status MakeSplitProviders(
      std::vector<std::unique_ptr<::tensorflow::data::SplitProvider>>* split_providers)
      const override {
    split_providers->push_back(MakeCursor().MakeSplitProvider());
    return absl::OkStatus();
  }

  // An iterator's epoch and splits: one split per element.
  EpochCursor MakeCursor() const {
    return EpochCursor(name_, epochs_, epoch_key_, num_elements_, options_.source.first_epoch);
  }

  const Options& options() const { return options_; }
  const tfg::Shard& shard() const { return options_.source.shard; }
  // Elements of one epoch after sharding: what an iterator yields.
  int64_t num_elements() const { return num_elements_; }

 protected:
  // The op's node, written once for every source: its inputs as the kernel
  // was given them, and every attr of the table (attr_table.h), so no attr
  // can be registered and read but not saved.
  absl::Status AsGraphDefInternal(::tensorflow::data::SerializationContext* ctx,
                                  DatasetGraphDefBuilder* b,
                                  ::tensorflow::Node** output) const override {
    std::vector<::tensorflow::Node*> inputs;
    for (const ::tensorflow::Tensor& input : inputs_) {
      inputs.emplace_back();
      TF_RETURN_IF_ERROR(b->AddTensor(input, &inputs.back()));
    }
    GraphAttrs attrs;
    AddAttrs<Options>(options_, b, &attrs);
    return b->AddDataset(this, inputs, attrs, output);
  }

  // The op's options, as the kernel read and derived them.
  const Options options_;
  // The element spec, set by the source's constructor.
  ::tensorflow::DataTypeVector dtypes_;
  std::vector<::tensorflow::PartialTensorShape> shapes_;

 private:
  class Iterator : public ::tensorflow::data::DatasetIterator<PositionalSourceDataset> {
    using Base = ::tensorflow::data::DatasetIterator<PositionalSourceDataset>;

   public:
    explicit Iterator(const typename Base::Params& params)
        : Base(params), cursor_(params.dataset->MakeCursor()) {}

    absl::Status Initialize(::tensorflow::data::IteratorContext* ctx) override {
      ::tensorflow::mutex_lock l(mu_);
      const PositionalSourceDataset& d = *this->dataset();
      TF_RETURN_IF_ERROR(cursor_.Initialize(ctx));
      ctx_ = std::make_unique<::tensorflow::data::IteratorContext>(*ctx);
      TF_RETURN_IF_ERROR(d.MakeReader(ctx_.get(), &reader_));
      reader_->shard_ = d.shard();
      unit_size_ = std::max<int64_t>(1, reader_->unit_size());
      SetEpoch(cursor_.epoch());
      if (cursor_.has_splits()) return absl::OkStatus();
      // Units are read ahead on tf.data's runner threads. Each element is a
      // pure function of its position in this epoch, so reading ahead never
      // changes what is returned.
      const int64_t n = d.num_elements_;
      tfg::Scheduler schedule = *ctx_->runner();
      if (const int threads = reader_->read_ahead_threads(); threads > 0) {
        pool_ = ctx_->CreateThreadPool(absl::StrCat("tf_gulp_", d.iterator_prefix_), threads);
        schedule = [pool = pool_.get()](std::function<void()> fn) {
          pool->Schedule(std::move(fn));
        };
      }
      read_ahead_ = std::make_unique<tfg::OrderedReadAhead<Unit>>(
          std::move(schedule), reader_->read_ahead_units(),
          [this, n](int64_t unit) {
            const int64_t first = unit * unit_size_;
            return reader_->PrepareOnConsumerThread(epoch_, first, std::min(unit_size_, n - first));
          },
          [this, n](int64_t unit, Unit* result) {
            const int64_t first = unit * unit_size_;
            reader_->Read(epoch_, first, std::min(unit_size_, n - first), /*alone=*/false,
                          result);
          },
          /*start=*/0, (n + unit_size_ - 1) / unit_size_);
      return absl::OkStatus();
    }

    absl::Status GetNextInternal(::tensorflow::data::IteratorContext* ctx,
                                 std::vector<::tensorflow::Tensor>* out_tensors,
                                 bool* end_of_sequence) override {
      ::tensorflow::mutex_lock l(mu_);
      const int64_t n = this->dataset()->num_elements_;
      if (cursor_.has_splits()) {
        // tf.data service: one element per split, read when asked for (splits
        // arrive one at a time, so there is nothing to read ahead).
        int64_t index = 0;
        TF_RETURN_IF_ERROR(cursor_.NextSplit(&index, end_of_sequence));
        if (*end_of_sequence) return absl::OkStatus();
        if (cursor_.epoch() != epoch_) SetEpoch(cursor_.epoch());  // the dispatcher's
        Unit unit = reader_->PrepareOnConsumerThread(epoch_, index, 1);
        reader_->Read(epoch_, index, 1, /*alone=*/true, &unit);
        return reader_->Output(unit, 0, out_tensors);
      }
      if (position_ >= n) {
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      *end_of_sequence = false;
      const int64_t unit = position_ / unit_size_;
      if (!current_ || current_unit_ != unit) {
        current_ = read_ahead_->Take(unit);
        current_unit_ = unit;
      }
      const int64_t k = position_ - unit * unit_size_;
      // An element that fails is still passed over (ignore_errors() skips it).
      ++position_;
      absl::Status status = reader_->Output(*current_, k, out_tensors);
      if (position_ == std::min((unit + 1) * unit_size_, n)) current_.reset();
      return status;
    }

    absl::Status SkipInternal(::tensorflow::data::IteratorContext* ctx, int num_to_skip,
                              bool* end_of_sequence, int* num_skipped) override {
      if (cursor_.has_splits()) {
        // Each split must still be taken from the provider one by one.
        return Base::SkipInternal(ctx, num_to_skip, end_of_sequence, num_skipped);
      }
      ::tensorflow::mutex_lock l(mu_);
      // Nothing is read: the elements are a function of the position, so
      // skipping moves a number. Units already read ahead before the new
      // position are dropped (reads in flight finish unobserved).
      const int64_t n = this->dataset()->num_elements_;
      const int64_t skip = std::min<int64_t>(num_to_skip, n - position_);
      position_ += skip;
      const int64_t unit = position_ / unit_size_;
      if (current_ && current_unit_ != unit) current_.reset();
      read_ahead_->SkipTo(unit);
      *num_skipped = static_cast<int>(skip);
      *end_of_sequence = skip < num_to_skip;
      return absl::OkStatus();
    }

    // The state is a cursor (epoch, position), saved the same way whether
    // or not the checkpoint is symbolic.
    bool SymbolicCheckpointCompatible() const override { return true; }

   protected:
    std::shared_ptr<::tensorflow::data::model::Node> CreateNode(
        ::tensorflow::data::IteratorContext* ctx,
        ::tensorflow::data::model::Node::Args args) const override {
      return ::tensorflow::data::model::MakeSourceNode(std::move(args));
    }

    absl::Status SaveInternal(::tensorflow::data::SerializationContext* ctx,
                              ::tensorflow::data::IteratorStateWriter* writer) override {
      ::tensorflow::mutex_lock l(mu_);
      // Elements read ahead are not saved: they are recomputed from
      // (epoch, position) after a restore.
      TF_RETURN_IF_ERROR(cursor_.Save(this->prefix(), writer));
      return writer->WriteScalar(this->prefix(), kPosition, position_);
    }

    absl::Status RestoreInternal(::tensorflow::data::IteratorContext* ctx,
                                 ::tensorflow::data::IteratorStateReader* reader) override {
      ::tensorflow::mutex_lock l(mu_);
      const PositionalSourceDataset& d = *this->dataset();
      int64_t position = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(this->prefix(), kPosition, &position));
      if (position < 0 || position > d.num_elements_) {
        return absl::DataLossError(absl::StrCat(
            d.name_, " checkpoint position ", position, " is outside [0, ", d.num_elements_,
            "]: the checkpoint belongs to another dataset"));
      }
      // Stop the read-ahead before changing what its tasks read.
      current_.reset();
      if (read_ahead_) read_ahead_->Reset(position / unit_size_);
      TF_RETURN_IF_ERROR(cursor_.Restore(this->prefix(), reader));
      position_ = position;
      SetEpoch(cursor_.epoch());
      return absl::OkStatus();
    }

   private:
    // Moves the reader to `epoch`: its order of records, then its own state.
    // Under mu_, with no read running.
    void SetEpoch(int64_t epoch) {
      const Options& o = this->dataset()->options_;
      epoch_ = epoch;
      reader_->order_ = tfg::RecordOrder(this->dataset()->epoch_records_, o.source.shuffle,
                                         static_cast<uint64_t>(o.source.seed), epoch);
      reader_->SetEpoch(epoch);
    }

    // Iterator state key (the cursor has its own).
    static constexpr char kPosition[] = "position";

    ::tensorflow::mutex mu_;
    // The epoch and tf.data service's splits, under mu_.
    EpochCursor cursor_;
    // The epoch the reader reads (the cursor's, after the reader is told).
    // Changed only under mu_ and while no read runs (Initialize, a split of
    // another epoch, Restore after stopping the read-ahead): the read-ahead's
    // tasks read it without mu_.
    int64_t epoch_ = 0;
    // Position of the next element to return. A checkpoint stores only this
    // and the epoch: every element is a function of (epoch, position).
    int64_t position_ TF_GUARDED_BY(mu_) = 0;
    int64_t unit_size_ = 1;
    std::unique_ptr<::tensorflow::data::IteratorContext> ctx_;
    std::unique_ptr<Reader> reader_;
    // The unit holding position_, while some of its elements are still to
    // be returned.
    std::optional<Unit> current_ TF_GUARDED_BY(mu_);
    int64_t current_unit_ TF_GUARDED_BY(mu_) = -1;
    // The read-ahead's own threads, when the reader asks for them.
    std::unique_ptr<::tensorflow::thread::ThreadPool> pool_;
    // Last: destroyed first, so its tasks finish before what they use goes.
    std::unique_ptr<tfg::OrderedReadAhead<Unit>> read_ahead_;
  };

  const std::string name_;
  const std::string iterator_prefix_;
  // The op's inputs, for its graph node.
  std::vector<::tensorflow::Tensor> inputs_;
  const int64_t epoch_records_;
  const int64_t num_elements_;
  // Each iterator is one epoch of epoch_key_ (a new order when shuffling),
  // counted by a counter shared by every re-creation of this dataset.
  const std::string epoch_key_;
  const std::shared_ptr<EpochCounter> epochs_;
};

// The kernel of a positional source op: its constructor reads the attrs of
// the table `Attrs` into `Options` (Attrs plus what the kernel derives), has
// `Parse` check what an attr cannot and derive the rest, and checks the
// source attrs. A source writes only MakeDataset.
template <typename Attrs, typename Options, absl::Status (*Parse)(Options*)>
class PositionalSourceOpKernel : public ::tensorflow::data::DatasetOpKernel {
 public:
  explicit PositionalSourceOpKernel(::tensorflow::OpKernelConstruction* ctx)
      : DatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadAttrs<Attrs>(ctx, &options_));
    OP_REQUIRES_OK(ctx, Parse(&options_));
    OP_REQUIRES_OK(ctx, options_.source.Validate());
  }

 protected:
  // The counter of this dataset's epochs, named by its epoch_counter attr.
  absl::Status GetEpochs(::tensorflow::OpKernelContext* ctx,
                         std::shared_ptr<EpochCounter>* epochs) const {
    return GetEpochCounter(ctx, options_.source.epoch_counter, epochs);
  }

  Options options_;
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_POSITIONAL_SOURCE_DATASET_H_
