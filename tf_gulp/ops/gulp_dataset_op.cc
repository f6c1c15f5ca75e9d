// GulpDataset: a tf.data source that reads a gulp directory.
//
// The op takes the directory path and options; the kernel parses the chunk
// indexes itself, so the dataset serializes to a tiny graph (path + attrs)
// that can be saved, checkpointed and shipped to tf.data service workers.
// Elements are dicts flattened in sorted key order: frames, id, label, meta.
//
// Reading and decoding go through the TensorFlow-free core in cc/; this file
// only translates options, tensors and errors.

#include <unistd.h>

#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/codec/jpeg_decoder.h"
#include "cc/gulp/clip_reader.h"
#include "cc/gulp/element_order.h"
#include "cc/gulp/frame_selection.h"
#include "cc/gulp/gulp_directory.h"
#include "cc/io/file_cache.h"
#include "cc/io/file_system.h"
#include "cc/util/ordered_read_ahead.h"
#include "cc/util/shard.h"
#include "cc/util/stateless_random.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/model.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/platform/mutex.h"
#include "tf_gulp/ops/core_status.h"
#include "tf_gulp/ops/element_split_provider.h"
#include "tf_gulp/ops/epoch_counter.h"
#include "tf_gulp/ops/pooled_tensor.h"

namespace tf_gulp {
namespace {

using ::tensorflow::AttrValue;
using ::tensorflow::DataType;
using ::tensorflow::DataTypeVector;
using ::tensorflow::data::IteratorStateReader;
using ::tensorflow::data::IteratorStateWriter;
using ::tensorflow::mutex;
using ::tensorflow::mutex_lock;
using ::tensorflow::Node;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::PartialTensorShape;
using ::tensorflow::data::SerializationContext;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::data::DatasetBase;
using ::tensorflow::data::DatasetIterator;
using ::tensorflow::data::DatasetOpKernel;
using ::tensorflow::data::IteratorBase;
using ::tensorflow::data::IteratorContext;
using ::tensorflow::data::SplitProvider;
namespace model = ::tensorflow::data::model;
namespace gulp = ::tfg::gulp;

constexpr char kOpName[] = "TfGulp>GulpDataset";
constexpr char kDirectory[] = "directory";
// Attr names, shared by the op registration, the kernel constructor and
// AsGraphDefInternal.
constexpr char kIds[] = "ids";
constexpr char kLabelField[] = "label_field";
constexpr char kUseLabelMap[] = "use_label_map";
constexpr char kLabelNames[] = "label_names";
constexpr char kLabelValues[] = "label_values";
constexpr char kFrameMode[] = "frame_mode";
constexpr char kSliceStart[] = "slice_start";
constexpr char kSliceStop[] = "slice_stop";
constexpr char kSliceStep[] = "slice_step";
constexpr char kFrameIndices[] = "frame_indices";
constexpr char kNumFrames[] = "num_frames";
constexpr char kTraining[] = "training";
constexpr char kDecode[] = "decode";
constexpr char kColorspace[] = "colorspace";
constexpr char kScale[] = "scale";
constexpr char kDctMethod[] = "dct_method";
constexpr char kShuffle[] = "shuffle";
constexpr char kSeed[] = "seed";
constexpr char kShuffleChunkWindow[] = "shuffle_chunk_window";
constexpr char kMaxClipBytes[] = "max_clip_bytes";
constexpr char kNumShards[] = "num_shards";
constexpr char kShardIndex[] = "shard_index";
// Iterator state keys.
constexpr char kEpoch[] = "epoch";
constexpr char kPosition[] = "position";
constexpr char kSplitProvider[] = "split_provider";

// How many chunks an iterator keeps open.
constexpr size_t kOpenFiles = 16;

// Everything the op's attrs say, read once in the kernel constructor.
struct Options {
  std::vector<std::string> ids;
  std::string label_field;
  bool use_label_map = false;  // true: label_names/values, not label2idx.json
  std::vector<std::string> label_names;
  std::vector<int64_t> label_values;
  std::string frame_mode;  // the attr's allowed values: all, slice, ...
  // Slice bounds; a missing start/stop is passed as INT64_MIN.
  int64_t slice_start = 0, slice_stop = 0, slice_step = 1;
  std::vector<int64_t> frame_indices;
  int64_t num_frames = 0;
  bool training = false;
  bool decode = true;
  std::string colorspace;  // rgb or gray (the attr's allowed values)
  int64_t scale = 1;
  std::string dct_method;  // fast or accurate (the attr's allowed values)
  bool shuffle = false;
  int64_t seed = 0;
  int64_t shuffle_chunk_window = 4;
  // The most bytes one element's frames may take (decoded, or as JPEG bytes
  // with decode=False); checked before reading and before decoding.
  int64_t max_clip_bytes = static_cast<int64_t>(gulp::kDefaultMaxClipBytes);
  // Only these positions of each epoch's order are read (Dataset.shard).
  tfg::Shard shard;
  std::string epoch_counter;  // see epoch_counter.h

