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
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
#include "cc/gulp/element_reader.h"
#include "cc/gulp/element_order.h"
#include "cc/gulp/frame_selection.h"
#include "cc/gulp/gulp_directory.h"
#include "cc/io/file_cache.h"
#include "cc/io/file_system.h"
#include "cc/util/shard.h"
#include "cc/util/stateless_random.h"
#include "cc/warp/color_transform.h"
#include "cc/warp/similarity_transform.h"
#include "cc/warp/view_crops.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/epoch_counter.h"
#include "tf_gulp/ops/framework/pooled_tensor.h"
#include "tf_gulp/ops/framework/positional_source_dataset.h"
#include "tf_gulp/ops/framework/tf_names.h"
#include "tf_gulp/ops/gulp/gulp_ops.h"

namespace tf_gulp {
namespace {

using ::tensorflow::DataType;
namespace gulp = ::tfg::gulp;

// The op's input; its attrs are GulpDatasetAttrs' (gulp_ops.h).
constexpr char kDirectory[] = "directory";

// How many chunks an iterator keeps open. The uniform shuffle visits the
// chunks in any order: 64 keeps most reads of a directory of up to 64 chunks
// (and a good share of larger ones) from reopening their file (an open(2),
// or a metadata request on a remote store), at 64 descriptors per iterator.
constexpr size_t kOpenFiles = 64;

// An iterator keeps its idle element readers (each holds the JPEG bytes buffer
// of the last clip it read) for the next elements, unless a reader's buffer
// grew past this: one huge clip does not pin its size for the whole epoch.
constexpr size_t kMaxRetainedReaderBytes = size_t{64} << 20;

// Everything the op's attrs say (gulp_ops.h), read once in the kernel
// constructor, and what the kernel derives from them.
struct Options : GulpDatasetAttrs {
  bool warped() const { return fused.output_height > 0 || fused.output_width > 0; }
  tfg::warp::ViewCrops view_crops = tfg::warp::ViewCrops::kNone;
  // Views of an element (clips x crops); `views_output`: frames are
  // [views, T, ...] (several clips, or spatial views), else [T, ...].
  int64_t views = 1;
  bool views_output = false;

