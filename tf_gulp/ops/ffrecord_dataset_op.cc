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
// allocated at their exact sizes, and all of their reads submitted to the
// kernel at once (io_uring), straight into the output tensor's buffers; the
// CRC-32 of each record is checked as its bytes arrive.
//
// Reading goes through the TensorFlow-free core in cc/ffrecord and cc/io;
// this file only translates options, tensors and errors.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cc/ffrecord/ffrecord_index.h"
#include "cc/ffrecord/ffrecord_reader.h"
#include "cc/ffrecord/record_order.h"
#include "cc/util/shard.h"
#include "cc/io/batch_reader.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/logging.h"
#include "tensorflow/core/platform/mutex.h"
#include "tf_gulp/ops/core_status.h"
#include "tf_gulp/ops/element_split_provider.h"
#include "tf_gulp/ops/epoch_counter.h"

namespace tf_gulp {
namespace {

using ::tensorflow::AttrValue;
using ::tensorflow::DataTypeVector;
using ::tensorflow::mutex;
using ::tensorflow::mutex_lock;
using ::tensorflow::Node;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::PartialTensorShape;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;
using ::tensorflow::data::DatasetBase;
using ::tensorflow::data::DatasetIterator;
using ::tensorflow::data::DatasetOpKernel;
using ::tensorflow::data::IteratorBase;
using ::tensorflow::data::IteratorContext;
using ::tensorflow::data::IteratorStateReader;
using ::tensorflow::data::IteratorStateWriter;
using ::tensorflow::data::SerializationContext;
using ::tensorflow::data::SplitProvider;
namespace model = ::tensorflow::data::model;
namespace ffr = ::tfg::ffrecord;

constexpr char kOpName[] = "TfGulp>FFRecordDataset";
constexpr char kPaths[] = "paths";
// Attr names, shared by the op registration, the kernel constructor and
// AsGraphDefInternal.
constexpr char kBatchSize[] = "batch_size";
constexpr char kDropRemainder[] = "drop_remainder";
constexpr char kShuffle[] = "shuffle";
constexpr char kSeed[] = "seed";
constexpr char kCheckData[] = "check_data";
constexpr char kQueueDepth[] = "queue_depth";
constexpr char kIoEngine[] = "io_engine";
constexpr char kDirectIo[] = "direct_io";
constexpr char kNumShards[] = "num_shards";
constexpr char kShardIndex[] = "shard_index";
// Iterator state keys.
constexpr char kEpoch[] = "epoch";
constexpr char kPosition[] = "position";
constexpr char kSplitProvider[] = "split_provider";

// Without batch_size, records are still read in groups of this many per
// submission (and handed out one by one).
constexpr int64_t kUnbatchedGroup = 32;
// Chunks (batches, or groups of records) read ahead of the caller: while one
// is returned the next is already in flight on another thread, so the device
// queue does not drain between batches and a warm cache is copied on two
// cores.
constexpr int kReadAheadChunks = 2;

struct Options {
  int64_t batch_size = 0;  // 0: one record per element
  bool drop_remainder = false;
  bool shuffle = false;
  int64_t seed = 0;
  bool check_data = true;
  int64_t queue_depth = 0;  // 0: the batch size (or the unbatched group)
  std::string io_engine;  // a name of tfg::kIoEngines (the attr's allowed values)
  bool direct_io = false;
  // Only these elements (records, or batches) of each epoch are read
  // (Dataset.shard): the iterator's element e is the epoch's element
  // shard.Global(e).
  tfg::Shard shard;
  std::string epoch_counter;  // see epoch_counter.h

