// HEVC picture decoding on the CPU with FFmpeg's libavcodec, and conversion of
// the decoded Y'CbCr frame to RGB.
//
// A decoder decodes one picture at a time from an Annex-B byte stream (the
// parameter sets followed by the picture's NAL units, as
// mp4::HevcSampleToAnnexB makes it) and keeps the frame until the next call.
// Bitstream errors are errors (AV_EF_EXPLODE): a truncated or non-HEVC sample
// is DataLoss naming the sample, never a half-decoded picture.
//
// Colour conversion (cc/codec/ycbcr.h) follows the frame's signalled range and
// matrix: full range (yuvj*, color_range=pc) or limited range; BT.601 (default,
// also unspecified), BT.709, BT.2020. Chroma is upsampled bilinearly with
// chroma samples centred between luma samples (at X/2 - 0.25 for 4:2:0), or by
// repetition ("nearest", what FFmpeg's swscale does for yuv420p -> rgb24).
// TensorFlow-free.
#ifndef TF_GULP_CC_CODEC_HEVC_DECODER_H_
#define TF_GULP_CC_CODEC_HEVC_DECODER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "cc/util/status.h"

namespace tfg {
namespace codec {

enum class ChromaUpsampling { kBilinear, kNearest };

// Parses "bilinear" / "nearest".
Status ParseChromaUpsampling(const std::string& name, ChromaUpsampling* mode);

class HevcDecoder {
 public:
  // `threads`: libavcodec's thread count for one picture (slice and frame
  // threads); 1 decodes on the calling thread only, 0 lets libavcodec choose.
  static Status Create(int threads, std::unique_ptr<HevcDecoder>* decoder);
  // A decoder owned by the calling thread (created on first use), so kernels
  // running on many threads never share one and never re-create one.
  static Status ForThisThread(int threads, HevcDecoder** decoder);
  ~HevcDecoder();

  HevcDecoder(const HevcDecoder&) = delete;
  HevcDecoder& operator=(const HevcDecoder&) = delete;

  // Decodes the one picture in `annex_b` (`size` bytes). `what` names the
  // sample in error messages.
  Status Decode(const uint8_t* annex_b, size_t size, const std::string& what);

  // Size of the last decoded picture (the coded frame, after the SPS's
  // conformance window).
  int width() const;
  int height() const;

  // Writes the RGB pixels of the rectangle [x, x + w) x [y, y + h) of the last
  // picture to `dst` (h rows of w * 3 bytes).
  Status ToRgb(int x, int y, int w, int h, ChromaUpsampling mode,
               uint8_t* dst) const;

 private:
  struct Impl;
  explicit HevcDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codec
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_HEVC_DECODER_H_
