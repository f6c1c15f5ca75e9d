#include "cc/warp/view_crops.h"

#include <algorithm>

#include "cc/warp/similarity_transform.h"

namespace tfg {
namespace warp {

int NumViewCrops(ViewCrops crops) { return crops == ViewCrops::kThree ? 3 : 1; }

void ViewCropMatrix(ViewCrops crops, int view, int64_t in_h, int64_t in_w, int64_t out_h,
                    int64_t out_w, double m[9]) {
  const int64_t side = std::min(in_h, in_w);
  const int64_t step = (std::max(in_h, in_w) - side) / 2;
  // ThreeCrop's order: the first end, the far end (2 * step, not long - short:
  // its integer step), the centre.
  const int64_t three[3] = {0, 2 * step, step};
  const int64_t along = crops == ViewCrops::kThree ? three[view % 3] : step;
  const bool horizontal = in_w >= in_h;  // the short side is the height: move along x
  const double x0 = horizontal ? static_cast<double>(along) : 0.0;
  const double y0 = horizontal ? 0.0 : static_cast<double>(along);
  const double s = static_cast<double>(side);
  // The crop's centre relative to the frame's, in pixel-centre coordinates.
  const double cx = x0 + s / 2 - static_cast<double>(in_w) / 2;
  const double cy = y0 + s / 2 - static_cast<double>(in_h) / 2;
  AffineMatrix(static_cast<double>(in_h), static_cast<double>(in_w), static_cast<double>(out_h),
               static_cast<double>(out_w), s, s, cy, cx, 0, 0, 0, false, false,
               /*resize=*/true, /*keep_ratio=*/false, m);
}

}  // namespace warp
}  // namespace tfg