  tfg::IoEngine engine = tfg::IoEngine::kAuto;
  bool batched() const { return batch_size > 0; }
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
  TF_RETURN_IF_ERROR(ToTfStatus(o->shard.Validate()));
  return ToTfStatus(tfg::ParseIoEngine(o->io_engine, &o->engine));
}

// "io_engine: {'auto', 'io_uring', 'pread'} = 'auto'": the names are cc/io's
// one list (tfg::kIoEngines), also what FileReader accepts.
std::string IoEngineAttr() {
  std::string names;
  for (tfg::IoEngine engine : tfg::kIoEngines) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", "'", tfg::IoEngineName(engine), "'");
  }
  return absl::StrCat(kIoEngine, ": {", names, "} = '",
                      tfg::IoEngineName(tfg::IoEngine::kAuto), "'");
}

class FFRecordDatasetOp : public DatasetOpKernel {
 public:
  explicit FFRecordDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    Options& o = options_;
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kBatchSize, &o.batch_size));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kDropRemainder, &o.drop_remainder));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kShuffle, &o.shuffle));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kSeed, &o.seed));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kCheckData, &o.check_data));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kQueueDepth, &o.queue_depth));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kIoEngine, &o.io_engine));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kDirectIo, &o.direct_io));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kNumShards, &o.shard.num_shards));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kShardIndex, &o.shard.index));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kEpochCounterAttr, &o.epoch_counter));
    OP_REQUIRES_OK(ctx, ParseOptions(&o));
  }

  void MakeDataset(OpKernelContext* ctx, DatasetBase** output) override;

 private:
  class Dataset;
  Options options_;
};

class FFRecordDatasetOp::Dataset : public DatasetBase {
 public:
  Dataset(OpKernelContext* ctx, std::vector<std::string> paths, const Options& options,
          std::shared_ptr<const ffr::FFRecordReader> reader,
          std::shared_ptr<EpochCounter> epochs)
      : DatasetBase(tensorflow::data::DatasetContext(ctx)),
        paths_(std::move(paths)),
        options_(options),
        reader_(std::move(reader)),
        num_records_(reader_->num_records()),
        epochs_(std::move(epochs)),
        epoch_key_(absl::StrJoin(paths_, "\n")) {
    if (options_.batched()) {
      const int64_t b = options_.batch_size;
      num_elements_ = options_.drop_remainder ? num_records_ / b : (num_records_ + b - 1) / b;
    } else {
      num_elements_ = num_records_;
    }
    num_elements_ = options_.shard.Size(num_elements_);
    dtypes_ = {tensorflow::DT_STRING};
    if (!options_.batched()) {
      shapes_ = {PartialTensorShape({})};
    } else {
      shapes_ = {PartialTensorShape({options_.drop_remainder ? options_.batch_size : -1})};
    }
  }

  std::unique_ptr<IteratorBase> MakeIteratorInternal(const std::string& prefix) const override {
    return std::make_unique<Iterator>(Iterator::Params{this, absl::StrCat(prefix, "::FFRecord")});
  }

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override { return "FFRecordDatasetOp::Dataset"; }

  int64_t CardinalityInternal(tensorflow::data::CardinalityOptions options) const override {
    return num_elements_;
  }
  absl::Status InputDatasets(std::vector<const DatasetBase*>* inputs) const override {
    return absl::OkStatus();
  }
  absl::Status CheckExternalState() const override { return absl::OkStatus(); }

  absl::Status MakeSplitProviders(
      std::vector<std::unique_ptr<SplitProvider>>* split_providers) const override {
    // The provider may outlive this dataset: it keeps its own references.
    std::shared_ptr<EpochCounter> epochs = epochs_;
    std::string key = epoch_key_;
    split_providers->push_back(std::make_unique<ElementSplitProvider>(
        num_elements_, [epochs, key]() { return epochs->Next(key); }));
    return absl::OkStatus();
  }

 protected:
  absl::Status AsGraphDefInternal(SerializationContext* ctx, DatasetGraphDefBuilder* b,
                                  Node** output) const override {
    Node* paths = nullptr;
    TF_RETURN_IF_ERROR(b->AddVector(paths_, &paths));
    const Options& o = options_;
    std::vector<std::pair<absl::string_view, AttrValue>> attrs;
    auto add = [&](absl::string_view name, const auto& value) {
      AttrValue attr;
      b->BuildAttrValue(value, &attr);
      attrs.emplace_back(name, attr);
    };
    add(kBatchSize, o.batch_size);
    add(kDropRemainder, o.drop_remainder);
    add(kShuffle, o.shuffle);
    add(kSeed, o.seed);
    add(kCheckData, o.check_data);
    add(kQueueDepth, o.queue_depth);
    add(kIoEngine, o.io_engine);
    add(kDirectIo, o.direct_io);
    add(kNumShards, o.shard.num_shards);
    add(kShardIndex, o.shard.index);
    add(kEpochCounterAttr, o.epoch_counter);
    return b->AddDataset(this, {paths}, attrs, output);
  }

