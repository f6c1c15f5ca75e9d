#include "cc/warp/similarity_transform.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tfg {
namespace warp {
namespace {

TEST(SimilarityTransformTest, AffineMatrixMatchesTheReferenceValue) {
  // tf_gulp.transforms.compute_affine_matrix's documented check value.
  double m[9];
  AffineMatrix(375, 500, 224, 224, 328.125, 437.5, 0, 0, 0, 0, 0, false, false, true, true, m);
  const double want[9] = {1.464844, 0, 86.169922, 0, 1.464844, 23.669922, 0, 0, 1};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(m[i], want[i], 1e-5) << i;
}

TransformSpec RandomResizedCrop() {
  TransformSpec spec;
  EXPECT_TRUE(ParseTransformSpec({1, 0.08f, 1, 0.75f, 4.f / 3, 0, 0, 0, 0, 0.5f, 0, 1, 0, 1},
                                 &spec).ok());
  return spec;
}

TEST(SimilarityTransformTest, RandomCropsAreAFunctionOfTheKeyAndStayInside) {
  const TransformSpec spec = RandomResizedCrop();
  int flipped = 0;
  for (uint64_t key = 0; key < 200; ++key) {
    double a[9], b[9];
    TransformMatrix(spec, key, 240, 320, 112, 112, a);
    TransformMatrix(spec, key, 240, 320, 112, 112, b);
    for (int i = 0; i < 9; ++i) EXPECT_EQ(a[i], b[i]);
    flipped += a[0] < 0;
    // Every output pixel centre maps inside the input picture.
    for (double x : {0.0, 111.0}) {
      for (double y : {0.0, 111.0}) {
        const double X = a[0] * x + a[1] * y + a[2], Y = a[3] * x + a[4] * y + a[5];
        EXPECT_GE(X, -0.5);
        EXPECT_LE(X, 319.5);
        EXPECT_GE(Y, -0.5);
        EXPECT_LE(Y, 239.5);
      }
    }
  }
  EXPECT_GT(flipped, 60);  // flip_h = 0.5
  EXPECT_LT(flipped, 140);
  double a[9], b[9];
  TransformMatrix(spec, 1, 240, 320, 112, 112, a);
  TransformMatrix(spec, 2, 240, 320, 112, 112, b);
  EXPECT_NE(a[2], b[2]);
}

TEST(SimilarityTransformTest, ParseRefusesBadSpecs) {
  TransformSpec spec;
  EXPECT_TRUE(ParseTransformSpec({}, &spec).ok());
  EXPECT_EQ(spec.kind, TransformSpec::Kind::kResize);
  EXPECT_FALSE(ParseTransformSpec({1, 2, 3}, &spec).ok());
  EXPECT_FALSE(ParseTransformSpec({4, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &spec).ok());
  EXPECT_FALSE(ParseTransformSpec({3, 3, 0, 0, 0, 1, 1, 1, 0, 0}, &spec).ok());  // mode
  EXPECT_FALSE(ParseTransformSpec({3, 1, 0, 0, 0, 1, 1, 1, 0, 0}, &spec).ok());  // no size
  EXPECT_FALSE(ParseTransformSpec({3, 0, 0, 0, 0.5f, 0.1f, 1, 1, 0, 0}, &spec).ok());
  EXPECT_FALSE(
      ParseTransformSpec({1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}, &spec).ok());  // scale 0
  EXPECT_FALSE(
      ParseTransformSpec({1, 1, 1, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 1}, &spec).ok());  // flip 2
  EXPECT_FALSE(ParseTransformSpec({2, 1, 0, NAN, 0, 1, 0, 0, 0, 1}, &spec).ok());
  ASSERT_TRUE(ParseTransformSpec({2, 1, 0, 5, 0, 1, 6, 0, 0, 1}, &spec).ok());
  double m[9];
  TransformMatrix(spec, 0, 10, 10, 4, 4, m);
  EXPECT_EQ(m[2], 5);
  EXPECT_EQ(m[5], 6);
}

TEST(SimilarityTransformTest, ResizeMapsCornersToCorners) {
  TransformSpec spec;
  double m[9];
  TransformMatrix(spec, 0, 240, 320, 60, 80, m);
  // Output pixel centre (0, 0) -> (1.5, 1.5); (79, 59) -> (317.5, 237.5).
  EXPECT_NEAR(m[2], 1.5, 1e-9);
  EXPECT_NEAR(m[0] * 79 + m[2], 317.5, 1e-9);
  EXPECT_NEAR(m[4] * 59 + m[5], 237.5, 1e-9);
}

TransformSpec CropResize(std::vector<float> v) {
  TransformSpec spec;
  EXPECT_TRUE(ParseTransformSpec(v, &spec).ok());
  return spec;
}

// torchvision's Resize(256) + CenterCrop(224) on a 375x500 picture: resized
// to 256x341 (the longer side truncated), cropped at top 16, left 58 (rounded
// offsets); output x samples input (x + 58 + 0.5) * 500 / 341 - 0.5.
TEST(CropResizeTest, ResizeThenCenterCropIsTorchvisionsGrid) {
  double m[9];
  TransformMatrix(CropResize({3, 1, 256, 0, 0, 1, 1, 1, 0, 0}), 7, 375, 500, 224, 224, m);
  EXPECT_NEAR(m[0], 500.0 / 341, 1e-12);
  EXPECT_NEAR(m[4], 375.0 / 256, 1e-12);
  EXPECT_NEAR(m[2], (58 + 0.5) * 500.0 / 341 - 0.5, 1e-9);
  EXPECT_NEAR(m[5], (16 + 0.5) * 375.0 / 256 - 0.5, 1e-9);
}

TEST(CropResizeTest, CenterCropKeepsPixelsAndPadsEvenly) {
  double m[9];
  TransformMatrix(CropResize({3, 2, 0, 0, 0, 1, 1, 1, 0, 0}), 1, 240, 320, 112, 112, m);
  EXPECT_EQ(m[0], 1);
  EXPECT_EQ(m[2], 104);  // round((320 - 112) / 2)
  EXPECT_EQ(m[5], 64);
  TransformMatrix(CropResize({3, 2, 0, 0, 0, 1, 1, 1, 0, 0}), 1, 5, 5, 8, 8, m);
  EXPECT_EQ(m[2], -1);  // padded (8 - 5) // 2 = 1 on the left
}

TEST(CropResizeTest, FlipMirrorsTheOutput) {
  double a[9], b[9];
  TransformMatrix(CropResize({3, 2, 0, 0, 0, 1, 1, 1, 0, 0}), 3, 240, 320, 112, 112, a);
  TransformMatrix(CropResize({3, 2, 0, 0, 0, 1, 1, 1, 1, 0}), 3, 240, 320, 112, 112, b);
  // Output column x of the flipped picture is column 111 - x of the other.
  for (double x : {0.0, 17.0, 111.0}) EXPECT_DOUBLE_EQ(b[0] * x + b[2], a[0] * (111 - x) + a[2]);
  EXPECT_EQ(a[5], b[5]);
}

TEST(CropResizeTest, RandomResizedCropsAreWholePixelsInside) {
  const TransformSpec spec = CropResize({3, 0, 0, 0, 0.08f, 1, 0.75f, 4.f / 3, 0, 0});
  for (uint64_t key = 0; key < 500; ++key) {
    double m[9];
    TransformMatrix(spec, key, 240, 320, 112, 112, m);
    const double w = m[0] * 112, h = m[4] * 112;
    const double left = m[2] + 0.5 - 0.5 * m[0], top = m[5] + 0.5 - 0.5 * m[4];
    EXPECT_NEAR(w, std::round(w), 1e-9);
    EXPECT_NEAR(left, std::round(left), 1e-9);
    EXPECT_NEAR(top, std::round(top), 1e-9);
    EXPECT_GE(left, 0);
    EXPECT_GE(top, 0);
    EXPECT_LE(left + w, 320 + 1e-9);
    EXPECT_LE(top + h, 240 + 1e-9);
  }
}

}  // namespace
}  // namespace warp
}  // namespace tfg
