#include "cc/codec/hevc_warp.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cc/warp/color_transform.h"
#include "cc/warp/fixed_point_warp.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace codec {
namespace {

bool Affine(const double m[9]) { return m[6] == 0.0 && m[7] == 0.0 && m[8] == 1.0; }

// `to_rgb(x, y, w, h, dst)` converts a rectangle of the decoded picture.
template <typename Out, typename ToRgb>
Status WarpDecodedImpl(const ToRgb& to_rgb, const PictureRegion& region,
                       const double matrix[9], const HevcWarpTarget& target, Out* dst) {
  const PictureRegion box = SampledBox(region, matrix, target.out_height, target.out_width);
  // The converted rectangle, reused by this thread's next picture.
  thread_local std::vector<uint8_t> rgb;
  warp::WarpGeometry g;
  g.channels = 3;
  g.out_height = target.out_height;
  g.out_width = target.out_width;
  double m[9];
  std::copy(matrix, matrix + 9, m);
  if (box.width == 0) {
    // Nothing sampled lies inside the picture: a matrix that samples nowhere
    // gives every pixel the out-of-bounds colour (one dummy pixel as input).
    rgb.assign(3, 0);
    g.in_height = g.in_width = 1;
    const double nowhere[9] = {0, 0, -1e6, 0, 0, -1e6, 0, 0, 1};
    std::copy(nowhere, nowhere + 9, m);
  } else {
    rgb.resize(static_cast<size_t>(box.width) * box.height * 3);
    TFG_RETURN_IF_ERROR(to_rgb(region.x + box.x, region.y + box.y, box.width, box.height,
                               rgb.data()));
    g.in_height = box.height;
    g.in_width = box.width;
    // Region coordinates -> box coordinates: X - box.x (projective: X - box.x * W).
    for (int c = 0; c < 3; ++c) {
      m[c] -= box.x * m[6 + c];
      m[3 + c] -= box.y * m[6 + c];
    }
  }
  auto warp_into = [&](const float* bias, const float* norm, Out* out) {
    if (warp::CanWarpAffine(g, m)) {
      if constexpr (std::is_same<Out, float>::value) {
        warp::WarpAffine(g, rgb.data(), m, bias, norm, target.oob_color, out);
      } else {
        warp::WarpAffine(g, rgb.data(), m, target.oob_color, out);
      }
      return Status::Ok();
    }
    float mf[9];
    for (int i = 0; i < 9; ++i) mf[i] = static_cast<float>(m[i]);
    if constexpr (std::is_same<Out, float>::value) {
      warp::WarpRows(g, rgb.data(), mf, bias, norm, target.oob_color, 0, g.out_height, out);
    } else {
      warp::WarpRows(g, rgb.data(), mf, target.oob_color, 0, g.out_height, out);
    }
    return Status::Ok();
  };
  return warp::WarpWithColor(target.color, g.out_height * g.out_width, 3, target.bias,
                             target.norm, dst, warp_into);
}

auto DecoderRgb(const HevcDecoder& decoder, ChromaUpsampling chroma) {
  return [&decoder, chroma](int x, int y, int w, int h, uint8_t* dst) {
    return decoder.ToRgb(x, y, w, h, chroma, dst);
  };
}

auto PictureRgb(const YcbcrPicture& picture, ChromaUpsampling chroma) {
  return [&picture, chroma](int x, int y, int w, int h, uint8_t* dst) {
    RegionToRgb(picture, x, y, w, h, chroma == ChromaUpsampling::kBilinear, dst);
    return Status::Ok();
  };
}

}  // namespace

PictureRegion SampledBox(const PictureRegion& region, const double m[9], int out_height,
                         int out_width) {
  PictureRegion box;
  const int w = region.width, h = region.height;
  if (!Affine(m)) {  // a projective warp: the corners' bounding box may not hold
    box.width = w;
    box.height = h;
    return box;
  }
  // The output pixel centres map inside the parallelogram of the corners'
  // images; bilinear sampling reads floor(X) and floor(X) + 1.
  const double ox = out_width - 1.0, oy = out_height - 1.0;
  const double xs[4] = {m[2], m[0] * ox + m[2], m[1] * oy + m[2], m[0] * ox + m[1] * oy + m[2]};
  const double ys[4] = {m[5], m[3] * ox + m[5], m[4] * oy + m[5], m[3] * ox + m[4] * oy + m[5]};
  const double min_x = *std::min_element(xs, xs + 4), max_x = *std::max_element(xs, xs + 4);
  const double min_y = *std::min_element(ys, ys + 4), max_y = *std::max_element(ys, ys + 4);
  if (!(max_x >= -0.5 && min_x <= w - 0.5 && max_y >= -0.5 && min_y <= h - 0.5)) {
    return box;  // empty
  }
  auto clamp = [](double v, int lo, int hi) {
    return static_cast<int>(std::max<double>(lo, std::min<double>(hi, v)));
  };
  // One pixel of margin on every side: the warp's coordinates (float or 11-bit
  // fixed point) may round across a pixel boundary; the box's edges are never
  // sampled as the picture's edges unless they are the picture's.
  constexpr int kMargin = 1;
  box.x = clamp(std::floor(min_x) - kMargin, 0, w - 1);
  box.y = clamp(std::floor(min_y) - kMargin, 0, h - 1);
  box.width = clamp(std::floor(max_x) + 2 + kMargin, box.x + 1, w) - box.x;
  box.height = clamp(std::floor(max_y) + 2 + kMargin, box.y + 1, h) - box.y;
  return box;
}

Status WarpDecoded(const HevcDecoder& decoder, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, float* dst) {
  return WarpDecodedImpl(DecoderRgb(decoder, chroma), region, matrix, target, dst);
}

Status WarpDecoded(const HevcDecoder& decoder, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, uint8_t* dst) {
  return WarpDecodedImpl(DecoderRgb(decoder, chroma), region, matrix, target, dst);
}

template <typename Out>
Status WarpDecoded(const YcbcrPicture& picture, const PictureRegion& region,
                   ChromaUpsampling chroma, const double matrix[9],
                   const HevcWarpTarget& target, Out* dst) {
  return WarpDecodedImpl(PictureRgb(picture, chroma), region, matrix, target, dst);
}
template Status WarpDecoded(const YcbcrPicture&, const PictureRegion&, ChromaUpsampling,
                            const double[9], const HevcWarpTarget&, float*);
template Status WarpDecoded(const YcbcrPicture&, const PictureRegion&, ChromaUpsampling,
                            const double[9], const HevcWarpTarget&, uint8_t*);

}  // namespace codec
}  // namespace tfg