 private:
  // A unit of reading: one batch (batched), or a group of consecutive records
  // (unbatched). Its output tensors are allocated before the read, with each
  // string sized to its record, and the read fills them in place.
  struct Chunk {
    int64_t first_element = 0;
    int64_t num_elements = 0;
    std::vector<Tensor> tensors;  // batched: one [n] string tensor; else one scalar per record
    std::vector<ffr::RecordLocation> locations;
    std::vector<char*> dsts;
    std::vector<tfg::Status> statuses;  // one per record
    // kQueued -> kRunning -> kDone, under ReadAhead::mu. Whoever moves it out
    // of kQueued (the scheduled task, or a reader that needs it first) reads it.
    enum State { kQueued, kRunning, kDone } state = kQueued;
  };

  // What read tasks running on tf.data's threads share with the iterator (it
  // outlives the iterator while tasks are still running).
  struct ReadAhead {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::unique_ptr<ffr::ReadContext>> idle;  // one io_uring each
    tfg::BatchReaderOptions io;
    std::shared_ptr<const ffr::FFRecordReader> reader;
  };

  // Reads `chunk` (already claimed: kRunning) with an idle context, then marks
  // it done. Runs on a runner thread or on the thread that needs the chunk.
  static void RunChunk(const std::shared_ptr<ReadAhead>& ra, Chunk* chunk) {
    std::unique_ptr<ffr::ReadContext> context;
    {
      std::lock_guard<std::mutex> lock(ra->mu);
      if (!ra->idle.empty()) {
        context = std::move(ra->idle.back());
        ra->idle.pop_back();
      }
    }
    tfg::Status status;
    if (!context) status = ffr::ReadContext::Create(ra->io, &context);
    if (status.ok()) {
      ra->reader->Read(context.get(), chunk->locations.data(), chunk->locations.size(),
                       chunk->dsts.data(), chunk->statuses.data());
    } else {
      for (tfg::Status& s : chunk->statuses) s = status;
    }
    std::lock_guard<std::mutex> lock(ra->mu);
    if (context) ra->idle.push_back(std::move(context));
    chunk->state = Chunk::kDone;
    ra->cv.notify_all();
  }

  class Iterator : public DatasetIterator<Dataset> {
   public:
    explicit Iterator(const Params& params) : DatasetIterator<Dataset>(params) {}

    absl::Status Initialize(IteratorContext* ctx) override {
      mutex_lock l(mu_);
      const Dataset& d = *dataset();
      epoch_ = d.epochs_->Next(d.epoch_key_);
      ra_ = std::make_shared<ReadAhead>();
      ra_->io.engine = d.options_.engine;
      ra_->io.queue_depth = d.options_.EffectiveQueueDepth();
      ra_->reader = d.reader_;
      // Fail now, not on the first read, when the engine cannot be had.
      std::unique_ptr<ffr::ReadContext> context;
      TFG_TF_RETURN_IF_ERROR(ffr::ReadContext::Create(ra_->io, &context));
      ra_->idle.push_back(std::move(context));
      if (!ctx->split_providers().empty()) {
        if (ctx->split_providers().size() != 1) {
          return absl::FailedPreconditionError(
              absl::StrCat("FFRecordDataset expects one split provider, got ",
                           ctx->split_providers().size()));
        }
        split_provider_ = ctx->split_providers()[0];
      }
      return absl::OkStatus();
    }