  // What the core's element reader is told: selection, decode settings, limit.
  gulp::ElementOptions element;
};

constexpr int64_t kMissingBound = std::numeric_limits<int64_t>::min();

// The op's attrs hold the checks that fit an attr (allowed strings, minimums),
// so values reaching here are among those; what is left are the checks across
// attrs and the core's own.
absl::Status ParseOptions(Options* o) {
  gulp::FrameSelection& s = o->element.selection;
  const ClipSamplingAttrs& c = o->clip_sampling;
  if (o->frame_mode != "clips") {
    // Clip sampling's options (other than their registered defaults) mean
    // nothing without clip_len: one given alone is a mistake, not an option
    // to ignore.
    std::vector<absl::string_view> given;
    TF_RETURN_IF_ERROR(NonDefaultAttrs<ClipSamplingAttrs>(kGulpDatasetOp, c, &given));
    if (!given.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          absl::StrJoin(given, ", ",
                        [](std::string* out, absl::string_view name) {
                          absl::StrAppend(out, name, "=");
                        }),
          ": options of clip sampling, they need clip_len="));
    }
  }
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
  } else if (o->frame_mode == "clips") {
    s.mode = gulp::FrameSelection::Mode::kClips;
    s.clip_len = o->clip_len;
    s.frame_interval = c.frame_interval;
    s.num_clips = c.num_clips;
    s.random_offsets = o->training;
    s.twice_sample = c.twice_sample;
    s.keep_tail_frames = c.keep_tail_frames;
    s.temporal_jitter = c.temporal_jitter;
    s.out_of_bound = c.out_of_bound_opt == "repeat_last"
                         ? gulp::FrameSelection::OutOfBound::kRepeatLast
                         : gulp::FrameSelection::OutOfBound::kLoop;
    s.target_fps = c.target_fps;
    s.view_major = c.view_order == "crop_major";
  } else {  // "segments"
    s.mode = gulp::FrameSelection::Mode::kSegments;
    s.num_frames = o->num_frames;
    s.random_offsets = o->training;
  }
  o->view_crops = c.crops == "three"    ? tfg::warp::ViewCrops::kThree
                  : c.crops == "center" ? tfg::warp::ViewCrops::kCenter
                                        : tfg::warp::ViewCrops::kNone;
  if (o->view_crops != tfg::warp::ViewCrops::kNone) {
    if (o->fused.output_height <= 0 || !o->fused.warp.empty()) {
      return absl::InvalidArgumentError(
          "crops (the test views) needs augment=[Resize((height, width)), ...] and no other "
          "geometry: each view is a square of the frame's short side, resized to that size");
    }
    s.views_per_clip = tfg::warp::NumViewCrops(o->view_crops);
  }
  if (s.mode == gulp::FrameSelection::Mode::kClips) {
    o->views = gulp::NumClips(s) * s.views_per_clip;
    o->views_output = gulp::NumClips(s) > 1 || o->view_crops != tfg::warp::ViewCrops::kNone;
  } else if (o->view_crops != tfg::warp::ViewCrops::kNone) {
    return absl::InvalidArgumentError("crops need clip sampling (clip_len=)");
  }
  TFG_TF_RETURN_IF_ERROR(gulp::ValidateFrameSelection(s));

  o->element.decode = o->decode;
  o->element.max_clip_bytes = static_cast<uint64_t>(o->max_clip_bytes);
  tfg::jpeg::DecodeOptions& d = o->element.decode_options;
  d = o->jpeg.Options();
  if (!tfg::jpeg::IsValidScaleDenominator(static_cast<int>(o->scale))) {
    return absl::InvalidArgumentError(
        absl::StrCat("scale must be 1, 2, 4 or 8 (decode at 1/scale of the "
                     "size), got ",
                     o->scale));
  }
  d.scale_denominator = static_cast<int>(o->scale);
  if (o->warped()) {
    if (!o->decode) {
      return absl::InvalidArgumentError("augment needs decode=True (it is fused into decoding)");
    }
    if (o->scale != 1) {
      return absl::InvalidArgumentError(
          "scale cannot be combined with augment: the fused decode picks the DCT scale "
          "itself (turn it off with dct_scaling=False)");
    }
    TF_RETURN_IF_ERROR(
        o->fused.Parse("GulpDataset", static_cast<int>(tfg::jpeg::Channels(d.color_space))));
  } else if (!o->fused.warp.empty() || !o->fused.bias.empty() || !o->fused.norm.empty() ||
             !o->fused.color.empty()) {
    return absl::InvalidArgumentError("warp, color, bias and norm need an output size (augment's geometry)");
  }
  if (o->label_names.size() != o->label_values.size()) {
    return absl::InvalidArgumentError("label_names and label_values differ in length");
  }
  return absl::OkStatus();
}

// The frames' leading axis of views: [] when an element is one view (frames
// [T, ...]), else [views] (frames [views, T, ...]). The dataset's element spec
// and GulpElementViews' answer, which Python's element spec takes.
std::vector<int64_t> ViewsAxis(const Options& o) {
  return o.views_output ? std::vector<int64_t>{o.views} : std::vector<int64_t>{};
}

// The memory of decoded clips, recycled (see pooled_tensor.h), made by the
// first iterator: enough free clip buffers for its read-ahead window (2 per
// runner thread) to refill while the consumer still holds the elements it
// took. It is shared by every iterator of one Python dataset and its
// re-creations (kept with the parsed index, see MakeDataset), so the next
// epoch's iterator (a new one, as Keras and `for e in ds` make them) starts
// with buffers whose pages are mapped instead of page-faulting ~900 times per
// 3.7 MB clip again. It holds at most that many free clips while the dataset
// lives.
class FrameBuffers {
 public:
  std::shared_ptr<tfg::BufferPool> Get(int threads) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (pool_ == nullptr) pool_ = MakeTensorBufferPool(4 * static_cast<size_t>(threads) + 2);
    return pool_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::shared_ptr<tfg::BufferPool> pool_;  // under mu_
};

