// Makes the CPU path's reference outputs the device check compares the
// GPU with (tools/gpu_proof_data.py runs it on a development machine; the
// outputs are carried in the repository, since the GPU machines have neither
// TensorFlow nor libavcodec's headers).
//
//   make_reference OUT.f32 MATRICES.f32 OUT_SIZE SAMPLE.hevc WIDTH HEIGHT [SAMPLE WIDTH HEIGHT ...]
//
// Per sample: the CPU decoder (cc/codec/hevc_decoder, libavcodec) decodes the
// Annex-B picture, converts the clean top-left WIDTH x HEIGHT to RGB with
// bilinear chroma, and the CPU warp (cc/warp) maps it with the sample's matrix
// to OUT_SIZE x OUT_SIZE x 3 NHWC floats in levels (bias 0, norm 1, out-of-
// picture colour 0, 128, 255), appended to OUT.f32.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <vector>

#include "cc/codec/hevc_decoder.h"
#include "cc/warp/similarity_warp.h"

int main(int argc, char** argv) {
  if (argc < 7 || (argc - 4) % 3 != 0) {
    std::cerr << "usage: make_reference OUT.f32 MATRICES.f32 OUT_SIZE (SAMPLE W H)...\n";
    return 2;
  }
  const int out = std::atoi(argv[3]);
  std::ifstream mfile(argv[2], std::ios::binary | std::ios::ate);
  std::vector<float> matrices(static_cast<size_t>(mfile.tellg()) / sizeof(float));
  mfile.seekg(0);
  mfile.read(reinterpret_cast<char*>(matrices.data()), matrices.size() * sizeof(float));

  std::unique_ptr<tfg::codec::HevcDecoder> decoder;
  tfg::Status s = tfg::codec::HevcDecoder::Create(1, &decoder);
  if (!s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  std::ofstream result(argv[1], std::ios::binary);
  const float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {0, 128, 255};
  for (int i = 4, n = 0; i < argc; i += 3, ++n) {
    std::ifstream f(argv[i], std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    const int w = std::atoi(argv[i + 1]), h = std::atoi(argv[i + 2]);
    s = decoder->Decode(bytes.data(), bytes.size(), argv[i]);
    std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
    if (s.ok()) s = decoder->ToRgb(0, 0, w, h, tfg::codec::ChromaUpsampling::kBilinear, rgb.data());
    if (!s.ok() || matrices.size() < 9u * (n + 1)) {
      std::cerr << argv[i] << ": " << (s.ok() ? "too few matrices" : s.message()) << "\n";
      return 1;
    }
    tfg::warp::WarpGeometry g;
    g.in_height = h;
    g.in_width = w;
    g.channels = 3;
    g.out_height = g.out_width = out;
    std::vector<float> warped(static_cast<size_t>(out) * out * 3);
    tfg::warp::WarpPicture(g, rgb.data(), &matrices[9 * n], bias, norm, oob, warped.data());
    result.write(reinterpret_cast<const char*>(warped.data()), warped.size() * sizeof(float));
  }
  return 0;
}
