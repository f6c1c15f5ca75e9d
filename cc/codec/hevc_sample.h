// Decoding one single-picture HEVC MP4 (a Benzina per-image sample): the
// container is parsed and validated (cc/mp4/mp4_reader.h), the track chosen
// (by name, else the first HEVC track: FFmpeg's muxer names it
// "VideoHandler"), its first sample decoded by the calling thread's
// HevcDecoder, and the rectangle to keep found (the clean aperture, else the
// tkhd size when within the frame, or the full coded frame).
//
// Shared by the ops that decode such samples (decode_hevc: to RGB;
// decode_hevc_warped: warped straight from the decoder's planes), so both
// apply the same track and crop rules. TensorFlow-free.
#ifndef TF_GULP_CC_CODEC_HEVC_SAMPLE_H_
#define TF_GULP_CC_CODEC_HEVC_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "cc/codec/hevc_decoder.h"
#include "cc/util/status.h"

namespace tfg {
namespace codec {

// A rectangle of the decoded frame.
struct PictureRegion {
  int x = 0, y = 0, width = 0, height = 0;
};

// Decodes the MP4 `data` (`size` bytes) with this thread's decoder
// (HevcDecoder::ForThisThread(threads)); on success `*decoder` holds the
// picture and `*region` the rectangle to keep (`clean`: the clean aperture
// rules above; else the full frame). `what` names the sample in errors.
Status DecodeHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                        bool clean, int threads, const std::string& what,
                        HevcDecoder** decoder, PictureRegion* region);

}  // namespace codec
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_HEVC_SAMPLE_H_