  gulp::FrameSelection selection;
  tfg::jpeg::DecodeOptions decode_options;
};

constexpr int64_t kMissingBound = std::numeric_limits<int64_t>::min();

// The op's attrs hold the checks that fit an attr (allowed strings, minimums),
// so values reaching here are among those; what is left are the checks across
// attrs and the core's own.
absl::Status ParseOptions(Options* o) {
  gulp::FrameSelection& s = o->selection;
  if (o->frame_mode == "all") {
    s.mode = gulp::FrameSelection::Mode::kAll;
  } else if (o->frame_mode == "slice") {
    s.mode = gulp::FrameSelection::Mode::kSlice;
    s.has_start = o->slice_start != kMissingBound;
    s.has_stop = o->slice_stop != kMissingBound;
    s.start = o->slice_start;
    s.stop = o->slice_stop;
    s.step = o->slice_step;
  } else if (o->frame_mode == "indices") {
    s.mode = gulp::FrameSelection::Mode::kIndices;
    s.indices = o->frame_indices;
  } else {  // "segments"
    s.mode = gulp::FrameSelection::Mode::kSegments;
    s.num_frames = o->num_frames;
    s.random_offsets = o->training;
  }
  TFG_TF_RETURN_IF_ERROR(gulp::ValidateFrameSelection(s));

  tfg::jpeg::DecodeOptions& d = o->decode_options;
  d.color_space = o->colorspace == "gray" ? tfg::jpeg::ColorSpace::kGray
                                           : tfg::jpeg::ColorSpace::kRgb;
  if (!tfg::jpeg::IsValidScaleDenominator(static_cast<int>(o->scale))) {
    return absl::InvalidArgumentError(
        absl::StrCat("scale must be 1, 2, 4 or 8 (decode at 1/scale of the "
                     "size), got ",
                     o->scale));
  }
  d.scale_denominator = static_cast<int>(o->scale);
  d.fast_dct = o->dct_method == "fast";
  if (o->label_names.size() != o->label_values.size()) {
    return absl::InvalidArgumentError("label_names and label_values differ in length");
  }
  TF_RETURN_IF_ERROR(ToTfStatus(o->shard.Validate()));
  return absl::OkStatus();
}

class GulpDatasetOp : public DatasetOpKernel {
 public:
  explicit GulpDatasetOp(OpKernelConstruction* ctx) : DatasetOpKernel(ctx) {
    Options& o = options_;
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kIds, &o.ids));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kLabelField, &o.label_field));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kUseLabelMap, &o.use_label_map));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kLabelNames, &o.label_names));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kLabelValues, &o.label_values));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kFrameMode, &o.frame_mode));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kSliceStart, &o.slice_start));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kSliceStop, &o.slice_stop));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kSliceStep, &o.slice_step));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kFrameIndices, &o.frame_indices));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kNumFrames, &o.num_frames));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kTraining, &o.training));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kDecode, &o.decode));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kColorspace, &o.colorspace));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kScale, &o.scale));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kDctMethod, &o.dct_method));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kShuffle, &o.shuffle));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kSeed, &o.seed));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kShuffleChunkWindow, &o.shuffle_chunk_window));
    OP_REQUIRES_OK(ctx, ctx->GetAttr(kMaxClipBytes, &o.max_clip_bytes));
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