class GulpDatasetOp
    : public PositionalSourceOpKernel<GulpDatasetAttrs, Options, ParseOptions> {
 public:
  using PositionalSourceOpKernel::PositionalSourceOpKernel;
  void MakeDataset(OpKernelContext* ctx, DatasetBase** output) override;

 private:
  class Dataset;
};

// One element being produced: its tensors, or the error that replaced it.
struct Produced {
  absl::Status status;
  std::vector<Tensor> tensors;
};

// One element per item (a record of the epoch's order).
class GulpDatasetOp::Dataset : public PositionalSourceDataset<Produced, Options> {
 public:
  Dataset(OpKernelContext* ctx, std::string directory, const Options& options,
          std::shared_ptr<const gulp::GulpDirectory> index,
          std::vector<gulp::ElementRef> elements,
          std::shared_ptr<const FrameBuffers> frame_buffers,
          std::shared_ptr<EpochCounter> epochs)
      : PositionalSourceDataset(ctx, "GulpDataset", "Gulp", options,
                                static_cast<int64_t>(elements.size()),
                                static_cast<int64_t>(elements.size()), std::move(directory),
                                std::move(epochs)),
        index_(std::move(index)),
        elements_(std::move(elements)),
        frame_buffers_(std::move(frame_buffers)) {
    int64_t t = -1;
    if (options_.element.selection.mode == gulp::FrameSelection::Mode::kSegments) {
      t = options_.num_frames;
    } else if (options_.element.selection.mode == gulp::FrameSelection::Mode::kIndices) {
      t = static_cast<int64_t>(options_.frame_indices.size());
    } else if (options_.element.selection.mode == gulp::FrameSelection::Mode::kClips) {
      t = options_.clip_len;
    }
    const int64_t channels = tfg::jpeg::Channels(options_.element.decode_options.color_space);
    std::vector<int64_t> dims = ViewsAxis(options_);
    dims.push_back(t);
    if (options_.warped()) {
      dtypes_ = {frames_dtype()};
      dims.insert(dims.end(), {options_.fused.output_height, options_.fused.output_width, channels});
    } else if (options_.decode) {
      dtypes_ = {tensorflow::DT_UINT8};
      dims.insert(dims.end(), {-1, -1, channels});
    } else {
      dtypes_ = {tensorflow::DT_STRING};
    }
    shapes_ = {PartialTensorShape(dims)};
    dtypes_.insert(dtypes_.end(), {tensorflow::DT_STRING, tensorflow::DT_INT64,
                                   tensorflow::DT_STRING});
    shapes_.insert(shapes_.end(), {PartialTensorShape({}), PartialTensorShape({}),
                                   PartialTensorShape({})});
    if (options_.keys) {
      // (epoch, frames, id, index, label, meta): the dict's keys in sorted order.
      dtypes_.insert(dtypes_.begin(), tensorflow::DT_INT64);
      shapes_.insert(shapes_.begin(), PartialTensorShape({}));
      dtypes_.insert(dtypes_.begin() + 3, tensorflow::DT_INT64);
      shapes_.insert(shapes_.begin() + 3, PartialTensorShape({}));
    }
  }

  DataType frames_dtype() const {
    return options_.warped() && options_.fused.float_output ? tensorflow::DT_FLOAT
                                                                 : tensorflow::DT_UINT8;
  }

  absl::Status MakeReader(IteratorContext* ctx,
                          std::unique_ptr<Reader>* reader) const override {
    *reader = std::make_unique<GulpIteratorReader>(this, ctx);
    return absl::OkStatus();
  }

 private:
  // Reads and decodes one iterator's clips: element e of an epoch is the
  // clip at e in that epoch's order (this shard's part of it).
  class GulpIteratorReader : public Reader {
   public:
    GulpIteratorReader(const Dataset* dataset, IteratorContext* ctx)
        : dataset_(dataset),
          ctx_(ctx),
          threads_(std::max(1, ctx->runner_threadpool_size())),
          files_(kOpenFiles),
          frame_buffers_(dataset->frame_buffers_->Get(threads_)) {}

