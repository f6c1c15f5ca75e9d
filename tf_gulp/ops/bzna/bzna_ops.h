// The interface of the Benzina ops, shared by their registrations
// (bzna_ops.cc) and their kernels (bzna_index_op.cc, decode_hevc_op.cc,
// decode_hevc_warped_op.cc and their GPU twins): their names and attr tables,
// each written once (framework/attr_table.h). The sample attrs are read once
// for every kernel that has them; the rules they feed are
// cc/codec/hevc_sample.h's.
#ifndef TF_GULP_OPS_BZNA_BZNA_OPS_H_
#define TF_GULP_OPS_BZNA_BZNA_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cc/codec/hevc_decoder.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/image/fused_warp_args.h"

namespace tf_gulp {

inline constexpr char kBznaEntryIndexOp[] = "TfGulp>BznaEntryIndex";
inline constexpr char kBznaTrackIndexOp[] = "TfGulp>InternalTestingBznaTrackIndex";
inline constexpr char kBznaIndexCacheStatsOp[] = "TfGulp>InternalTestingBznaIndexCacheStats";
inline constexpr char kReadFileRangeOp[] = "TfGulp>ReadFileRange";
inline constexpr char kBznaEpochOrderOp[] = "TfGulp>BznaEpochOrder";
inline constexpr char kDecodeHevcOp[] = "TfGulp>DecodeHevc";
inline constexpr char kHevcSampleSizeOp[] = "TfGulp>HevcSampleSize";
inline constexpr char kDecodeHevcWarpedOp[] = "TfGulp>DecodeHevcWarped";

// InternalTestingBznaTrackIndex's: the hdlr name of the track (no default).
struct BznaTrackIndexAttrs {
  std::string track;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("track", "string", a.track);
  }
};

// Which picture of a single-picture HEVC MP4 is meant: track and crop
// (DecodeHevc, HevcSampleSize, DecodeHevcWarped).
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

// How it is decoded, besides: chroma upsampling and libavcodec's threads
// (DecodeHevc, DecodeHevcWarped).
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
struct DecodeHevcWarpedAttrs : FusedOpAttrs<HevcDecodeAttrs> {
  absl::Status Parse(const char* op) {
    TF_RETURN_IF_ERROR(extra.Parse(op));
    return FusedWarpAttrs::Parse(op, 3);
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_BZNA_BZNA_OPS_H_
