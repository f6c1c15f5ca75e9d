#include "cc/gpu/nvdec_warp.h"

#include "cc/gpu/color_plan.h"

namespace tfg {
namespace gpu {

Status DecodeWarped(NvdecRgbDecoder* decoder, const uint8_t* data, size_t size, CUstream stream,
                    const char* what, const WarpPlanner& plan,
                    const warp::ColorDraw* color) {
  return decoder->DecodeThen(
      data, size, stream, what, [&](CUcontext context, const NvdecPicture& picture) {
        RegionWarp warp;
        CUdeviceptr dst = 0;
        TFG_RETURN_IF_ERROR(plan(picture.width, picture.height, &warp, &dst));
        if (warp.x0 < 0 || warp.y0 < 0 || warp.width < 1 || warp.height < 1 ||
            warp.x0 + warp.width > picture.width || warp.y0 + warp.height > picture.height) {
          return InvalidArgumentError(what, ": region ", warp.width, "x", warp.height, " at (",
                                      warp.x0, ", ", warp.y0, ") is outside the decoded ",
                                      picture.width, "x", picture.height, " picture");
        }
        if (warp.out_height < 1 || warp.out_width < 1) {
          return InvalidArgumentError(what, ": the warp's output is ", warp.out_height, "x",
                                      warp.out_width, " pixels");
        }
        codec::YcbcrPicture ycbcr = YcbcrOf(picture);
        if (!HasColor(color)) {
          void* args[] = {&ycbcr, &warp, &dst};
          return decoder->Launch(context, "tfg_decode_warp_ycbcr", DecodeWarpLaunchDims(warp),
                                 args, stream, what);
        }
        RegionWarp levels = LevelsWarp(warp);
        void* args[] = {&ycbcr, &levels, &dst};
        TFG_RETURN_IF_ERROR(decoder->Launch(context, "tfg_decode_warp_ycbcr",
                                            DecodeWarpLaunchDims(warp), args, stream, what));
        ColorPlan plan_color = ColorPlanOf(*color, warp);
        void* color_args[] = {&plan_color, &dst};
        return decoder->Launch(context, "tfg_color_levels", ColorLaunchDims(), color_args, stream,
                               what);
      });
}

}  // namespace gpu
}  // namespace tfg