    // Elements are read and decoded ahead, one per runner thread, a window
    // of 2 per thread: every core decodes while the consumer takes earlier
    // elements. On tf.data's runner, not a pool of the iterator's own
    // (read_ahead_threads(), as FFRecordDataset reads): a pool that sleeps
    // when idle saves a little CPU inside the runtime, but iterated from
    // Python, as model.fit reads, it delivered fewer frames per second.
    int64_t read_ahead_units() const override { return 2 * threads_; }

    void SetEpoch(int64_t epoch) override {
      if (dataset_->options_.shuffle_chunk_window > 0) window_order_ = dataset_->WindowOrder(epoch);
    }

    void Read(int64_t epoch, int64_t first, int64_t count, bool alone,
              Produced* produced) override {
      // A clip read alone (a tf.data service split) has its frames decoded
      // in parallel; read ahead, one clip per thread. (Its output is sized by
      // the JPEG headers, known only here.)
      *produced = ProduceElement(epoch, Element(first), alone ? threads_ : 1);
    }

    absl::Status Output(Produced& produced, int64_t k,
                        std::vector<Tensor>* out) override {
      if (!produced.status.ok()) return produced.status;
      *out = std::move(produced.tensors);
      return absl::OkStatus();
    }

   private:
    // The dataset's element at the iterator's position `p` of the epoch: the
    // base's order of the epoch's records (Record: a keyed permutation, O(1)
    // per position, nothing of the epoch materialized), or the chunk-window
    // order of this shard's positions.
    int64_t Element(int64_t p) const {
      return dataset_->options_.shuffle_chunk_window > 0 ? window_order_[p] : Record(p);
    }

    // Reads and decodes element `element` (an index into the dataset's
    // elements) of `epoch`, decoding its frames on up to `decode_threads`
    // threads, through the core's element reader (cc/gulp/element_reader.h):
    // this only allocates the tensors it sizes and translates errors. Runs on
    // runner threads: it only reads state that changes in SetEpoch, which is
    // called with no read running.
    Produced ProduceElement(int64_t epoch, int64_t element, int decode_threads) {
      Produced produced;
      produced.status = ReadElement(epoch, element, decode_threads, &produced.tensors);
      return produced;
    }

    // The key of every random decision about an element (frame offsets, the
    // transform): on the element, not the position, so it does not depend
    // on the sharding.
    uint64_t ElementKey(int64_t epoch, int64_t element) const {
      return tfg::HashKey({static_cast<uint64_t>(dataset_->options_.source.seed),
                           static_cast<uint64_t>(epoch), static_cast<uint64_t>(element)});
    }

    // Reads the element with an idle reader (given back whether or not it
    // failed: its next Select() starts afresh).
    absl::Status ReadElement(int64_t epoch, int64_t element, int decode_threads,
                             std::vector<Tensor>* tensors) {
      std::unique_ptr<gulp::ElementReader> reader = AcquireReader();
      absl::Status status = ReadElementWith(*reader, epoch, element, decode_threads, tensors);
      ReleaseReader(std::move(reader));
      return status;
    }

