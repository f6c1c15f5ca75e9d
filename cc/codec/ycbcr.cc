#include "cc/codec/ycbcr.h"

#include <cstddef>

namespace tfg {
namespace codec {

void RegionToRgb(const YcbcrPicture& p, int x, int y, int w, int h, bool bilinear,
                 uint8_t* dst) {
  for (int r = 0; r < h; ++r) {
    uint8_t* out = dst + static_cast<size_t>(r) * w * 3;
    for (int c = 0; c < w; ++c) PixelToRgb(p, x + c, y + r, bilinear, out + 3 * c);
  }
}

}  // namespace codec
}  // namespace tfg
