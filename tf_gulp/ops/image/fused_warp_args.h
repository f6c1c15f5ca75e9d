// What the fused decode + warp ops share, written once. DecodeJpegWarped
// (decode_jpeg_warped_op.cc) and DecodeHevcWarped (decode_hevc_warped_op.cc)
// decode a batch of pictures, each only as far as its warp samples it, straight
// into the output: their common attrs (warp, output_height, output_width,
// output_type, bias, norm) are declared and checked here, each picture's matrix is
// drawn from (seed, epoch, element) as SimilarityTransformMatrices draws it,
// and the batch is checked, allocated, run picture by picture over
// TensorFlow's intra-op threads and its first failure named by its place in
// the batch. The ops' output shape function is here too (image_ops.cc,
// bzna_ops.cc). GulpDataset's fused decode visits the same table
// (gulp/gulp_ops.h).
#ifndef TF_GULP_OPS_IMAGE_FUSED_WARP_ARGS_H_
#define TF_GULP_OPS_IMAGE_FUSED_WARP_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include "absl/status/status.h"
#include "cc/util/status.h"
#include "cc/warp/color_transform.h"
#include "cc/warp/similarity_transform.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/types.pb.h"

namespace tf_gulp {

// The attrs that say which transform each element gets, declared once
// (framework/attr_table.h) and visited by every op that draws transforms:
// SimilarityTransformMatrices, DecodeJpegWarped, DecodeHevcWarped and
// GulpDataset's fused decode.
struct WarpTransformAttrs {
  std::vector<float> warp;  // a tf_gulp.transforms encoding; [] for the whole picture
  // The output size; 0 x 0 where it is optional (GulpDataset: no fused decode).
  int64_t output_height = 0, output_width = 0;
  tfg::warp::TransformSpec spec;  // `warp` parsed, by Parse

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("warp", "list(float) = []", a.warp);
    visit("output_height", "int >= 0 = 0", a.output_height);
    visit("output_width", "int >= 0 = 0", a.output_width);
  }

  // Checks the size (both positive) and parses the transform; `op` begins the
  // messages ("decode_jpeg_warped").
  absl::Status Parse(const char* op);

  // The matrix (output pixel -> input pixel) of `element` for a picture of
  // in_height x in_width: a pure function of (seed, epoch, element).
  void Matrix(uint64_t seed, uint64_t epoch, int64_t element, int64_t in_height,
              int64_t in_width, double m[9]) const;
};

// The fused output stage's attrs: the transform's, plus output_type, bias and
// norm (one value for every channel, or one per channel) and the colour
// transforms (color). Declared once and visited by the three ops that decode
// fused with a warp (DecodeJpegWarped, DecodeHevcWarped, GulpDataset).
struct FusedWarpAttrs : WarpTransformAttrs {
  ::tensorflow::DataType output_type = ::tensorflow::DT_UINT8;  // uint8 or float32
  std::vector<float> bias, norm;  // as the attrs say: [], one value, or one per channel

  // Derived by Parse: one value per channel each.
  int channels = 3;
  bool float_output = false;
  std::vector<float> channel_bias, channel_norm, oob_color;
  std::vector<float> color;  // a tf_gulp.transforms colour encoding; [] for none
  tfg::warp::ColorSpec color_spec;  // `color` parsed, by Parse

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    // uint8: the samples; float: (sample - bias) * norm.
    visit("output_type", "{uint8, float} = DT_UINT8", a.output_type);
    WarpTransformAttrs::ForEachAttr(a, visit);
    visit("bias", "list(float) = []", a.bias);
    visit("norm", "list(float) = []", a.norm);
    // ColorJitter / RandomGrayscale, applied to the warped samples before bias and norm.
    visit("color", "list(float) = []", a.color);
  }

  // The colour steps of `element`, drawn from the key its matrix is drawn from.
  tfg::warp::ColorDraw Color(uint64_t seed, uint64_t epoch, int64_t element) const;

  // `op` begins the messages ("decode_jpeg_warped"); `channels`: the output's.
  absl::Status Parse(const char* op, int channels);

  // The output size, bias, norm and out-of-bounds colour of a core warp
  // target (cc/codec/jpeg_warp.h's WarpTarget, hevc_warp.h's HevcWarpTarget).
  template <typename Target>
  void FillTarget(Target* target) const {
    target->out_height = static_cast<int>(output_height);
    target->out_width = static_cast<int>(output_width);
    target->bias = channel_bias.data();
    target->norm = channel_norm.data();
    target->oob_color = oob_color.data();
  }
};

// A fused op's attrs (DecodeJpegWarped's, DecodeHevcWarped's: FusedWarpAttrs
// plus `Extra`'s table), read by ReadAttrs and parsed by Parse(op, channels).
template <typename Extra>
struct FusedOpAttrs : FusedWarpAttrs {
  Extra extra;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    FusedWarpAttrs::ForEachAttr(a, visit);
    Extra::ForEachAttr(a.extra, visit);
  }
};

// One picture of a batch: where its output goes and which matrix it gets.
struct FusedWarpPicture {
  const FusedWarpAttrs* attrs = nullptr;
  uint64_t seed = 0, epoch = 0;
  int64_t element = 0;
  ::tensorflow::Tensor* output = nullptr;
  size_t offset = 0;  // of its first value in `output`

  void Matrix(int64_t in_height, int64_t in_width, double m[9]) const {
    attrs->Matrix(seed, epoch, element, in_height, in_width, m);
  }

  tfg::warp::ColorDraw Color() const { return attrs->Color(seed, epoch, element); }

  // write(float*) or write(uint8_t*) with the picture's place in the output,
  // as output_type says.
  template <typename Fn>
  tfg::Status Write(Fn write) const {
    if (attrs->float_output) return write(output->flat<float>().data() + offset);
    return write(output->flat<uint8_t>().data() + offset);
  }
};

// Decodes and warps picture `index` of the batch, whose bytes are `contents`.
using DecodeWarpedFn = std::function<tfg::Status(
    int64_t index, const ::tensorflow::tstring& contents, const FusedWarpPicture& picture)>;

// The fused op's Compute. Inputs: contents, [B] strings (input 0); then the
// op's other per-picture inputs, [B] each, named by `per_picture` (HEVC's
// `what`); then seed and epoch (scalars) and elements ([B]). Allocates
// output 0, [B, output_height, output_width, channels], and runs `decode` on
// each picture over the intra-op threads (`cycles_per_picture` guides the
// sharding). A failure is reported with its code as
// "<op>: picture <i> (element <e>): <message>". `into`: a tensor of output
// 0's shape to write instead (a GPU kernel's CPU fallback: pinned host memory
// it then copies to output 0, which it allocated).
void ComputeFusedWarpBatch(::tensorflow::OpKernelContext* ctx, const char* op,
                           const FusedWarpAttrs& attrs,
                           std::initializer_list<const char*> per_picture,
                           int64_t cycles_per_picture, const DecodeWarpedFn& decode,
                           ::tensorflow::Tensor* into = nullptr);

// The fused ops' output shape: [B, output_height, output_width, channels],
// B from contents ([B]).
absl::Status FusedWarpShape(::tensorflow::shape_inference::InferenceContext* c, int channels);

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_IMAGE_FUSED_WARP_ARGS_H_
