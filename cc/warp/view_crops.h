// The fixed spatial views a video model is evaluated on (mmaction2's
// ThreeCrop, and its centre crop): squares of the frame's short side, each
// resized to the output, as warp matrices (similarity_transform.h's
// conventions). TensorFlow-free.
#ifndef TF_GULP_CC_WARP_VIEW_CROPS_H_
#define TF_GULP_CC_WARP_VIEW_CROPS_H_

#include <cstdint>

namespace tfg {
namespace warp {

enum class ViewCrops { kNone = 0, kCenter = 1, kThree = 2 };

// How many views: 1 (none, center) or 3 (three).
int NumViewCrops(ViewCrops crops);

// The square of side min(in_h, in_w) of view `view` along the long side, at
// mmaction2 ThreeCrop's offsets, in its order: 0 (left or top), 2 * step
// (right or bottom), step (centre), with step = (long - short) // 2; kCenter's
// one view is the centre one. `m` maps output pixels of (out_h, out_w) into it.
void ViewCropMatrix(ViewCrops crops, int view, int64_t in_h, int64_t in_w, int64_t out_h,
                    int64_t out_w, double m[9]);

}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_VIEW_CROPS_H_
