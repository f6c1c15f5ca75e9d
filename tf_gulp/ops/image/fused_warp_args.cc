// The fused decode + warp ops' shared plumbing (fused_warp_args.h).
#include "tf_gulp/ops/image/fused_warp_args.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cc/util/stateless_random.h"
#include "tensorflow/core/util/work_sharder.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/scalar_inputs.h"

namespace tf_gulp {
namespace {

// Empty: every channel `fallback`; one value: every channel that value.
absl::Status PerChannel(const std::vector<float>& v, float fallback, const char* op,
                        const char* name, int channels, std::vector<float>* out) {
  if (v.empty()) {
    out->assign(channels, fallback);
  } else if (v.size() == 1) {
    out->assign(channels, v[0]);
  } else if (static_cast<int>(v.size()) == channels) {
    *out = v;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", name,
                                                    " must be one value or one per channel (",
                                                    channels, "), got ", v.size()));
  }
  return absl::OkStatus();
}

// InvalidArgument unless input `index` is a vector as long as contents.
absl::Status LikeContents(::tensorflow::OpKernelContext* ctx, int index, const char* op,
                          const char* name) {
  const ::tensorflow::Tensor& t = ctx->input(index);
  if (t.dims() == 1 && t.dim_size(0) == ctx->input(0).dim_size(0)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(op, ": ", name, " must be [B] like contents"));
}

}  // namespace

absl::Status WarpTransformAttrs::Parse(const char* op) {
  if (output_height <= 0 || output_width <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": shape must be (height, width), both positive; got ",
                                                    output_height, "x", output_width));
  }
  return ToTfStatus(tfg::warp::ParseTransformSpec(warp, &spec));
}

void WarpTransformAttrs::Matrix(uint64_t seed, uint64_t epoch, int64_t element,
                                int64_t in_height, int64_t in_width, double m[9]) const {
  tfg::warp::TransformMatrix(spec, tfg::HashKey({seed, epoch, static_cast<uint64_t>(element)}),
                             in_height, in_width, output_height, output_width, m);
}

tfg::warp::ColorDraw FusedWarpAttrs::Color(uint64_t seed, uint64_t epoch,
                                           int64_t element) const {
  return tfg::warp::DrawColor(color_spec,
                              tfg::HashKey({seed, epoch, static_cast<uint64_t>(element)}));
}

absl::Status FusedWarpAttrs::Parse(const char* op, int output_channels) {
  TF_RETURN_IF_ERROR(WarpTransformAttrs::Parse(op));
  TF_RETURN_IF_ERROR(ToTfStatus(tfg::warp::ParseColorSpec(color, &color_spec)));
  channels = output_channels;
  float_output = output_type == ::tensorflow::DT_FLOAT;
  TF_RETURN_IF_ERROR(PerChannel(bias, 0.f, op, "bias", channels, &channel_bias));
  TF_RETURN_IF_ERROR(PerChannel(norm, 1.f, op, "norm", channels, &channel_norm));
  oob_color.assign(channels, 0.f);
  return absl::OkStatus();
}

void ComputeFusedWarpBatch(::tensorflow::OpKernelContext* ctx, const char* op,
                           const FusedWarpAttrs& attrs,
                           std::initializer_list<const char*> per_picture,
                           int64_t cycles_per_picture, const DecodeWarpedFn& decode,
                           ::tensorflow::Tensor* into) {
  const ::tensorflow::Tensor& contents = ctx->input(0);
  OP_REQUIRES(ctx, contents.dims() == 1,
              absl::InvalidArgumentError(absl::StrCat(op, ": contents must be [B] strings")));
  int input = 1;
  for (const char* name : per_picture) OP_REQUIRES_OK(ctx, LikeContents(ctx, input++, op, name));
  const int seed_input = input, epoch_input = input + 1, elements_input = input + 2;
  OP_REQUIRES_OK(ctx, LikeContents(ctx, elements_input, op, "elements"));
  FusedWarpPicture first;
  first.attrs = &attrs;
  OP_REQUIRES_OK(ctx, ScalarInput<int64_t>(ctx, seed_input, op, "seed", &first.seed));
  OP_REQUIRES_OK(ctx, ScalarInput<int64_t>(ctx, epoch_input, op, "epoch", &first.epoch));
  const int64_t batch = contents.dim_size(0);
  first.output = into;
  if (into == nullptr) {
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            0, ::tensorflow::TensorShape({batch, attrs.output_height,
                                                          attrs.output_width, attrs.channels}),
                            &first.output));
  }
  const auto in = contents.flat<::tensorflow::tstring>();
  const auto elements = ctx->input(elements_input).flat<int64_t>();
  const size_t values = static_cast<size_t>(attrs.output_height) * attrs.output_width * attrs.channels;
  std::vector<tfg::Status> statuses(batch);
  auto work = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      FusedWarpPicture picture = first;
      picture.element = elements(i);
      picture.offset = i * values;
      statuses[i] = decode(i, in(i), picture);
    }
  };
  auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
  ::tensorflow::Shard(threads->num_threads, threads->workers, batch, cycles_per_picture, work);
  for (int64_t i = 0; i < batch; ++i) {
    if (!statuses[i].ok()) {
      // The message names the picture (the core's `what`); the prefix its place in the batch.
      const absl::Status status = ToTfStatus(statuses[i]);
      ctx->SetStatus(absl::Status(status.code(), absl::StrCat(op, ": picture ", i, " (element ",
                                                              elements(i), "): ",
                                                              status.message())));
      return;
    }
  }
}

absl::Status FusedWarpShape(::tensorflow::shape_inference::InferenceContext* c, int channels) {
  ::tensorflow::shape_inference::ShapeHandle contents;
  // Rank 1: the batch's size is its first dimension (a scalar has none).
  TF_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &contents));
  int64_t h = 0, w = 0;
  TF_RETURN_IF_ERROR(c->GetAttr("output_height", &h));
  TF_RETURN_IF_ERROR(c->GetAttr("output_width", &w));
  c->set_output(0, c->MakeShape({c->Dim(contents, 0), h, w, channels}));
  return absl::OkStatus();
}

}  // namespace tf_gulp
