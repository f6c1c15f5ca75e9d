// The similarity warp: for every output pixel (x, y), [X, Y, W] = M . [x, y, 1]
// gives the input pixel (X / W, Y / W) that is sampled bilinearly, rounded and
// clamped to [0, 255] and written as (v - bias) * norm in float32. Output pixels
// that map outside the input picture get `oob_color` as is (no bias or norm).
//
// The input picture covers [-0.5, width - 0.5] x [-0.5, height - 0.5] (pixel
// centres at integer coordinates); samples between the outermost centre and
// the picture's edge repeat the edge pixel. A point with W <= 0 is outside.
//
// This is the CPU reference of tf_gulp.ops.similarity_warp; the TF kernel
// (tf_gulp/ops/image/similarity_warp_op.cc) shards rows of a batch over threads and
// calls WarpRows for each shard. TensorFlow-free.
#ifndef TF_GULP_CC_WARP_SIMILARITY_WARP_H_
#define TF_GULP_CC_WARP_SIMILARITY_WARP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/util/status.h"

namespace tfg {
namespace warp {

enum class Layout { kNHWC, kNCHW };

// Parses "NHWC" / "NCHW".
Status ParseLayout(const std::string& name, Layout* layout);

// Built as an aggregate in this order ({in_height, in_width, channels,
// out_height, out_width[, layout]}) where one is made from its sizes.
struct WarpGeometry {
  int64_t in_height = 0;
  int64_t in_width = 0;
  int64_t channels = 0;
  int64_t out_height = 0;
  int64_t out_width = 0;
  Layout layout = Layout::kNHWC;  // of both the input and the output picture
};

// Checks sizes (positive, output not absurdly large) and that bias, norm and
// oob_color each hold `channels` values.
Status ValidateGeometry(const WarpGeometry& g, int64_t bias_size,
                        int64_t norm_size, int64_t oob_size);

// Checks that the 9 values of a row-major 3x3 matrix are finite.
Status ValidateMatrix(const float* matrix, int64_t index);

// Warps output rows [row_begin, row_end) of one picture. `src` is one input
// picture (in_height x in_width x channels in `layout`), `dst` one output
// picture (out_height x out_width x channels in `layout`); `matrix` is the
// row-major 3x3 matrix mapping output pixels to input pixels; `bias`, `norm`,
// `oob_color` hold `channels` values each.
void WarpRows(const WarpGeometry& g, const uint8_t* src, const float* matrix,
              const float* bias, const float* norm, const float* oob_color,
              int64_t row_begin, int64_t row_end, float* dst);

// The same into uint8 pictures: each sample rounded and clamped to [0, 255]
// is written as is (no bias or norm); out-of-bounds pixels get `oob_color`
// rounded and clamped.
void WarpRows(const WarpGeometry& g, const uint8_t* src, const float* matrix,
              const float* oob_color, int64_t row_begin, int64_t row_end,
              uint8_t* dst);

// Whole picture: WarpRows over every output row.
inline void WarpPicture(const WarpGeometry& g, const uint8_t* src,
                        const float* matrix, const float* bias,
                        const float* norm, const float* oob_color,
                        float* dst) {
  WarpRows(g, src, matrix, bias, norm, oob_color, 0, g.out_height, dst);
}

}  // namespace warp
}  // namespace tfg

#endif  // TF_GULP_CC_WARP_SIMILARITY_WARP_H_
