// JPEGs of every kind the GPU JPEG path routes, made with TurboJPEG for the
// tests: baseline at each subsampling, gray, progressive, CMYK, and headers
// patched to say 12-bit or arithmetic coding (nvJPEG refuses those from the
// header, before any decoding).
#ifndef TF_GULP_CC_GPU_TESTING_JPEG_SAMPLES_H_
#define TF_GULP_CC_GPU_TESTING_JPEG_SAMPLES_H_

#include <turbojpeg.h>

#include <cmath>
#include <string>
#include <vector>

namespace tfg {
namespace gpu {
namespace testing {

enum class JpegKind { k420, k422, k444, kGray, kProgressive420, kCmyk, k12Bit, kArithmetic };

// A smooth picture with some detail, `seed` shifting it.
inline std::string EncodeJpeg(int width, int height, JpegKind kind, int seed = 0) {
  const bool gray = kind == JpegKind::kGray;
  const bool cmyk = kind == JpegKind::kCmyk;
  const int channels = gray ? 1 : (cmyk ? 4 : 3);
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        const double v = 128 + 70 * std::sin(x * 0.09 + c + seed) * std::cos(y * 0.07) +
                         30 * std::sin((x + 2 * y) * 0.31 + c * 2);
        pixels[(static_cast<size_t>(y) * width + x) * channels + c] =
            static_cast<unsigned char>(std::lround(v < 0 ? 0 : (v > 255 ? 255 : v)));
      }
    }
  }
  int samp = TJSAMP_420, flags = 0;
  if (kind == JpegKind::k422) samp = TJSAMP_422;
  if (kind == JpegKind::k444 || cmyk) samp = TJSAMP_444;
  if (gray) samp = TJSAMP_GRAY;
  if (kind == JpegKind::kProgressive420) flags |= TJFLAG_PROGRESSIVE;
  const int format = gray ? TJPF_GRAY : (cmyk ? TJPF_CMYK : TJPF_RGB);
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  tjCompress2(handle, pixels.data(), width, 0, height, format, &jpeg, &size, samp, 92, flags);
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(handle);
  if (kind == JpegKind::k12Bit || kind == JpegKind::kArithmetic) {
    for (size_t i = 2; i + 4 < out.size(); ++i) {
      if (static_cast<unsigned char>(out[i]) == 0xFF &&
          static_cast<unsigned char>(out[i + 1]) == 0xC0) {
        if (kind == JpegKind::kArithmetic) out[i + 1] = static_cast<char>(0xC9);
        if (kind == JpegKind::k12Bit) out[i + 4] = 12;  // the SOF's precision byte
        break;
      }
    }
  }
  return out;
}

inline const unsigned char* BytesOf(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_JPEG_SAMPLES_H_