class GulpDatasetOp::Dataset : public DatasetBase {
 public:
  Dataset(OpKernelContext* ctx, std::string directory, const Options& options,
          std::shared_ptr<const gulp::GulpDirectory> index,
          std::vector<gulp::ElementRef> elements,
          std::shared_ptr<EpochCounter> epochs)
      : DatasetBase(tensorflow::data::DatasetContext(ctx)),
        directory_(std::move(directory)),
        options_(options),
        index_(std::move(index)),
        elements_(std::move(elements)),
        epochs_(std::move(epochs)) {
    int64_t t = -1;
    if (options_.selection.mode == gulp::FrameSelection::Mode::kSegments) {
      t = options_.num_frames;
    } else if (options_.selection.mode == gulp::FrameSelection::Mode::kIndices) {
      t = static_cast<int64_t>(options_.frame_indices.size());
    }
    if (options_.decode) {
      dtypes_ = {tensorflow::DT_UINT8};
      shapes_ = {PartialTensorShape(
          {t, -1, -1, tfg::jpeg::Channels(options_.decode_options.color_space)})};
    } else {
      dtypes_ = {tensorflow::DT_STRING};
      shapes_ = {PartialTensorShape({t})};
    }
    dtypes_.insert(dtypes_.end(), {tensorflow::DT_STRING, tensorflow::DT_INT64,
                                   tensorflow::DT_STRING});
    shapes_.insert(shapes_.end(), {PartialTensorShape({}), PartialTensorShape({}),
                                   PartialTensorShape({})});
  }

  std::unique_ptr<IteratorBase> MakeIteratorInternal(
      const std::string& prefix) const override {
    return std::make_unique<Iterator>(
        Iterator::Params{this, absl::StrCat(prefix, "::Gulp")});
  }

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override {
    return shapes_;
  }
  std::string DebugString() const override { return "GulpDatasetOp::Dataset"; }

  int64_t CardinalityInternal(
      tensorflow::data::CardinalityOptions options) const override {
    return options_.shard.Size(static_cast<int64_t>(elements_.size()));
  }
  absl::Status InputDatasets(
      std::vector<const DatasetBase*>* inputs) const override {
    return absl::OkStatus();
  }
  absl::Status CheckExternalState() const override { return absl::OkStatus(); }

  absl::Status MakeSplitProviders(
      std::vector<std::unique_ptr<SplitProvider>>* split_providers)
      const override {
    // The provider may outlive this dataset: it keeps its own references.
    std::shared_ptr<EpochCounter> epochs = epochs_;
    std::string key = directory_;
    split_providers->push_back(std::make_unique<ElementSplitProvider>(
        options_.shard.Size(static_cast<int64_t>(elements_.size())),
        [epochs, key]() { return epochs->Next(key); }));
    return absl::OkStatus();
  }

 protected:
  absl::Status AsGraphDefInternal(SerializationContext* ctx,
                                  DatasetGraphDefBuilder* b,
                                  Node** output) const override {
    Node* directory = nullptr;
    TF_RETURN_IF_ERROR(
        b->AddScalar(tensorflow::tstring(directory_), &directory));
    const Options& o = options_;
    std::vector<std::pair<absl::string_view, AttrValue>> attrs;
    auto add = [&](absl::string_view name, const auto& value) {
      AttrValue attr;
      b->BuildAttrValue(value, &attr);
      attrs.emplace_back(name, attr);
    };
    add(kIds, o.ids);
    add(kLabelField, o.label_field);
    add(kUseLabelMap, o.use_label_map);
    add(kLabelNames, o.label_names);
    add(kLabelValues, o.label_values);
    add(kFrameMode, o.frame_mode);
    add(kSliceStart, o.slice_start);
    add(kSliceStop, o.slice_stop);
    add(kSliceStep, o.slice_step);
    add(kFrameIndices, o.frame_indices);
    add(kNumFrames, o.num_frames);
    add(kTraining, o.training);
    add(kDecode, o.decode);
    add(kColorspace, o.colorspace);
    add(kScale, o.scale);
    add(kDctMethod, o.dct_method);
    add(kShuffle, o.shuffle);
    add(kSeed, o.seed);
    add(kShuffleChunkWindow, o.shuffle_chunk_window);
    add(kMaxClipBytes, o.max_clip_bytes);
    add(kNumShards, o.shard.num_shards);
    add(kShardIndex, o.shard.index);
    add(kEpochCounterAttr, o.epoch_counter);
    return b->AddDataset(this, {directory}, attrs, output);
  }

