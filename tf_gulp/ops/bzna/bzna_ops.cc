// The Benzina ops' registrations: names, inputs, outputs, attrs and shape
// functions, apart from their kernels (as tensorflow-io keeps `ops/` apart
// from `kernels/`); names and attr tables in bzna_ops.h. Op names are recorded in dataset graphs, checkpoints and
// SavedModels, so they never change (tests/test_op_names.py), except the
// `InternalTesting` ones: shipped for tests and benchmarks only, named so that
// no one builds on them, free to change.
//
//   BenzinaDataset                           bzna_dataset_op.cc
//   InternalTestingBznaTrackIndex,
//   InternalTestingBznaIndexCacheStats       bzna_index_op.cc
//   DecodeHevc, HevcSampleSize               decode_hevc_op.cc (GPU: decode_hevc_gpu_op.cc)
//   DecodeHevcWarped                         decode_hevc_warped_op.cc
//                                            (GPU: decode_hevc_warped_gpu_op.cc)
#include <cstdint>
#include <vector>

#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tf_gulp/ops/bzna/bzna_ops.h"
#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/framework/dataset_shapes.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/fused_warp_op.h"

namespace tf_gulp {
namespace {

using ::tensorflow::shape_inference::DimensionHandle;
using ::tensorflow::shape_inference::InferenceContext;
using ::tensorflow::shape_inference::ShapeHandle;

constexpr int64_t kAny = InferenceContext::kUnknownDim;

// The shape function of an op whose first `scalars` inputs are scalars (a
// graph giving one of another rank fails when it is built) and whose output k
// has the dimensions outputs[k] (kAny: not known before the kernel runs).
::tensorflow::OpShapeInferenceFn ScalarInputsShape(
    int scalars, std::vector<std::vector<int64_t>> outputs) {
  return [scalars, outputs](InferenceContext* c) -> absl::Status {
    ShapeHandle unused;
    for (int i = 0; i < scalars; ++i) TF_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &unused));
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::vector<DimensionHandle> dims;
      for (int64_t d : outputs[k]) dims.push_back(c->MakeDim(d));
      c->set_output(static_cast<int>(k), c->MakeShape(dims));
    }
    return absl::OkStatus();
  };
}

REGISTER_OP(kBznaTrackIndexOp)
    .Input("path: string")
    .Input("track: string")  // the hdlr name of the track
    .Output("offsets: int64")
    .Output("sizes: int64")
    .SetShapeFn(ScalarInputsShape(2, {{kAny}, {kAny}}))
    .Doc("For tests: byte ranges of the samples of an MP4 track found by its hdlr name.");

TF_GULP_REGISTER_OP_WITH_ATTRS(kBznaDatasetOp, BznaDatasetAttrs)
    .Input("path: string")
    .Output("handle: variant")
    // Source datasets are stateful so graph optimizations never constant-fold
    // or deduplicate them.
    .SetIsStateful()
    .SetShapeFn(DatasetShape</*input=*/0, /*rank=*/0>)
    .Doc(R"doc(
Reads the entries [start, stop) of a Benzina container as a dataset of
(epoch, index, label, sample[, what]): each entry's per-image MP4 and target.
See tf_gulp.BenzinaDataset for the options.
)doc");

REGISTER_OP(kBznaIndexCacheStatsOp)
    .Output("reads_and_hits: int64")
    .SetIsStateful()  // its value changes between calls: never constant-folded
    .SetShapeFn(ScalarInputsShape(0, {{2}}))
    .Doc("For tests: [reads, hits] of this process's Benzina entry index cache.");

TF_GULP_REGISTER_OP_WITH_ATTRS(kDecodeHevcOp, HevcDecodeAttrs)
    .Input("contents: string")
    .Input("what: string")
    .Input("max_size: int32")
    .Output("image: uint8")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      ShapeHandle unused;
      TF_RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &unused));
      return ScalarInputsShape(2, {{kAny, kAny, 3}})(c);
    })
    .Doc(R"doc(
Decodes the HEVC picture of a single-picture MP4 (a Benzina per-image sample)
to RGB [H, W, 3]: the clean aperture by default, or the full coded frame.
`what` names the sample in error messages (empty: its size). `max_size`:
[height, width], the largest coded size of the pictures decoded with this one
(HevcSampleSize with crop 'coded'; [0, 0]: unknown): the GPU kernel creates its
NVDEC decoders that large, so a larger picture later needs no new decoder.
)doc");

TF_GULP_REGISTER_OP_WITH_ATTRS(kHevcSampleSizeOp, HevcSizeAttrs)
    .Input("contents: string")
    .Input("what: string")
    .Output("size: int32")
    .SetShapeFn(ScalarInputsShape(2, {{2}}))
    .Doc(R"doc(
[height, width] of what DecodeHevc outputs for this sample, read from the MP4
(the sample entry's picture size and the crop) without decoding; crop 'coded':
the size the picture is coded at (its SPS), which DecodeHevc's max_size takes.
)doc");

TF_GULP_REGISTER_FUSED_WARP_OP(kDecodeHevcWarpedOp, DecodeHevcWarpedAttrs)
    .SetShapeFn([](InferenceContext* c) { return FusedWarpShape(c, 3); })
    .Doc(R"doc(
Decodes a batch of single-picture HEVC MP4s fused with a similarity warp (see
tf_gulp.ops.decode_hevc_warped).
)doc");

}  // namespace
}  // namespace tf_gulp
