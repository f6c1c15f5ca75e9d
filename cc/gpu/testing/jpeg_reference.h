// The warp of the device check's JPEG references (data/jpeg_ref/, written by
// make_jpeg_reference.cc): what the generator and the nvjpeg phase share, so
// both draw the same crop for reference `index`. The GPU JPEG path's unit tests
// (decode_jpeg_warped_body_test, jpeg_warp_gpu_test) draw with the same spec:
// they compare the GPU path with the CPU one under any spec.
#ifndef TF_GULP_CC_GPU_TESTING_JPEG_REFERENCE_H_
#define TF_GULP_CC_GPU_TESTING_JPEG_REFERENCE_H_

#include "cc/gpu/decode_jpeg_warped_body.h"
#include "cc/util/stateless_random.h"

namespace tfg {
namespace gpu {
namespace testing {

constexpr int kReferenceOut = 112;

// Random crops with rotation and flips, as training draws them.
inline warp::TransformSpec ReferenceSpec() {
  warp::TransformSpec spec;
  spec.kind = warp::TransformSpec::Kind::kSimilarity;
  spec.similarity.scale_lo = 0.25;
  spec.similarity.scale_hi = 1.0;
  spec.similarity.degrees_lo = -15;
  spec.similarity.degrees_hi = 15;
  spec.similarity.flip_h = 0.5;
  spec.similarity.resize = true;
  spec.similarity.random_crop = true;
  return spec;
}

// Reference `index`'s warp of a width x height picture: uint8 output.
inline void ReferenceWarp(int index, int width, int height, RegionWarp* w) {
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, oob[3] = {0, 0, 0};
  PlanClipWarp(ReferenceSpec(), HashKey({1, 0, static_cast<uint64_t>(index)}), width, height,
               kReferenceOut, kReferenceOut, zero, one, oob, w);
  w->u8_output = 1;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_JPEG_REFERENCE_H_
