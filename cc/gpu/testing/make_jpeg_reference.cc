// Writes the device check's JPEG references (cc/gpu/testing/data/jpeg_ref/):
// one small JPEG of each kind the GPU path takes (4:2:0, 4:2:2, 4:4:4, gray
// on the hardware; progressive on nvJPEG's CUDA backend) at an odd and an
// even size, and the CPU fused JPEG path's output for it (cc/codec/jpeg_warp:
// every pixel decoded, accurate IDCT, smooth chroma upsampling) through the
// warp PlanClipWarp draws for key HashKey({1, 0, i}): 112x112x3 uint8.
// The GPU machine has no libjpeg to compute these itself.
//
//   g++ -std=c++17 -O2 -I. -Ithird_party/ffnvcodec/include \
//     cc/gpu/testing/make_jpeg_reference.cc cc/gpu/decode_jpeg_warped_body.cc \
//     cc/gpu/nvjpeg_decoder.cc cc/gpu/nvjpeg_loader.cc cc/gpu/kernel_modules.cc \
//     cc/gpu/nvdec_pool.cc cc/gpu/testing/no_embedded_kernels.cc \
//     cc/codec/jpeg_warp.cc cc/codec/jpeg_decoder.cc cc/warp/*.cc (not *_test.cc) \
//     -mavx2 -mfma -lturbojpeg -ljpeg -pthread -o /tmp/make_jpeg_reference
//   /tmp/make_jpeg_reference cc/gpu/testing/data/jpeg_ref
#include <cstdio>
#include <string>
#include <vector>

#include "cc/codec/jpeg_warp.h"
#include "cc/gpu/decode_jpeg_warped_body.h"
#include "cc/gpu/testing/jpeg_reference.h"
#include "cc/gpu/testing/jpeg_samples.h"
#include "cc/util/stateless_random.h"

using namespace tfg;
using namespace tfg::gpu::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_jpeg_reference OUTDIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const struct {
    const char* name;
    JpegKind kind;
  } kinds[] = {{"420", JpegKind::k420}, {"422", JpegKind::k422}, {"444", JpegKind::k444},
               {"gray", JpegKind::kGray}, {"progressive420", JpegKind::kProgressive420}};
  std::string index;
  int i = 0;
  for (const auto& k : kinds) {
    for (const auto& size : {std::pair<int, int>{157, 93}, {320, 240}}) {
      const std::string jpeg = EncodeJpeg(size.first, size.second, k.kind, i);
      gpu::RegionWarp w;
      ReferenceWarp(i, size.first, size.second, &w);
      double m[9];
      for (int c = 0; c < 9; ++c) m[c] = w.matrix[c];
      jpeg::ImageInfo info;
      jpeg::WarpTarget target;
      target.out_height = kReferenceOut;
      target.out_width = kReferenceOut;
      target.dct_scaling = false;
      target.oob_color = w.oob_color;
      jpeg::DecodeOptions options;
      options.fast_dct = false;
      std::vector<uint8_t> out(kReferenceOut * kReferenceOut * 3);
      Status s = jpeg::ReadHeader(BytesOf(jpeg), jpeg.size(), &info);
      if (s.ok()) {
        s = jpeg::DecodeWarped(BytesOf(jpeg), jpeg.size(), options, info, m, target, out.data());
      }
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", k.name, s.message().c_str());
        return 1;
      }
      const std::string base = std::string(k.name) + "_" + std::to_string(size.first) + "x" +
                               std::to_string(size.second);
      FILE* f = std::fopen((dir + "/" + base + ".jpg").c_str(), "wb");
      std::fwrite(jpeg.data(), 1, jpeg.size(), f);
      std::fclose(f);
      f = std::fopen((dir + "/" + base + ".u8").c_str(), "wb");
      std::fwrite(out.data(), 1, out.size(), f);
      std::fclose(f);
      index += base + " " + k.name + " " + std::to_string(i) + "\n";
      ++i;
    }
  }
  FILE* f = std::fopen((dir + "/index.txt").c_str(), "w");
  std::fputs(index.c_str(), f);
  std::fclose(f);
  return 0;
}
