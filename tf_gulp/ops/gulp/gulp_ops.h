// The interface of the GulpDataset op, shared by its registration
// (gulp_ops.cc) and its kernel (gulp_dataset_op.cc): its name and its attrs,
// each written once (framework/attr_table.h).
#ifndef TF_GULP_OPS_GULP_GULP_OPS_H_
#define TF_GULP_OPS_GULP_GULP_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cc/gulp/element_reader.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/source_attrs.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {

inline constexpr char kGulpDatasetOp[] = "TfGulp>GulpDataset";

// The options of clip sampling besides clip_len (frame_mode 'clips'): one
// given without clip_len is refused, by this table's names and registered
// defaults (gulp_dataset_op.cc).
struct ClipSamplingAttrs {
  // mmaction2's SampleFrames (cc/gulp/frame_selection.h): its names.
  int64_t frame_interval = 1, num_clips = 1;
  bool twice_sample = false, keep_tail_frames = false, temporal_jitter = false;
  std::string out_of_bound_opt;
  float target_fps = 0;  // 0: off
  // Spatial test views of each clip (cc/warp/view_crops.h), with the fused warp;
  // view_order 'crop_major' lists each crop's clips together (mmaction2's order).
  std::string crops, view_order;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("frame_interval", "int >= 1 = 1", a.frame_interval,
          "frames between a clip's frames (SampleFrames)");
    visit("num_clips", "int >= 1 = 1", a.num_clips,
          "clips per video (SampleFrames): random offsets in equal spans with training, spread evenly without");
    visit("twice_sample", "bool = false", a.twice_sample,
          "training=False: sample twice the clips (SampleFrames)");
    visit("out_of_bound_opt", "{'loop', 'repeat_last'} = 'loop'", a.out_of_bound_opt,
          "frames past a short video's end: loop, or repeat its last frame (SampleFrames)");
    visit("keep_tail_frames", "bool = false", a.keep_tail_frames,
          "training=True: offsets may reach the video's tail (SampleFrames)");
    visit("temporal_jitter", "bool = false", a.temporal_jitter,
          "move each frame by a random 0 .. frame_interval - 1 (SampleFrames)");
    visit("target_fps", "float = 0", a.target_fps,
          TF_GULP_NONE_IS_OFF "resample clips to this frame rate from the fps each item's meta records (SampleFrames)");
    visit("crops", "{'none', 'center', 'three'} = 'none'", a.crops,
          TF_GULP_NONE_IS_OFF "with clip_len and shape: the spatial test views of each clip, 'three' (ThreeCrop) or 'center'");
    visit("view_order", "{'clip_major', 'crop_major'} = 'clip_major'", a.view_order,
          "the order of the views: each clip's crops together, or each crop's clips (mmaction2's)");
  }
};