 private:
  // One element being produced: its tensors, or the error that replaced it.
  struct Produced {
    absl::Status status;
    std::vector<Tensor> tensors;
  };

  class Iterator : public DatasetIterator<Dataset> {
   public:
    explicit Iterator(const Params& params)
        : DatasetIterator<Dataset>(params), files_(kOpenFiles) {}

    absl::Status Initialize(IteratorContext* ctx) override {
      mutex_lock l(mu_);
      epoch_ = dataset()->epochs_->Next(dataset()->directory_);
      order_ = dataset()->EpochOrder(epoch_);
      // Background tasks outlive the GetNext call that scheduled them: they
      // use this copy for the runner and the allocator, as tf.data's own
      // parallel iterators do.
      ctx_ = std::make_unique<IteratorContext>(*ctx);
      threads_ = std::max(1, ctx->runner_threadpool_size());
      // Enough free clip buffers for the read-ahead window to refill while
      // the consumer still holds the elements it took.
      frame_buffers_ = MakeTensorBufferPool(4 * threads_ + 2);
      if (!ctx->split_providers().empty()) {
        if (ctx->split_providers().size() != 1) {
          return absl::FailedPreconditionError(absl::StrCat(
              "GulpDataset expects one split provider, got ",
              ctx->split_providers().size()));
        }
        split_provider_ = ctx->split_providers()[0];
        return absl::OkStatus();
      }
      // Elements are read and decoded ahead, one per runner thread, a window
      // of 2 per thread: every core decodes while the consumer takes earlier
      // elements. Each element is a pure function of its position in this
      // epoch's order, so read-ahead never changes what is returned.
      read_ahead_ = std::make_unique<tfg::OrderedReadAhead<Produced>>(
          *ctx_->runner(), 2 * threads_,
          [this](int64_t position) {
            return ProduceElement(order_[position], /*decode_threads=*/1);
          },
          /*start=*/0, static_cast<int64_t>(order_.size()));
      return absl::OkStatus();
    }

    absl::Status GetNextInternal(IteratorContext* ctx,
                                 std::vector<Tensor>* out_tensors,
                                 bool* end_of_sequence) override {
      mutex_lock l(mu_);
      Produced produced;
      if (split_provider_) {
        // tf.data service: one element per split, its frames decoded in
        // parallel (splits arrive one at a time, so there is nothing to read
        // ahead).
        Tensor split;
        bool end = false;
        TF_RETURN_IF_ERROR(split_provider_->GetNext(&split, &end));
        if (end) {
          *end_of_sequence = true;
          return absl::OkStatus();
        }
        int64_t epoch = 0, index = 0;
        TF_RETURN_IF_ERROR(ElementSplitProvider::Parse(
            split, static_cast<int64_t>(order_.size()), &epoch, &index));
        if (epoch != epoch_) {  // the dispatcher decides the epoch
          epoch_ = epoch;
          order_ = dataset()->EpochOrder(epoch_);
        }
        produced = ProduceElement(order_[index], threads_);
      } else {
        if (position_ >= static_cast<int64_t>(order_.size())) {
          *end_of_sequence = true;
          return absl::OkStatus();
        }
        produced = read_ahead_->Take(position_);
        ++position_;
      }
      *end_of_sequence = false;
      if (!produced.status.ok()) return produced.status;
      *out_tensors = std::move(produced.tensors);
      return absl::OkStatus();
    }

    absl::Status SkipInternal(IteratorContext* ctx, int num_to_skip,
                              bool* end_of_sequence,
                              int* num_skipped) override {
      if (split_provider_) {
        // Each split must still be taken from the provider one by one.
        return DatasetIterator<Dataset>::SkipInternal(ctx, num_to_skip,
                                                      end_of_sequence,
                                                      num_skipped);
      }
      mutex_lock l(mu_);
      // Nothing is read: skipping only moves the position.
      const int64_t n = static_cast<int64_t>(order_.size());
      const int64_t skip = std::min<int64_t>(num_to_skip, n - position_);
      position_ += skip;
      read_ahead_->SkipTo(position_);
      *num_skipped = static_cast<int>(skip);
      *end_of_sequence = skip < num_to_skip;
      return absl::OkStatus();
    }

