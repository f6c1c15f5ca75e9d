// The interface of the Benzina ops, shared by their registrations
// (bzna_ops.cc) and their kernels (bzna_dataset_op.cc, bzna_index_op.cc,
// decode_hevc_op.cc, decode_hevc_warped_op.cc and their GPU twins): each op's
// name beside its attr table, each written once (framework/attr_table.h).
// The sample attrs are read once for every kernel that has them; the rules
// they feed are cc/codec/hevc_sample.h's.
#ifndef TF_GULP_OPS_BZNA_BZNA_OPS_H_
#define TF_GULP_OPS_BZNA_BZNA_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "tensorflow/core/framework/tensor.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/source_attrs.h"
#include "tf_gulp/ops/image/fused_warp_args.h"

namespace tf_gulp {

// BznaDataset's (tf_gulp.BenzinaDataset's source): the entries [start, stop)
// of the container (a split, resolved by Python from the split table or the
// caller's ranges), in a keyed shuffle of (seed, epoch) or in order.
inline constexpr char kBznaDatasetOp[] = "TfGulp>BznaDataset";
struct BznaDatasetAttrs {
  int64_t start = 0;
  int64_t stop = 0;
  // Dataset.shard's and the epoch counter's (source_attrs.h): the iterator's
  // element e is the epoch's element shard.Global(e).
  SourceAttrs source;
  // Each element also carries "what": "FILE: sample I (byte offset O)", the
  // name the decoders give the sample in their errors.
  bool names = false;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    SourceAttrs::ForEachAttr(a.source, visit);
    visit("start", "int >= 0", a.start);
    visit("stop", "int >= 0", a.stop);
    visit("names", "bool = false", a.names);
  }
};

// The ops for tests only take no attrs: InternalTestingBznaTrackIndex's track
// is an input.
inline constexpr char kBznaTrackIndexOp[] = "TfGulp>InternalTestingBznaTrackIndex";
inline constexpr char kBznaIndexCacheStatsOp[] = "TfGulp>InternalTestingBznaIndexCacheStats";

// Which picture of a single-picture HEVC MP4 is meant: track and crop
// (DecodeHevc, HevcSampleSize, DecodeHevcWarped).
inline constexpr char kHevcSampleSizeOp[] = "TfGulp>HevcSampleSize";
struct HevcCropAttrs {
  std::string track;  // the hdlr name of the picture's track
  std::string crop;   // 'clean' (the clean aperture) or 'full'

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("track", "string = 'bzna_input'", a.track);
    visit("crop", "{'clean', 'full'} = 'clean'", a.crop);
  }

  bool clean() const { return crop == "clean"; }
};

// HevcSampleSize's: the crop's sizes, and 'coded': the size the picture is
// coded at (its SPS), which a hardware decoder must be created for.
struct HevcSizeAttrs {
  std::string track;
  std::string crop;  // 'clean', 'full' or 'coded'

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("track", "string = 'bzna_input'", a.track);
    visit("crop", "{'clean', 'full', 'coded'} = 'clean'", a.crop);
  }

  bool clean() const { return crop == "clean"; }
  bool coded() const { return crop == "coded"; }
};

// DecodeHevc's `max_size` input: [height, width] >= 0, both kernels' rule.
inline absl::Status CheckMaxSize(const ::tensorflow::Tensor& t, int* height, int* width) {
  if (t.dims() != 1 || t.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decode_hevc: max_size must be [height, width], got shape ", t.shape().DebugString()));
  }
  *height = t.vec<int32_t>()(0);
  *width = t.vec<int32_t>()(1);
  if (*height < 0 || *width < 0) {
    return absl::InvalidArgumentError(absl::StrCat("decode_hevc: max_size must be >= 0, got [",
                                                   *height, ", ", *width, "]"));
  }
  return absl::OkStatus();
}

// How it is decoded, besides: chroma upsampling and libavcodec's threads
// (DecodeHevc, DecodeHevcWarped).
inline constexpr char kDecodeHevcOp[] = "TfGulp>DecodeHevc";
struct HevcDecodeAttrs : HevcCropAttrs {
  std::string chroma_upsampling;
  int threads = 1;  // per picture (0: libavcodec's choice)
  tfg::codec::ChromaUpsampling chroma = tfg::codec::ChromaUpsampling::kBilinear;  // by Parse

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    HevcCropAttrs::ForEachAttr(a, visit);
    visit("chroma_upsampling", "{'bilinear', 'nearest'} = 'bilinear'", a.chroma_upsampling);
    visit("threads", "int = 1", a.threads);
  }

  // `op` begins the messages ("decode_hevc").
  absl::Status Parse(const char* op) {
    if (threads < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": threads must be >= 0"));
    return ToTfStatus(tfg::codec::ParseChromaUpsampling(chroma_upsampling, &chroma));
  }
};

// DecodeHevcWarped's (CPU and GPU kernels alike): the fused output stage's
// attrs (image/fused_warp_args.h) and the sample's, in `extra`.
inline constexpr char kDecodeHevcWarpedOp[] = "TfGulp>DecodeHevcWarped";
struct DecodeHevcWarpedAttrs : FusedOpAttrs<HevcDecodeAttrs> {
  absl::Status Parse(const char* op) {
    TF_RETURN_IF_ERROR(extra.Parse(op));
    return FusedWarpAttrs::Parse(op, 3);
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_BZNA_BZNA_OPS_H_
