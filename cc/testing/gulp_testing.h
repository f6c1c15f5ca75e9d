// Test helpers: encode small JPEGs and write gulp chunks in the gulpio2
// layout (frames padded to 4 bytes, JSON index), so core tests need no
// external files.
#ifndef TF_GULP_CC_TESTING_GULP_TESTING_H_
#define TF_GULP_CC_TESTING_GULP_TESTING_H_

#include <turbojpeg.h>

#include <string>
#include <utility>
#include <vector>

#include "cc/testing/temp_dir.h"

namespace tfg {
namespace testing {

// A width x height JPEG whose pixels are a gradient offset by `seed`.
// `channels` 3 → RGB 4:2:0 (or 4:4:4 with `subsample444`), 1 → gray.
inline std::string MakeJpeg(int width, int height, int seed, int channels = 3,
                            bool subsample444 = false, bool progressive = false) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        pixels[(static_cast<size_t>(y) * width + x) * channels + c] =
            static_cast<unsigned char>((x * 4 + y * 2 + c * 40 + seed * 17) & 0xff);
      }
    }
  }
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int format = channels == 1 ? TJPF_GRAY : TJPF_RGB;
  const int subsampling =
      channels == 1 ? TJSAMP_GRAY : (subsample444 ? TJSAMP_444 : TJSAMP_420);
  tjCompress2(handle, pixels.data(), width, 0, height, format, &jpeg, &size,
              subsampling, 90, progressive ? TJFLAG_PROGRESSIVE : 0);
  std::string out(reinterpret_cast<char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(handle);
  return out;
}

struct TestItem {
  std::string id;
  std::vector<std::string> jpegs;
  std::string meta_json = "{}";
};

// Writes data_<n>.gulp + meta_<n>.gmeta into `dir` for `items`.
inline void WriteChunk(const std::string& dir, int n,
                       const std::vector<TestItem>& items) {
  std::string data, meta = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) meta += ", ";
    meta += "\"" + items[i].id + "\": {\"frame_info\": [";
    for (size_t f = 0; f < items[i].jpegs.size(); ++f) {
      const std::string& jpeg = items[i].jpegs[f];
      const size_t pad = (4 - jpeg.size() % 4) % 4;
      if (f > 0) meta += ", ";
      meta += "[" + std::to_string(data.size()) + ", " + std::to_string(pad) +
              ", " + std::to_string(jpeg.size() + pad) + "]";
      data += jpeg + std::string(pad, '\0');
    }
    meta += "], \"meta_data\": [" + items[i].meta_json + "]}";
  }
  meta += "}";
  WriteFile(dir + "/data_" + std::to_string(n) + ".gulp", data);
  WriteFile(dir + "/meta_" + std::to_string(n) + ".gmeta", meta);
}

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_CC_TESTING_GULP_TESTING_H_