    absl::Status ReadElementWith(gulp::ElementReader& reader, int64_t epoch, int64_t element,
                                 int decode_threads, std::vector<Tensor>* tensors) {
      const Dataset& d = *dataset_;
      const Options& o = d.options_;
      const gulp::ElementRef& ref = d.elements_[element];
      const gulp::ChunkIndex& chunk = d.index_->chunks[ref.chunk];
      const gulp::Item& item = chunk.items[ref.item];
      const uint64_t key = ElementKey(epoch, element);

      tfg::Status selected = reader.Select(item, chunk.data_path, chunk.meta_path, key);
      if (selected.code() == tfg::StatusCode::kOutOfRange) {
        // A frame index past the clip is the user's argument: OutOfRange
        // would end the iteration silently in tf.data.
        selected = tfg::Status(tfg::StatusCode::kInvalidArgument, selected.message());
      }
      TFG_TF_RETURN_IF_ERROR(selected);
      std::shared_ptr<tfg::RandomAccessFile> file;
      TFG_TF_RETURN_IF_ERROR(files_.Get(chunk.data_path, &file));

      Tensor frames;
      if (!o.decode) {
        const int64_t n = static_cast<int64_t>(reader.num_frames());
        frames = Tensor(ctx_->allocator({}), tensorflow::DT_STRING, TensorShape({n}));
        auto out = frames.flat<tensorflow::tstring>();
        std::vector<char*> dst(n);
        for (int64_t k = 0; k < n; ++k) {
          out(k).resize_uninitialized(reader.jpeg_length(k));
          dst[k] = out(k).data();
        }
        TFG_TF_RETURN_IF_ERROR(reader.ReadJpegs(*file, dst.data()));
      } else {
        TFG_TF_RETURN_IF_ERROR(reader.ReadForDecode(*file));
        gulp::ClipShape shape;
        TFG_TF_RETURN_IF_ERROR(reader.ClipShape(&shape));
        // The output's size: the decoded clip's, or the warped one's.
        gulp::ClipShape out = shape;
        if (o.warped()) {
          out.height = static_cast<int>(o.fused.output_height);
          out.width = static_cast<int>(o.fused.output_width);
        }
        gulp::ClipShape out_bytes = out;
        if (d.frames_dtype() == tensorflow::DT_FLOAT) out_bytes.channels *= sizeof(float);
        TFG_TF_RETURN_IF_ERROR(reader.CheckOutputBytes(out_bytes));
        TensorShape frames_shape;
        TF_RETURN_IF_ERROR(TensorShape::BuildTensorShape(
            {out.num_frames, out.height, out.width, out.channels}, &frames_shape));
        absl::Status allocated = AllocatePooledTensor(
            frame_buffers_, d.frames_dtype(), frames_shape, &frames);
        if (!allocated.ok()) {
          return absl::Status(allocated.code(),
                              absl::StrCat(allocated.message(), " (frames of id '",
                                           item.id, "' of ", chunk.data_path, ")"));
        }
        TF_RETURN_IF_ERROR(DecodeInto(reader, shape, key, decode_threads, &frames));
      }
      if (o.views_output) {
        // [views * T, ...] as [views, T, ...]: the selection lists the views'
        // frames view after view (clip-major), so this is the same buffer.
        TensorShape views_shape({o.views, o.clip_len});
        for (int d = 1; d < frames.dims(); ++d) views_shape.AddDim(frames.dim_size(d));
        Tensor reshaped;
        if (!reshaped.CopyFrom(frames, views_shape)) {
          return absl::InternalError(absl::StrCat("views of id '", item.id, "': ",
                                                  frames.shape().DebugString(), " is not ",
                                                  views_shape.DebugString()));
        }
        frames = std::move(reshaped);
      }
      tensors->clear();
      if (o.keys) tensors->emplace_back(epoch);
      tensors->push_back(std::move(frames));
      tensors->emplace_back(tensorflow::tstring(item.id));
      if (o.keys) tensors->emplace_back(element);
      tensors->emplace_back(static_cast<int64_t>(ref.label));
      tensors->emplace_back(tensorflow::tstring(item.meta_json));
      return absl::OkStatus();
    }