    absl::Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out_tensors,
                                 bool* end_of_sequence) override {
      mutex_lock l(mu_);
      const int64_t n = dataset()->num_elements_;
      *end_of_sequence = false;
      if (split_provider_) {
        // tf.data service: one element per split, read when asked for.
        Tensor split;
        bool end = false;
        TF_RETURN_IF_ERROR(split_provider_->GetNext(&split, &end));
        if (end) {
          *end_of_sequence = true;
          return absl::OkStatus();
        }
        int64_t epoch = 0, element = 0;
        TF_RETURN_IF_ERROR(ElementSplitProvider::Parse(split, n, &epoch, &element));
        epoch_ = epoch;  // the dispatcher decides the epoch
        std::shared_ptr<Chunk> chunk = MakeChunk(ctx, element, 1);
        chunk->state = Chunk::kRunning;
        RunChunk(ra_, chunk.get());
        return Output(*chunk, 0, out_tensors);
      }
      Refill(ctx);
      if (chunks_.empty()) {
        *end_of_sequence = true;
        return absl::OkStatus();
      }
      std::shared_ptr<Chunk> front = chunks_.front();
      Await(front.get());
      const int64_t k = front_taken_++;
      ++position_;
      if (front_taken_ == front->num_elements) {
        chunks_.pop_front();
        front_taken_ = 0;
      }
      // Keep the next reads in flight while the caller works on this element.
      Refill(ctx);
      return Output(*front, k, out_tensors);
    }

    absl::Status SkipInternal(IteratorContext* ctx, int num_to_skip, bool* end_of_sequence,
                              int* num_skipped) override {
      if (split_provider_) {
        // Each split must still be taken from the provider one by one.
        return DatasetIterator<Dataset>::SkipInternal(ctx, num_to_skip, end_of_sequence,
                                                      num_skipped);
      }
      mutex_lock l(mu_);
      // Nothing is read: the order is a function, so skipping moves a number.
      // Elements already being read are passed over (their reads finish
      // unobserved).
      const int64_t n = dataset()->num_elements_;
      const int64_t skip = std::min<int64_t>(num_to_skip, n - position_);
      int64_t left = skip;
      while (left > 0 && !chunks_.empty()) {
        const int64_t take = std::min(left, chunks_.front()->num_elements - front_taken_);
        front_taken_ += take;
        left -= take;
        if (front_taken_ == chunks_.front()->num_elements) {
          chunks_.pop_front();
          front_taken_ = 0;
        }
      }
      position_ += skip;
      if (chunks_.empty()) next_element_ = position_;
      *num_skipped = static_cast<int>(skip);
      *end_of_sequence = skip < num_to_skip;
      return absl::OkStatus();
    }

    // The state is a cursor (epoch, position), saved the same way whether
    // or not the checkpoint is symbolic.
    bool SymbolicCheckpointCompatible() const override { return true; }

   protected:
    std::shared_ptr<model::Node> CreateNode(IteratorContext* ctx,
                                            model::Node::Args args) const override {
      return model::MakeSourceNode(std::move(args));
    }