    // The state is a cursor (epoch, position), saved the same way whether
    // or not the checkpoint is symbolic.
    bool SymbolicCheckpointCompatible() const override { return true; }

   protected:
    std::shared_ptr<model::Node> CreateNode(
        IteratorContext* ctx, model::Node::Args args) const override {
      return model::MakeSourceNode(std::move(args));
    }

    absl::Status SaveInternal(SerializationContext* ctx,
                              IteratorStateWriter* writer) override {
      mutex_lock l(mu_);
      // Elements read ahead are not saved: they are recomputed from
      // (epoch, position) after a restore.
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), kEpoch, epoch_));
      TF_RETURN_IF_ERROR(dataset()->epochs_->Save(prefix(), writer));
      TF_RETURN_IF_ERROR(writer->WriteScalar(prefix(), kPosition, position_));
      if (split_provider_) {
        TF_RETURN_IF_ERROR(split_provider_->Save(
            [this](const std::string& key) {
              return full_name(absl::StrCat(kSplitProvider, key));
            },
            writer));
      }
      return absl::OkStatus();
    }

    absl::Status RestoreInternal(IteratorContext* ctx,
                                 IteratorStateReader* reader) override {
      mutex_lock l(mu_);
      int64_t epoch = 0, position = 0;
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), kEpoch, &epoch));
      TF_RETURN_IF_ERROR(reader->ReadScalar(prefix(), kPosition, &position));
      if (position < 0 || position > static_cast<int64_t>(order_.size())) {
        return absl::DataLossError(absl::StrCat(
            "GulpDataset checkpoint position ", position, " is outside [0, ",
            order_.size(), "]: the checkpoint belongs to another dataset"));
      }
      // Stop the read-ahead before changing what its tasks read.
      if (read_ahead_) read_ahead_->Reset(position);
      epoch_ = epoch;
      position_ = position;
      order_ = dataset()->EpochOrder(epoch_);
      // Later epochs (e.g. under repeat()) continue from the restored one.
      TF_RETURN_IF_ERROR(dataset()->epochs_->Restore(prefix(), reader));
      dataset()->epochs_->SetNextAtLeast(dataset()->directory_, epoch_ + 1);
      if (split_provider_) {
        TF_RETURN_IF_ERROR(split_provider_->Restore(
            [this](const std::string& key) {
              return full_name(absl::StrCat(kSplitProvider, key));
            },
            reader));
      }
      return absl::OkStatus();
    }

   private:
    // Reads and decodes element `element` (an index into the dataset's
    // elements), decoding its frames on up to `decode_threads` threads. Runs
    // on runner threads without mu_: it only reads state that changes in
    // Initialize and Restore, and Restore first stops the read-ahead.
    Produced ProduceElement(int64_t element, int decode_threads) {
      const Options& o = dataset()->options_;
      Produced produced;
      gulp::ClipBytes clip;
      gulp::ClipShape shape;
      const gulp::Item* item = nullptr;
      const std::string* data_path = nullptr;
      produced.status = ReadElement(element, &clip, &shape, &produced.tensors,
                                    &item, &data_path);
      if (!produced.status.ok() || !o.decode) return produced;
      produced.status = ToTfStatus(gulp::DecodeClip(
          clip, o.decode_options, shape, *data_path, item->id,
          *ctx_->runner(), decode_threads,
          produced.tensors[0].flat<uint8_t>().data()));
      return produced;
    }

    // Reads element `element`. Fills id/label/meta tensors; for decode=False
    // also the frames; for decode=True reads the JPEG bytes and allocates the
    // frames tensor to decode into.
    absl::Status ReadElement(int64_t element, gulp::ClipBytes* clip,
                             gulp::ClipShape* shape,
                             std::vector<Tensor>* tensors,
                             const gulp::Item** item_out,
                             const std::string** data_path_out) {
      const Dataset& d = *dataset();
      const Options& o = d.options_;
      const gulp::ElementRef& ref = d.elements_[element];
      const gulp::ChunkIndex& chunk = d.index_->chunks[ref.chunk];
      const gulp::Item& item = chunk.items[ref.item];
      *item_out = &item;
      *data_path_out = &chunk.data_path;

      std::vector<int64_t> selected;
      const uint64_t key = tfg::HashKey({static_cast<uint64_t>(o.seed),
                                         static_cast<uint64_t>(epoch_),
                                         static_cast<uint64_t>(element)});
      tfg::Status status = gulp::SelectFrames(
          o.selection, static_cast<int64_t>(item.frames.size()), key, &selected);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            chunk.meta_path, ": id '", item.id, "': ", status.message()));
      }
      // Sizes are checked before anything of the clip's size is allocated.
      const uint64_t max_bytes = static_cast<uint64_t>(o.max_clip_bytes);
      TFG_TF_RETURN_IF_ERROR(gulp::CheckClipJpegBytes(item, selected, max_bytes,
                                                      chunk.data_path));
      std::shared_ptr<tfg::RandomAccessFile> file;
      TFG_TF_RETURN_IF_ERROR(files_.Get(chunk.data_path, &file));

      Tensor frames;
      if (!o.decode) {
        frames = Tensor(ctx_->allocator({}), tensorflow::DT_STRING,
                        TensorShape({static_cast<int64_t>(selected.size())}));
        auto out = frames.flat<tensorflow::tstring>();
        for (size_t k = 0; k < selected.size(); ++k) {
          out(k).resize_uninitialized(item.frames[selected[k]].jpeg_length());
        }
        // One read per frame: in flight together on a remote store.
        std::vector<tfg::Status> read(selected.size());
        tfg::ReadInParallel(*file, static_cast<int64_t>(selected.size()), [&](int64_t k) {
          read[k] = gulp::ReadFrame(*file, item, selected[k], out(k).data());
        });
        for (const tfg::Status& s : read) TFG_TF_RETURN_IF_ERROR(s);
      } else {
        TFG_TF_RETURN_IF_ERROR(gulp::ReadClip(*file, item, selected, clip));
        TFG_TF_RETURN_IF_ERROR(gulp::ClipDecodedShape(
            *clip, o.decode_options, chunk.data_path, item.id, shape));
        TFG_TF_RETURN_IF_ERROR(gulp::CheckClipDecodedBytes(
            *shape, max_bytes, chunk.data_path, item.id));
        TensorShape frames_shape;
        TF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(
            {shape->num_frames, shape->height, shape->width, shape->channels},
            &frames_shape));
        absl::Status allocated = AllocatePooledTensor(
            frame_buffers_, tensorflow::DT_UINT8, frames_shape, &frames);
        if (!allocated.ok()) {
          return absl::Status(allocated.code(),
                              absl::StrCat(allocated.message(), " (frames of id '",
                                           item.id, "' of ", chunk.data_path, ")"));
        }
      }
      tensors->clear();
      tensors->push_back(std::move(frames));
      tensors->emplace_back(tensorflow::tstring(item.id));
      tensors->emplace_back(static_cast<int64_t>(ref.label));
      tensors->emplace_back(tensorflow::tstring(item.meta_json));
      return absl::OkStatus();
    }

    mutex mu_;
    int64_t epoch_ = 0;
    // Position in order_ of the next element to return.
    int64_t position_ TF_GUARDED_BY(mu_) = 0;
    std::vector<int64_t> order_;
    std::unique_ptr<IteratorContext> ctx_;
    int threads_ = 1;
    std::shared_ptr<SplitProvider> split_provider_;
    tfg::FileCache files_;
    // Decoded clips' memory, recycled (see pooled_tensor.h).
    std::shared_ptr<tfg::BufferPool> frame_buffers_;
    // Last: destroyed first, so its tasks finish before what they use goes.
    std::unique_ptr<tfg::OrderedReadAhead<Produced>> read_ahead_;
  };

  // The elements of `epoch`, in order: the whole epoch's order (the same on
  // every worker for one seed), then only this shard's positions of it, so
  // the shards of an epoch are disjoint and cover it. Frame sampling keys on
  // the element, not the position, so it does not depend on the sharding.
  std::vector<int64_t> EpochOrder(int64_t epoch) const {
    std::vector<int64_t> order = gulp::EpochOrder(
        elements_, options_.shuffle, static_cast<uint64_t>(options_.seed), epoch,
        options_.shuffle_chunk_window);
    const tfg::Shard& shard = options_.shard;
    if (!shard.sharded()) return order;
    std::vector<int64_t> mine(shard.Size(static_cast<int64_t>(order.size())));
    for (size_t p = 0; p < mine.size(); ++p) mine[p] = order[shard.Global(p)];
    return mine;
  }

  const std::string directory_;
  const Options options_;
  const std::shared_ptr<const gulp::GulpDirectory> index_;
  const std::vector<gulp::ElementRef> elements_;
  // Each iterator is one epoch of directory_ (a new order when shuffling),
  // counted by a counter shared by every re-creation of this dataset.
  const std::shared_ptr<EpochCounter> epochs_;
  DataTypeVector dtypes_;
  std::vector<PartialTensorShape> shapes_;
};