    // Decodes the clip read by `reader` (full-size `shape`) into `frames`,
    // fused with the clip's warp when the dataset has one.
    absl::Status DecodeInto(const gulp::ElementReader& reader, const gulp::ClipShape& shape,
                            uint64_t key, int decode_threads, Tensor* frames) {
      const Options& o = dataset_->options_;
      const tfg::Scheduler& runner = *ctx_->runner();
      if (!o.warped()) {
        return ToTfStatus(reader.Decode(shape, runner, decode_threads,
                                        frames->flat<uint8_t>().data()));
      }
      // One matrix per clip, from the full-size frames' shape and the key; or
      // one per spatial view, each clip's frames listed once per view.
      double view_matrices[9 * 3];
      gulp::FrameMatrices matrices(view_matrices);
      if (o.view_crops != tfg::warp::ViewCrops::kNone) {
        const int k = tfg::warp::NumViewCrops(o.view_crops);
        for (int v = 0; v < k; ++v) {
          tfg::warp::ViewCropMatrix(o.view_crops, v, shape.height, shape.width,
                                    o.fused.output_height, o.fused.output_width,
                                    view_matrices + 9 * v);
        }
        // A view's frames: one clip's (clip-major), or all clips' (crop-major).
        const int64_t per_view = o.clip_len * (o.element.selection.view_major
                                                   ? gulp::NumClips(o.element.selection)
                                                   : 1);
        matrices = gulp::FrameMatrices(view_matrices, k, static_cast<size_t>(per_view));
      } else {
        tfg::warp::TransformMatrix(o.fused.spec, key, shape.height, shape.width,
                                   o.fused.output_height, o.fused.output_width, view_matrices);
      }
      tfg::jpeg::WarpTarget target;
      o.fused.FillTarget(&target);
      target.dct_scaling = o.jpeg.dct_scaling;
      // One colour draw per clip: every frame gets the same steps.
      const tfg::warp::ColorDraw color = tfg::warp::DrawColor(o.fused.color_spec, key);
      target.color = &color;
      if (frames->dtype() == tensorflow::DT_FLOAT) {
        return ToTfStatus(reader.DecodeWarped(shape, matrices, target, runner, decode_threads,
                                              frames->flat<float>().data()));
      }
      return ToTfStatus(reader.DecodeWarped(shape, matrices, target, runner, decode_threads,
                                            frames->flat<uint8_t>().data()));
    }

    // An element reader for one element: an idle one (its JPEG buffer already
    // allocated) or a new one.
    std::unique_ptr<gulp::ElementReader> AcquireReader() {
      {
        std::lock_guard<std::mutex> lock(readers_mu_);
        if (!idle_readers_.empty()) {
          std::unique_ptr<gulp::ElementReader> reader = std::move(idle_readers_.back());
          idle_readers_.pop_back();
          return reader;
        }
      }
      return std::make_unique<gulp::ElementReader>(dataset_->options_.element);
    }

    // Keeps `reader` for a later element: at most one per runner thread plus
    // the consumer's, and none whose buffer grew past kMaxRetainedReaderBytes.
    void ReleaseReader(std::unique_ptr<gulp::ElementReader> reader) {
      if (reader == nullptr || reader->retained_bytes() > kMaxRetainedReaderBytes) return;
      std::lock_guard<std::mutex> lock(readers_mu_);
      if (idle_readers_.size() < static_cast<size_t>(threads_) + 1) {
        idle_readers_.push_back(std::move(reader));
      }
    }

    const Dataset* const dataset_;
    IteratorContext* const ctx_;  // the iterator's copy (see MakeReader)
    const int threads_;
    tfg::FileCache files_;
    // Decoded clips' memory, recycled (see pooled_tensor.h): the dataset's
    // pool, shared by its iterators (FrameBuffers).
    const std::shared_ptr<tfg::BufferPool> frame_buffers_;
    std::mutex readers_mu_;
    std::vector<std::unique_ptr<gulp::ElementReader>> idle_readers_;  // under readers_mu_
    // With shuffle_chunk_window, the epoch's chunk-window order of this
    // shard's positions, materialized (SetEpoch); else the base's order().
    std::vector<int64_t> window_order_;
  };

  // The chunk-window order (shuffle_chunk_window > 0): the elements of
  // `epoch`, in order: the whole epoch's order (the same on every worker for
  // one seed), then only this shard's positions of it, so the shards of an
  // epoch are disjoint and cover it.
  std::vector<int64_t> WindowOrder(int64_t epoch) const {
    std::vector<int64_t> order = gulp::EpochOrder(
        elements_, options_.source.shuffle, static_cast<uint64_t>(options_.source.seed), epoch,
        options_.shuffle_chunk_window);
    const tfg::Shard& s = shard();
    if (!s.sharded()) return order;
    std::vector<int64_t> mine(s.Size(static_cast<int64_t>(order.size())));
    for (size_t p = 0; p < mine.size(); ++p) mine[p] = order[s.Global(p)];
    return mine;
  }