    absl::Status SaveInternal(SerializationContext* ctx, IteratorStateWriter* writer) override {
      mutex_lock l(mu_);
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), kEpoch, epoch_));
      TF_RETURN_IF_ERROR(dataset()->epochs_->Save(prefix(), writer));
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), kPosition, position_));
      if (split_provider_) {
        TF_RETURN_IF_ERROR(split_provider_->Save(
            [this](const std::string& key) { return full_name(absl::StrCat(kSplitProvider, key)); },
            writer));
      }
      return absl::OkStatus();
    }

    absl::Status RestoreInternal(IteratorContext* ctx, IteratorStateReader* reader) override {
      mutex_lock l(mu_);
      int64_t epoch = 0, position = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), kEpoch, &epoch));
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), kPosition, &position));
      if (position < 0 || position > dataset()->num_elements_) {
        return absl::DataLossError(absl::StrCat(
            "FFRecordDataset checkpoint position ", position, " is outside [0, ",
            dataset()->num_elements_, "]: the checkpoint belongs to another dataset"));
      }
      epoch_ = epoch;
      position_ = position;
      next_element_ = position;
      chunks_.clear();  // reads in flight finish unobserved
      front_taken_ = 0;
      // Later epochs (e.g. under repeat()) continue from the restored one.
      TF_RETURN_IF_ERROR(dataset()->epochs_->Restore(prefix(), reader));
      dataset()->epochs_->SetNextAtLeast(dataset()->epoch_key_, epoch_ + 1);
      if (split_provider_) {
        TF_RETURN_IF_ERROR(split_provider_->Restore(
            [this](const std::string& key) { return full_name(absl::StrCat(kSplitProvider, key)); },
            reader));
      }
      return absl::OkStatus();
    }

   private:
    // Schedules reads until kReadAheadChunks chunks are queued or in flight.
    void Refill(IteratorContext* ctx) TF_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      const Dataset& d = *dataset();
      while (static_cast<int>(chunks_.size()) < kReadAheadChunks &&
             next_element_ < d.num_elements_) {
        const int64_t count =
            d.options_.batched()
                ? 1
                : std::min<int64_t>(kUnbatchedGroup, d.num_elements_ - next_element_);
        std::shared_ptr<Chunk> chunk = MakeChunk(ctx, next_element_, count);
        next_element_ += count;
        chunks_.push_back(chunk);
        std::shared_ptr<ReadAhead> ra = ra_;
        (*ctx->runner())([ra, chunk]() {
          {
            std::lock_guard<std::mutex> lock(ra->mu);
            if (chunk->state != Chunk::kQueued) return;  // the iterator read it itself
            chunk->state = Chunk::kRunning;
          }
          RunChunk(ra, chunk.get());
        });
      }
    }

    // Waits for `chunk`; reads it on this thread when no runner thread has
    // started it yet (so a busy thread pool never stalls the iterator).
    void Await(Chunk* chunk) {
      {
        std::unique_lock<std::mutex> lock(ra_->mu);
        if (chunk->state != Chunk::kQueued) {
          ra_->cv.wait(lock, [chunk] { return chunk->state == Chunk::kDone; });
          return;
        }
        chunk->state = Chunk::kRunning;
      }
      RunChunk(ra_, chunk);
    }

    // Locates the records of elements [first, first + count) of this epoch
    // and allocates their output strings at their exact sizes.
    std::shared_ptr<Chunk> MakeChunk(IteratorContext* ctx, int64_t first, int64_t count)
        TF_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      const Dataset& d = *dataset();
      auto chunk = std::make_shared<Chunk>();
      chunk->first_element = first;
      chunk->num_elements = count;
      // Record positions in the epoch's order: element e of this iterator is
      // the epoch's element shard.Global(e) (e itself when not sharded).
      const tfg::Shard& shard = d.options_.shard;
      int64_t begin = 0, end = 0;
      if (d.options_.batched()) {
        begin = shard.Global(first) * d.options_.batch_size;
        end = std::min(begin + d.options_.batch_size, d.num_records_);
        chunk->tensors.emplace_back(ctx->allocator({}), tensorflow::DT_STRING,
                                    TensorShape({end - begin}));
      } else {
        for (int64_t k = 0; k < count; ++k) {
          chunk->tensors.emplace_back(ctx->allocator({}), tensorflow::DT_STRING, TensorShape({}));
        }
      }
      const ffr::RecordOrder order(d.num_records_, d.options_.shuffle,
                                   static_cast<uint64_t>(d.options_.seed), epoch_);
      const size_t n = static_cast<size_t>(d.options_.batched() ? end - begin : count);
      chunk->locations.resize(n);
      chunk->dsts.resize(n);
      chunk->statuses.resize(n);
      for (size_t k = 0; k < n; ++k) {
        // Positions are in range by construction, so Locate cannot fail.
        const int64_t position = d.options_.batched()
                                     ? begin + static_cast<int64_t>(k)
                                     : shard.Global(first + static_cast<int64_t>(k));
        d.reader_->Locate(order[position], &chunk->locations[k]);
        tstring* s = d.options_.batched() ? &chunk->tensors[0].flat<tstring>()(k)
                                          : &chunk->tensors[k].scalar<tstring>()();
        s->resize_uninitialized(chunk->locations[k].length);
        chunk->dsts[k] = s->mdata();
      }
      return chunk;
    }

    // Element `k` of a finished chunk: a batch fails with the first error
    // among its records, a single record with its own.
    absl::Status Output(const Chunk& chunk, int64_t k, std::vector<Tensor>* out) const {
      if (dataset()->options_.batched()) {
        for (const tfg::Status& s : chunk.statuses) TFG_TF_RETURN_IF_ERROR(s);
        out->push_back(chunk.tensors[0]);
        return absl::OkStatus();
      }
      TFG_TF_RETURN_IF_ERROR(chunk.statuses[k]);
      out->push_back(chunk.tensors[k]);
      return absl::OkStatus();
    }

    mutex mu_;
    int64_t epoch_ TF_GUARDED_BY(mu_) = 0;
    // Index of the next element to return. A checkpoint stores only this:
    // every element is a function of (epoch, index).
    int64_t position_ TF_GUARDED_BY(mu_) = 0;
    // First element not yet scheduled; position_ plus what chunks_ still holds.
    int64_t next_element_ TF_GUARDED_BY(mu_) = 0;
    std::deque<std::shared_ptr<Chunk>> chunks_ TF_GUARDED_BY(mu_);
    int64_t front_taken_ TF_GUARDED_BY(mu_) = 0;  // elements of chunks_.front() returned
    std::shared_ptr<ReadAhead> ra_;
    std::shared_ptr<SplitProvider> split_provider_;
  };

  const std::vector<std::string> paths_;
  const Options options_;
  const std::shared_ptr<const ffr::FFRecordReader> reader_;
  const int64_t num_records_;
  int64_t num_elements_ = 0;
  // Each iterator is one epoch of these files (a new order when shuffling),
  // counted by a counter shared by every re-creation of this dataset, keyed
  // by the path list.
  const std::shared_ptr<EpochCounter> epochs_;
  const std::string epoch_key_;
  DataTypeVector dtypes_;
  std::vector<PartialTensorShape> shapes_;
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
      options_.shuffle ? ffr::AccessPattern::kRandom : ffr::AccessPattern::kSequential;
  std::unique_ptr<ffr::FFRecordReader> reader;
  OP_REQUIRES_OK(ctx, ToTfStatus(ffr::FFRecordReader::Open(files, reader_options, &reader)));
  for (const std::string& warning : reader->warnings()) LOG(WARNING) << warning;
  std::shared_ptr<EpochCounter> epochs;
  OP_REQUIRES_OK(ctx, GetEpochCounter(ctx, options_.epoch_counter, &epochs));
  *output = new Dataset(ctx, std::move(paths), options_, std::move(reader), std::move(epochs));
}

