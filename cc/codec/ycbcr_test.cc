#include "cc/codec/ycbcr.h"

#include <gtest/gtest.h>

#include <vector>

namespace tfg {
namespace codec {
namespace {

TEST(YcbcrTest, RangesMapBlackWhiteAndGray) {
  uint8_t rgb[3];
  const YcbcrMatrix full = MakeYcbcrMatrix(YcbcrStandard::kBt601, /*full_range=*/true);
  YcbcrToRgb(full, 128, 128, 128, rgb);
  EXPECT_EQ(rgb[0], 128);
  EXPECT_EQ(rgb[1], 128);
  EXPECT_EQ(rgb[2], 128);
  for (YcbcrStandard s : {YcbcrStandard::kBt601, YcbcrStandard::kBt709, YcbcrStandard::kBt2020}) {
    const YcbcrMatrix limited = MakeYcbcrMatrix(s, /*full_range=*/false);
    YcbcrToRgb(limited, 16, 128, 128, rgb);
    EXPECT_EQ(rgb[0] + rgb[1] + rgb[2], 0);
    YcbcrToRgb(limited, 235, 128, 128, rgb);
    EXPECT_EQ(rgb[0] + rgb[1] + rgb[2], 3 * 255);
  }
}

TEST(YcbcrTest, RedIsRedInEveryMatrix) {
  // Limited-range Y'CbCr of pure red for each matrix: Y = 16 + 219 kr,
  // Cr = 128 + 112.
  struct Case { YcbcrStandard s; double kr; } cases[] = {
      {YcbcrStandard::kBt601, 0.299}, {YcbcrStandard::kBt709, 0.2126},
      {YcbcrStandard::kBt2020, 0.2627}};
  for (const Case& c : cases) {
    const double kb = c.s == YcbcrStandard::kBt601 ? 0.114
                      : c.s == YcbcrStandard::kBt709 ? 0.0722 : 0.0593;
    const float y = static_cast<float>(16 + 219 * c.kr);
    const float cb = static_cast<float>(128 - 112 * c.kr / (1 - kb));
    uint8_t rgb[3];
    YcbcrToRgb(MakeYcbcrMatrix(c.s, false), y, cb, 240, rgb);
    EXPECT_NEAR(rgb[0], 255, 1);
    EXPECT_NEAR(rgb[1], 0, 1);
    EXPECT_NEAR(rgb[2], 0, 1);
  }
}

TEST(YcbcrTest, ChromaTapsOf420) {
  // Nearest: chroma sample i / 2.
  EXPECT_EQ(ChromaTapFor(5, 1, 4, false).i0, 2);
  EXPECT_EQ(ChromaTapFor(5, 1, 4, false).a, 0.f);
  // Bilinear, chroma centred between luma samples: luma 0 sits at chroma
  // -0.25 (clamped to the edge), luma 1 at 0.25, luma 2 at 0.75.
  ChromaTap t = ChromaTapFor(0, 1, 4, true);
  EXPECT_EQ(t.i0, 0);
  EXPECT_EQ(t.i1, 0);
  t = ChromaTapFor(1, 1, 4, true);
  EXPECT_EQ(t.i0, 0);
  EXPECT_EQ(t.i1, 1);
  EXPECT_FLOAT_EQ(t.a, 0.25f);
  t = ChromaTapFor(2, 1, 4, true);
  EXPECT_FLOAT_EQ(t.a, 0.75f);
  t = ChromaTapFor(7, 1, 4, true);  // past the last chroma sample: the edge
  EXPECT_EQ(t.i0, 3);
  EXPECT_EQ(t.i1, 3);
  // 4:4:4: no subsampling.
  EXPECT_EQ(ChromaTapFor(3, 0, 4, true).i0, 3);
}

TEST(YcbcrTest, Nv12AndPlanarLayoutsGiveTheSamePixels) {
  const int w = 6, h = 4, cw = 3, ch = 2;
  std::vector<uint8_t> luma(w * h), cb(cw * ch), cr(cw * ch), nv12(cw * ch * 2);
  for (int i = 0; i < w * h; ++i) luma[i] = static_cast<uint8_t>(20 + 9 * i);
  for (int i = 0; i < cw * ch; ++i) {
    cb[i] = static_cast<uint8_t>(60 + 23 * i);
    cr[i] = static_cast<uint8_t>(200 - 17 * i);
    nv12[2 * i] = cb[i];
    nv12[2 * i + 1] = cr[i];
  }
  YcbcrPicture planar;
  planar.width = w;
  planar.height = h;
  planar.y = luma.data();
  planar.y_stride = w;
  planar.cb = cb.data();
  planar.cr = cr.data();
  planar.cb_stride = planar.cr_stride = cw;
  planar.chroma_width = cw;
  planar.chroma_height = ch;
  planar.matrix = MakeYcbcrMatrix(YcbcrStandard::kBt709, false);
  YcbcrPicture semi = planar;
  semi.cb = nv12.data();
  semi.cr = nv12.data() + 1;
  semi.cb_stride = semi.cr_stride = 2 * cw;
  semi.chroma_step = 2;
  for (bool bilinear : {false, true}) {
    std::vector<uint8_t> a(w * h * 3), b(w * h * 3);
    RegionToRgb(planar, 0, 0, w, h, bilinear, a.data());
    RegionToRgb(semi, 0, 0, w, h, bilinear, b.data());
    EXPECT_EQ(a, b) << bilinear;
  }
  // A gray picture (no chroma planes) only rescales luma.
  YcbcrPicture gray = planar;
  gray.cb = gray.cr = nullptr;
  uint8_t rgb[3];
  PixelToRgb(gray, 0, 0, false, rgb);
  EXPECT_EQ(rgb[0], RoundClamp255((luma[0] - 16.f) * 255.f / 219.f));
  EXPECT_EQ(rgb[0], rgb[2]);
}

// RegionToRgb's row-wise fast path must make PixelToRgb's pixels exactly:
// random bytes (so out-of-range values clamp), odd sizes, regions off the
// origin, every subsampling, both layouts, both upsamplings, every matrix.
TEST(YcbcrTest, RegionToRgbEqualsPixelToRgbEverywhere) {
  uint32_t state = 12345;
  auto next = [&state]() {
    state = state * 1664525u + 1013904223u;
    return static_cast<uint8_t>(state >> 24);
  };
  const int w = 37, h = 23;
  for (int shift_x = 0; shift_x <= 1; ++shift_x) {
    for (int shift_y = 0; shift_y <= shift_x; ++shift_y) {
      for (int step = 1; step <= 2; ++step) {
        const int cw = (w + (1 << shift_x) - 1) >> shift_x;
        const int ch = (h + (1 << shift_y) - 1) >> shift_y;
        std::vector<uint8_t> luma((w + 3) * h), chroma(2 * (cw * step + 5) * ch);
        for (auto& v : luma) v = next();
        for (auto& v : chroma) v = next();
        YcbcrPicture p;
        p.width = w;
        p.height = h;
        p.y = luma.data();
        p.y_stride = w + 3;
        p.shift_x = shift_x;
        p.shift_y = shift_y;
        p.chroma_width = cw;
        p.chroma_height = ch;
        p.chroma_step = step;
        p.cb_stride = p.cr_stride = cw * step + 5;
        p.cb = chroma.data();
        p.cr = step == 2 ? chroma.data() + 1 : chroma.data() + (cw + 5) * ch;
        for (YcbcrStandard s :
             {YcbcrStandard::kBt601, YcbcrStandard::kBt709, YcbcrStandard::kBt2020}) {
          for (bool full : {false, true}) {
            p.matrix = MakeYcbcrMatrix(s, full);
            for (bool bilinear : {false, true}) {
              for (int gray = 0; gray <= 1; ++gray) {
                YcbcrPicture q = p;
                if (gray) q.cb = q.cr = nullptr;
                const int x0 = 3, y0 = 2, rw = w - 5, rh = h - 3;
                std::vector<uint8_t> fast(rw * rh * 3);
                RegionToRgb(q, x0, y0, rw, rh, bilinear, fast.data());
                int mismatches = 0;
                for (int r = 0; r < rh; ++r) {
                  for (int c = 0; c < rw; ++c) {
                    uint8_t rgb[3];
                    PixelToRgb(q, x0 + c, y0 + r, bilinear, rgb);
                    for (int k = 0; k < 3; ++k) {
                      mismatches += rgb[k] != fast[(r * rw + c) * 3 + k];
                    }
                  }
                }
                EXPECT_EQ(mismatches, 0) << shift_x << shift_y << " step " << step
                                         << " full " << full << " bilinear " << bilinear
                                         << " gray " << gray;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace codec
}  // namespace tfg