// Everything GulpDataset's attrs say, as the kernel reads them; the attrs
// with a doc line are tf_gulp.GulpDataset's options (Python reads them from
// the registration: tf_gulp/_options.py; attr_table.h says how).
struct GulpDatasetAttrs {
  std::vector<std::string> ids;
  std::string label_field;
  // A label_field the user chose (not the default): a directory where no item
  // has it is an error rather than all labels -1.
  bool label_field_required = false;
  bool use_label_map = false;  // true: label_names/values, not label2idx.json
  std::vector<std::string> label_names;
  std::vector<int64_t> label_values;
  std::string frame_mode;
  // Slice bounds; a missing start/stop is passed as INT64_MIN.
  int64_t slice_start = 0, slice_stop = 0, slice_step = 1;
  std::vector<int64_t> frame_indices;
  int64_t num_frames = 0;
  // frame_mode 'clips': mmaction2's SampleFrames (cc/gulp/frame_selection.h).
  int64_t clip_len = 0;
  ClipSamplingAttrs clip_sampling;
  bool training = false;
  bool decode = true;
  // colorspace, dct_method, dct_scaling: DecodeJpegWarped's too (image_ops.h).
  JpegDecodeAttrs jpeg;
  int64_t scale = 1;
  // 0: shuffle is a uniform permutation of all items (cc/util/record_order.h);
  // n > 0: the chunk order is permuted and the items of n consecutive chunks
  // are permuted together (cc/gulp/element_order.h: reads stay within a few
  // chunks, batches mix only the classes of those chunks).
  int64_t shuffle_chunk_window = 0;
  // The most bytes one element's frames may take (decoded, or as JPEG bytes
  // with decode=False); checked before reading and before decoding.
  int64_t max_clip_bytes = static_cast<int64_t>(::tfg::gulp::kDefaultMaxClipBytes);
  // The fused decode + warp: one transform per clip (tf_gulp.transforms'
  // encoding, similarity_transform.h), drawn from (seed, epoch, element), and
  // the colour transforms after it, one draw per clip (color_transform.h); the
  // attrs DecodeJpegWarped and DecodeHevcWarped have (fused_warp_args.h).
  FusedWarpAttrs fused;
  // Each element also carries its epoch and its element index (the key of its
  // random draws, decode_jpeg_warped's epoch and elements): outputs (epoch,
  // frames, id, index, label, meta), a dict's keys in sorted order.
  bool keys = false;
  // Dataset.shard's, the epoch counter's, shuffle and seed (source_attrs.h).
  SourceAttrs source;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("ids", "list(string) = []", a.ids);
    visit("label_field", "string = 'label'", a.label_field);
    visit("label_field_required", "bool = false", a.label_field_required);
    visit("use_label_map", "bool = false", a.use_label_map);
    visit("label_names", "list(string) = []", a.label_names);
    visit("label_values", "list(int) = []", a.label_values);
    visit("frame_mode", "{'all', 'slice', 'indices', 'segments', 'clips'} = 'all'",
          a.frame_mode);
    visit("slice_start", "int = 0", a.slice_start);
    visit("slice_stop", "int = 0", a.slice_stop);
    visit("slice_step", "int = 1", a.slice_step);
    visit("frame_indices", "list(int) = []", a.frame_indices);
    visit("num_frames", "int = 0", a.num_frames,
          TF_GULP_NONE_IS_OFF "sample this many frames in equal segments (TSN): a random offset in each with training, the centres without; short clips loop");
    visit("clip_len", "int >= 0 = 0", a.clip_len,
          TF_GULP_NONE_IS_OFF "dense clips of this many frames (mmaction2's SampleFrames clip_len; docs/video.md)");
    ClipSamplingAttrs::ForEachAttr(a.clip_sampling, visit);
    visit("training", "bool = false", a.training,
          "random segment and clip offsets (drawn from seed, epoch, element)");
    visit("decode", "bool = true", a.decode,
          "decode the JPEG frames, or yield their bytes");
    JpegDecodeAttrs::ForEachAttr(a.jpeg, visit);
    visit("scale", "int = 1", a.scale,
          "decode at 1/scale of the size (1, 2, 4 or 8), inside libjpeg-turbo's IDCT");
    visit("shuffle_chunk_window", "int >= 0 = 0", a.shuffle_chunk_window,
          TF_GULP_NONE_IS_OFF "shuffle within windows of this many chunks, for slow storage (docs/gulp_dataset.md)");
    visit("max_clip_bytes", absl::StrCat("int >= 1 = ", ::tfg::gulp::kDefaultMaxClipBytes),
          a.max_clip_bytes, "the most bytes one element's frames may take, checked before reading");
    // The fused decode + augment (tf_gulp.GulpDataset's augment=, compiled by
    // tf_gulp.transforms); off while output_height and output_width are 0.
    FusedWarpAttrs::ForEachAttr(a.fused, visit);
    visit("keys", "bool = false", a.keys,
          "elements also carry epoch and index: the key of each clip's random draws");
    SourceAttrs::ForEachAttr(a.source, visit);
  }
};

// GulpElementViews: the views axis of GulpDataset's frames for these options,
// [] (frames [T, ...]) or [V] (frames [V, T, ...]: clips x crops), as the
// kernel's own parse of them derives it; Python's element spec takes it from
// here. GulpDataset's attrs without the source attrs: it reads nothing.
inline constexpr char kGulpElementViewsOp[] = "TfGulp>GulpElementViews";
using GulpElementViewsAttrs = AttrsWithout<GulpDatasetAttrs, SourceAttrs>;

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_GULP_GULP_OPS_H_