REGISTER_OP(kOpName)
    .Input("paths: string")
    .Output("handle: variant")
    // Python's wrappers read the allowed values, minimums and defaults from
    // this registration (tf_gulp/ops/op_attrs.py): they are written only here.
    .Attr("batch_size: int >= 0 = 0")
    .Attr("drop_remainder: bool = false")
    .Attr("shuffle: bool = false")
    .Attr("seed: int = 0")
    .Attr("check_data: bool = true")
    // 0: the batch size; at most tfg::kMaxQueueDepth (checked by the kernel).
    .Attr("queue_depth: int >= 0 = 0")
    .Attr(IoEngineAttr())
    .Attr("direct_io: bool = false")
    // Dataset.shard(num_shards, shard_index), applied before anything is read.
    .Attr("num_shards: int = 1")
    .Attr("shard_index: int = 0")
    // The name of the epoch counter shared by every re-creation of one Python
    // dataset (epoch_counter.h); "" for a counter private to the dataset.
    .Attr("epoch_counter: string = ''")
    // Source datasets are stateful so graph optimizations never constant-fold
    // or deduplicate them.
    .SetIsStateful()
    .SetShapeFn([](tensorflow::shape_inference::InferenceContext* c) {
      tensorflow::shape_inference::ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRankAtMost(c->input(0), 1, &unused));
      c->set_output(0, c->Scalar());
      return absl::OkStatus();
    })
    .Doc(R"doc(
Reads the records of FFRecord files (paths: files, or directories of *.ffr
files) as a dataset of strings, single or batched. See
tf_gulp.FFRecordDataset for the options.
)doc");

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(tensorflow::DEVICE_CPU), FFRecordDatasetOp);

}  // namespace
}  // namespace tf_gulp
