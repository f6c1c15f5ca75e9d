// Fuzz target: the JPEG path of a gulp read (cc/gulp/clip_reader.h over
// cc/codec/jpeg_decoder.h): the header read that sizes the output, then the
// decode into a buffer of exactly that size, under every decode option; then
// the fused decode + warp (cc/codec/jpeg_warp.h: cropped columns, skipped
// rows, DCT scaling) of a crop keyed by the options byte.
//
// Input: [options: 1 byte] [JPEG bytes]. Options bits: 0 gray, 1-2 scale
// 1/2/4/8, 3 accurate DCT, 4 fast upsampling, 5-7 the fused crop's key. Seeds: written by tools/fuzz.py
// from the frames of tests/data/gulpio2/data_*.gulp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cc/fuzz/fuzz_common.h"
#include "cc/gulp/clip_reader.h"
#include "cc/warp/similarity_transform.h"

namespace {

// Larger frames are only header-checked: the op's output tensor would be that
// big too, and decoding them would slow the fuzzer to a crawl.
constexpr size_t kMaxDecodedBytes = size_t{16} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tfg;
  using namespace tfg::gulp;
  if (size < 1) return 0;
  jpeg::DecodeOptions options;
  const uint8_t bits = data[0];
  options.color_space = (bits & 1) ? jpeg::ColorSpace::kGray : jpeg::ColorSpace::kRgb;
  options.scale_denominator = 1 << ((bits >> 1) & 3);
  options.fast_dct = !(bits & 8);
  options.fast_upsample = (bits & 16) != 0;

  // One clip holding the frame twice, as a gulp read selecting it twice would.
  ClipBytes clip;
  clip.buffer.assign(data + 1, data + size);
  const size_t n = size - 1;
  clip.frames = {{0, n, 1000, 0}, {0, n, 1000, 0}};
  ClipShape shape;
  const Status status = ClipDecodedShape(clip, options, "data_0.gulp", "video", &shape);
  if (!status.ok()) {
    FUZZ_CHECK(status.message().find("data_0.gulp") != std::string::npos);
    return 0;
  }
  FUZZ_CHECK(shape.width > 0 && shape.height > 0);
  FUZZ_CHECK(shape.channels == jpeg::Channels(options.color_space));
  // The header limits held (jpeg_decoder.h): no frame past kMaxFramePixels.
  FUZZ_CHECK(static_cast<uint64_t>(shape.width) * shape.height <= jpeg::kMaxFramePixels);
  (void)CheckClipDecodedBytes(shape, kDefaultMaxClipBytes, "data_0.gulp", "video");
  if (shape.frame_bytes() > kMaxDecodedBytes) return 0;
  std::vector<uint8_t> pixels(2 * shape.frame_bytes());
  for (size_t k = 0; k < 2; ++k) {
    (void)DecodeClipFrame(clip, k, options, shape, "data_0.gulp", "video", pixels.data());
  }
  // The fused path: a random resized crop of the full-size frame to 24x32.
  ClipShape full;
  options.scale_denominator = 1;
  if (!ClipDecodedShape(clip, options, "data_0.gulp", "video", &full).ok()) return 0;
  warp::TransformSpec spec;
  FUZZ_CHECK(warp::ParseTransformSpec({1, 0.08f, 1, 0.75f, 4.f / 3, -10, 10, 0, 0, 0.5f, 0, 1,
                                       0, 1}, &spec).ok());
  double m[9];
  warp::TransformMatrix(spec, bits >> 5, full.height, full.width, 24, 32, m);
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  jpeg::WarpTarget target;
  target.out_height = 24;
  target.out_width = 32;
  target.dct_scaling = (bits & 32) != 0;
  target.bias = zero;
  target.norm = one;
  target.oob_color = zero;
  std::vector<float> warped(2 * 24 * 32 * full.channels);
  const Status fused = DecodeClipWarped(clip, options, full, m, target, "data_0.gulp", "video",
                                        [](std::function<void()> f) { f(); }, 1, warped.data());
  if (!fused.ok()) FUZZ_CHECK(fused.message().find("data_0.gulp") != std::string::npos);
  return 0;
}
