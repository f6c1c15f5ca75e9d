// The Benzina ops' registrations: names, inputs, outputs, attrs and shape
// functions, apart from their kernels (as tensorflow-io keeps `ops/` apart
// from `kernels/`). Op names are recorded in dataset graphs, checkpoints and
// SavedModels, so they never change (tests/test_op_names.py), except the
// `InternalTesting` ones: shipped for tests and benchmarks only, named so that
// no one builds on them, free to change.
//
//   BznaEntryIndex                           bzna_index_op.cc
//   InternalTestingBznaTrackIndex,
//   InternalTestingBznaIndexCacheStats       bzna_index_op.cc
//   ReadFileRange                            read_file_range_op.cc
//   DecodeHevc, HevcSampleSize               decode_hevc_op.cc (GPU: decode_hevc_gpu_op.cc)
//   DecodeHevcWarped                         decode_hevc_warped_op.cc
#include <cstdint>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"

namespace tf_gulp {
namespace {

using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

REGISTER_OP("TfGulp>InternalTestingBznaTrackIndex")
    .Input("path: string")
    .Output("offsets: int64")
    .Output("sizes: int64")
    .Attr("track: string")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      c->set_output(0, c->Vector(c->UnknownDim()));
      c->set_output(1, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc("For tests: byte ranges of the samples of an MP4 track found by its hdlr name.");

REGISTER_OP("TfGulp>BznaEntryIndex")
    .Input("path: string")
    .Output("offsets: int64")
    .Output("sizes: int64")
    .Output("target_offsets: int64")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      for (int k = 0; k < 3; ++k) c->set_output(k, c->Vector(c->UnknownDim()));
      return absl::OkStatus();
    })
    .Doc("Per entry of a Benzina container: image sample range and target offset (-1: none).");

REGISTER_OP("TfGulp>InternalTestingBznaIndexCacheStats")
    .Output("reads_and_hits: int64")
    .SetIsStateful()  // its value changes between calls: never constant-folded
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Vector(2));
      return absl::OkStatus();
    })
    .Doc("For tests: [reads, hits] of this process's Benzina entry index cache.");

REGISTER_OP("TfGulp>ReadFileRange")
    .Input("path: string")
    .Input("offset: int64")
    .Input("size: int64")
    .Output("contents: string")
    .SetShapeFn([](InferenceContext* c) {
      c->set_output(0, c->Scalar());
      return absl::OkStatus();
    })
    .Doc("Reads exactly `size` bytes at `offset` of a file.");

REGISTER_OP("TfGulp>DecodeHevc")
    .Input("contents: string")
    .Input("what: string")
    .Output("image: uint8")
    .Attr("track: string = 'bzna_input'")
    .Attr("crop: {'clean', 'full'} = 'clean'")
    .Attr("chroma_upsampling: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("threads: int = 1")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &unused));
      c->set_output(0, c->MakeShape({c->UnknownDim(), c->UnknownDim(), 3}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
Decodes the HEVC picture of a single-picture MP4 (a Benzina per-image sample)
to RGB [H, W, 3]: the clean aperture by default, or the full coded frame.
`what` names the sample in error messages (empty: its size).
)doc");

REGISTER_OP("TfGulp>HevcSampleSize")
    .Input("contents: string")
    .Input("what: string")
    .Output("size: int32")
    .Attr("track: string = 'bzna_input'")
    .Attr("crop: {'clean', 'full'} = 'clean'")
    .SetShapeFn([](InferenceContext* c) {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &unused));
      TF_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &unused));
      c->set_output(0, c->MakeShape({2}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
[height, width] of what DecodeHevc outputs for this sample, read from the MP4
(the sample entry's picture size and the crop) without decoding.
)doc");

REGISTER_OP("TfGulp>DecodeHevcWarped")
    .Input("contents: string")
    .Input("what: string")
    .Input("seed: int64")
    .Input("epoch: int64")
    .Input("elements: int64")
    .Output("images: output_type")
    // uint8: the samples; float: (sample - bias) * norm.
    .Attr("output_type: {uint8, float} = DT_UINT8")
    .Attr("warp: list(float) = []")
    .Attr("output_height: int >= 1")
    .Attr("output_width: int >= 1")
    .Attr("bias: list(float) = []")
    .Attr("norm: list(float) = []")
    .Attr("track: string = 'bzna_input'")
    .Attr("crop: {'clean', 'full'} = 'clean'")
    .Attr("chroma_upsampling: {'bilinear', 'nearest'} = 'bilinear'")
    .Attr("threads: int = 1")
    .SetShapeFn([](InferenceContext* c) {
      int64_t h = 0, w = 0;
      TF_RETURN_IF_ERROR(c->GetAttr("output_height", &h));
      TF_RETURN_IF_ERROR(c->GetAttr("output_width", &w));
      c->set_output(0, c->MakeShape({c->Dim(c->input(0), 0), h, w, 3}));
      return absl::OkStatus();
    })
    .Doc(R"doc(
Decodes a batch of single-picture HEVC MP4s fused with a similarity warp (see
tf_gulp.ops.decode_hevc_warped).
)doc");

}  // namespace
}  // namespace tf_gulp