  const std::shared_ptr<const gulp::GulpDirectory> index_;
  const std::vector<gulp::ElementRef> elements_;
  const std::shared_ptr<const FrameBuffers> frame_buffers_;
};

void GulpDatasetOp::MakeDataset(OpKernelContext* ctx, DatasetBase** output) {
  tensorflow::tstring directory_arg;
  OP_REQUIRES_OK(ctx, tensorflow::data::ParseScalarArgument<tensorflow::tstring>(
                          ctx, kDirectory, &directory_arg));
  std::string directory(directory_arg);
  std::shared_ptr<EpochCounter> epochs;
  OP_REQUIRES_OK(ctx, GetEpochs(ctx, &epochs));
  // The index is parsed once per Python dataset: its re-creations (each iterator's, each
  // pipeline's built on it) share the counter, and the parsed index with it.
  const std::string index_key = absl::StrCat("gulp index ", directory.size(), ":", directory,
                                             options_.label_field);
  auto index = std::static_pointer_cast<const gulp::GulpDirectory>(
      epochs->FindShared(index_key));
  if (index == nullptr) {
    auto parsed = std::make_shared<gulp::GulpDirectory>();
    OP_REQUIRES_OK(ctx, ToTfStatus(gulp::LoadGulpDirectory(
                            directory, options_.label_field, parsed.get())));
    index = parsed;
    epochs->SetShared(index_key, index);
  }
  if (options_.label_field_required) {
    OP_REQUIRES_OK(ctx, ToTfStatus(gulp::RequireLabelField(*index, options_.label_field)));
  }

  gulp::LabelMap labels;
  bool have_labels = false;
  if (options_.use_label_map) {
    for (size_t i = 0; i < options_.label_names.size(); ++i) {
      labels[options_.label_names[i]] = options_.label_values[i];
    }
    have_labels = true;
  } else {
    OP_REQUIRES_OK(ctx, ToTfStatus(gulp::LoadDirectoryLabelMap(directory, &labels,
                                                               &have_labels)));
  }
  std::vector<gulp::ElementRef> elements;
  OP_REQUIRES_OK(ctx, ToTfStatus(gulp::BuildElements(
                          *index, options_.ids, have_labels ? &labels : nullptr,
                          !options_.label_field.empty(), &elements)));
  // One pool of clip buffers per Python dataset, like the index.
  constexpr char kFrameBuffersKey[] = "gulp frame buffers";
  auto frame_buffers =
      std::static_pointer_cast<const FrameBuffers>(epochs->FindShared(kFrameBuffersKey));
  if (frame_buffers == nullptr) {
    frame_buffers = std::make_shared<const FrameBuffers>();
    epochs->SetShared(kFrameBuffersKey, frame_buffers);
  }
  *output = new Dataset(ctx, std::move(directory), options_, std::move(index),
                        std::move(elements), std::move(frame_buffers), std::move(epochs));
}

// GulpElementViews (gulp_ops.h): GulpDataset's options parsed as its kernel
// parses them (the same refusals), and their views axis.
class GulpElementViewsOp : public OpKernel {
 public:
  explicit GulpElementViewsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    Options options;
    OP_REQUIRES_OK(ctx, ReadTableAttrs<GulpElementViewsAttrs>(ctx, &options));
    OP_REQUIRES_OK(ctx, ParseOptions(&options));
    views_ = ViewsAxis(options);
  }

  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, TensorShape({static_cast<int64_t>(views_.size())}), &out));
    std::copy(views_.begin(), views_.end(), out->vec<int64_t>().data());
  }

 private:
  std::vector<int64_t> views_;
};

// The ops' registrations: gulp_ops.cc.
REGISTER_KERNEL_BUILDER(Name(kGulpDatasetOp).Device(tensorflow::DEVICE_CPU),
                        GulpDatasetOp);
REGISTER_KERNEL_BUILDER(Name(kGulpElementViewsOp).Device(tensorflow::DEVICE_CPU),
                        GulpElementViewsOp);

}  // namespace
}  // namespace tf_gulp