void GulpDatasetOp::MakeDataset(OpKernelContext* ctx, DatasetBase** output) {
  tensorflow::tstring directory_arg;
  OP_REQUIRES_OK(ctx, tensorflow::data::ParseScalarArgument<tensorflow::tstring>(
                          ctx, kDirectory, &directory_arg));
  std::string directory(directory_arg);
  auto index = std::make_shared<gulp::GulpDirectory>();
  OP_REQUIRES_OK(ctx, ToTfStatus(gulp::LoadGulpDirectory(
                          directory, options_.label_field, index.get())));

  gulp::LabelMap labels;
  bool have_labels = false;
  if (options_.use_label_map) {
    for (size_t i = 0; i < options_.label_names.size(); ++i) {
      labels[options_.label_names[i]] = options_.label_values[i];
    }
    have_labels = true;
  } else {
    const std::string path = tfg::JoinPath(directory, "label2idx.json");
    tfg::FileInfo info;
    const tfg::Status found = tfg::StatPath(path, &info);
    if (found.code() != tfg::StatusCode::kNotFound) {
      OP_REQUIRES_OK(ctx, ToTfStatus(found));
      OP_REQUIRES_OK(ctx, ToTfStatus(gulp::LoadLabelMap(path, &labels)));
      have_labels = true;
    }
  }
  std::vector<gulp::ElementRef> elements;
  OP_REQUIRES_OK(ctx, ToTfStatus(gulp::BuildElements(
                          *index, options_.ids, have_labels ? &labels : nullptr,
                          !options_.label_field.empty(), &elements)));
  std::shared_ptr<EpochCounter> epochs;
  OP_REQUIRES_OK(ctx, GetEpochCounter(ctx, options_.epoch_counter, &epochs));
  *output = new Dataset(ctx, std::move(directory), options_, std::move(index),
                        std::move(elements), std::move(epochs));
}

