#include "cc/gpu/decode_jpeg_warped_body.h"

#include <string>
#include <utility>

#include "cc/gpu/color_plan.h"
#include "cc/gpu/context_scope.h"
#include "cc/gpu/launch_geometry.h"
#include "cc/gpu/nvdec_pool.h"  // CudaCallError

namespace tfg {
namespace gpu {

namespace {

Status Launch(const JpegWarpGpu& gpu, CUcontext context, const char* name, const LaunchDims& d,
              void** args, CUstream stream, const char* what) {
  CUfunction kernel = nullptr;
  TFG_RETURN_IF_ERROR(gpu.modules->Get(context, name, &kernel));
  const CUresult r = gpu.cuda.cuLaunchKernel(kernel, d.grid_x, d.grid_y, d.grid_z, d.block_x,
                                             d.block_y, d.block_z, 0, stream, args, nullptr);
  if (r != CUDA_SUCCESS) {
    return CudaCallError(gpu.cuda, r, (std::string("cuLaunchKernel(") + name + ")").c_str(), what);
  }
  return Status::Ok();
}

// The fused warp of one frame; with `color` (steps drawn for its clip) the
// warp writes levels and tfg_color_levels, behind it on the stream, colours
// them and applies the warp's bias and norm (color_plan.h).
Status LaunchWarp(const JpegWarpGpu& gpu, CUcontext context, codec::YcbcrPicture picture,
                  RegionWarp warp, const warp::ColorDraw* color, CUdeviceptr dst,
                  CUstream stream, const char* what) {
  ContextScope scope(gpu.cuda, context);
  if (!scope.pushed()) return CudaCallError(gpu.cuda, scope.result(), "cuCtxPushCurrent", what);
  const LaunchDims d = WarpLaunchDims(warp.out_height, warp.out_width, 1);
  RegionWarp levels = HasColor(color) ? LevelsWarp(warp) : warp;
  void* args[] = {&picture, &levels, &dst};
  TFG_RETURN_IF_ERROR(Launch(gpu, context, "tfg_decode_warp_ycbcr", d, args, stream, what));
  if (!HasColor(color)) return Status::Ok();
  ColorPlan plan = ColorPlanOf(*color, warp);
  void* color_args[] = {&plan, &dst};
  return Launch(gpu, context, "tfg_color_levels", ColorLaunchDims(), color_args, stream, what);
}

Status CheckRegion(const RegionWarp& w, int width, int height, const char* what) {
  if (w.x0 < 0 || w.y0 < 0 || w.width < 1 || w.height < 1 || w.x0 + w.width > width ||
      w.y0 + w.height > height) {
    return InvalidArgumentError(what, ": region ", w.width, "x", w.height, " at (", w.x0, ", ",
                                w.y0, ") is outside the decoded ", width, "x", height,
                                " picture");
  }
  if (w.out_height < 1 || w.out_width < 1) {
    return InvalidArgumentError(what, ": the warp's output is ", w.out_height, "x",
                                w.out_width, " pixels");
  }
  return Status::Ok();
}

}  // namespace

void PlanClipWarp(const warp::TransformSpec& spec, uint64_t key, int width, int height,
                  int out_height, int out_width, const float bias[3], const float norm[3],
                  const float oob_color[3], RegionWarp* w) {
  double m[9];
  warp::TransformMatrix(spec, key, height, width, out_height, out_width, m);
  *w = RegionWarp();
  w->width = width;
  w->height = height;
  for (int i = 0; i < 9; ++i) w->matrix[i] = static_cast<float>(m[i]);
  for (int c = 0; c < 3; ++c) {
    w->bias[c] = bias[c];
    w->norm[c] = norm[c];
    w->oob_color[c] = oob_color[c];
  }
  w->out_height = out_height;
  w->out_width = out_width;
  w->bilinear_chroma = 1;
}

std::vector<Status> DecodeJpegWarpedNow(const JpegWarpGpu& gpu, const JpegClipBatch& b) {
  const int64_t n = static_cast<int64_t>(b.frames.size());
  std::vector<Status> statuses(n);
  const int64_t t = std::max(1, b.frames_per_clip);
  if (n % t != 0) {
    for (auto& s : statuses) {
      s = InvalidArgumentError(n, " frames are not clips of ", t, " frames");
    }
    return statuses;
  }
  if (!b.colors.empty() && static_cast<int64_t>(b.colors.size()) != n / t) {
    for (auto& s : statuses) {
      s = InvalidArgumentError(b.colors.size(), " colour draws for ", n / t, " clips");
    }
    return statuses;
  }
  CUcontext context = nullptr;
  const CUresult got = gpu.cuda.cuStreamGetCtx(b.stream, &context);
  if (got != CUDA_SUCCESS) {
    const Status s = CudaCallError(gpu.cuda, got, "cuStreamGetCtx", "the JPEG batch");
    for (auto& st : statuses) st = s;
    return statuses;
  }
  std::vector<DecodedJpeg> decoded;
  {
    // nvJPEG queues on the stream's context, which must be current.
    ContextScope scope(gpu.cuda, context);
    gpu.decoder->DecodeBatch(b.frames, b.stream, b.allocate, &decoded, &statuses);
  }
  for (int64_t clip = 0; clip * t < n; ++clip) {
    RegionWarp warp;
    bool planned = false;
    Status planned_status;
    int clip_w = 0, clip_h = 0;
    for (int64_t i = clip * t; i < (clip + 1) * t; ++i) {
      const JpegInput& in = b.frames[i];
      if (!statuses[i].ok()) {
        if (statuses[i].code() == StatusCode::kOutOfRange && b.on_host) {
          statuses[i] = b.on_host(i, statuses[i]);
        }
        continue;
      }
      const DecodedJpeg& d = decoded[i];
      if (!planned) {
        planned = true;
        clip_w = d.width;
        clip_h = d.height;
        planned_status = b.plan(clip, d.width, d.height, &warp);
        if (planned_status.ok()) {
          planned_status = CheckRegion(warp, d.width, d.height, in.what.c_str());
        }
      }
      if (!planned_status.ok()) {
        statuses[i] = planned_status;
        continue;
      }
      if (d.width != clip_w || d.height != clip_h) {
        statuses[i] = InvalidArgumentError(in.what, ": a ", d.width, "x", d.height,
                                           " frame in a clip whose first frame is ", clip_w,
                                           "x", clip_h);
        continue;
      }
      statuses[i] = LaunchWarp(gpu, context, d.planes, warp,
                               b.colors.empty() ? nullptr : &b.colors[clip], b.dst(i), b.stream,
                               in.what.c_str());
    }
  }
  return statuses;
}

void DecodeJpegWarpedBatch(const JpegWarpGpu* gpu, TaskThreads* threads,
                           std::shared_ptr<JpegClipBatch> batch, FrameStatuses done) {
  threads->Schedule([gpu, batch = std::move(batch), done = std::move(done)] {
    done(DecodeJpegWarpedNow(*gpu, *batch));
  });
}

}  // namespace gpu
}  // namespace tfg