REGISTER_OP(kOpName)
    .Input("directory: string")
    .Output("handle: variant")
    .Attr("ids: list(string) = []")
    .Attr("label_field: string = 'label'")
    .Attr("use_label_map: bool = false")
    .Attr("label_names: list(string) = []")
    .Attr("label_values: list(int) = []")
    // Python's wrappers read the allowed values, minimums and defaults from
    // this registration (tf_gulp/ops/op_attrs.py): they are written only here.
    .Attr("frame_mode: {'all', 'slice', 'indices', 'segments'} = 'all'")
    .Attr("slice_start: int = 0")
    .Attr("slice_stop: int = 0")
    .Attr("slice_step: int = 1")
    .Attr("frame_indices: list(int) = []")
    .Attr("num_frames: int = 0")
    .Attr("training: bool = false")
    .Attr("decode: bool = true")
    .Attr("colorspace: {'rgb', 'gray'} = 'rgb'")
    .Attr("scale: int = 1")
    .Attr("dct_method: {'fast', 'accurate'} = 'fast'")
    .Attr("shuffle: bool = false")
    .Attr("seed: int = 0")
    .Attr("shuffle_chunk_window: int >= 1 = 4")
    .Attr(absl::StrCat(kMaxClipBytes, ": int >= 1 = ", gulp::kDefaultMaxClipBytes))
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
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      c->set_output(0, c->Scalar());
      return absl::OkStatus();
    })
    .Doc(R"doc(
Reads a gulp directory (data_N.gulp + meta_N.gmeta chunks) as a dataset of
(frames, id, label, meta). See tf_gulp.GulpDataset for the options.
)doc");

REGISTER_KERNEL_BUILDER(Name(kOpName).Device(tensorflow::DEVICE_CPU),
                        GulpDatasetOp);

}  // namespace
}  // namespace tf_gulp
