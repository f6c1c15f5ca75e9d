// Decoding one single-picture HEVC MP4 (a Benzina per-image sample): the
// container is parsed and validated (cc/mp4/mp4_reader.h), the track chosen
// (by name, else the first HEVC track: FFmpeg's muxer names it
// "VideoHandler"), its first sample decoded by the calling thread's
// HevcDecoder, and the rectangle to keep found (the clean aperture, else the
// tkhd size when within the frame, or the full coded frame).
//
// Shared by the ops that decode such samples (decode_hevc: to RGB, on the CPU
// or by NVDEC in its GPU kernel; decode_hevc_warped: warped straight from the
// decoder's planes; hevc_sample_size: the crop from the MP4 alone), so all
// apply the same track and crop rules. TensorFlow-free.
#ifndef TF_GULP_CC_CODEC_HEVC_SAMPLE_H_
#define TF_GULP_CC_CODEC_HEVC_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "cc/codec/hevc_decoder.h"
#include "cc/mp4/mp4_reader.h"
#include "cc/util/status.h"

namespace tfg {
namespace codec {

// A rectangle of the decoded frame.
struct PictureRegion {
  int x = 0, y = 0, width = 0, height = 0;
};

// One sample's MP4 parsed down to its picture: the chosen track (which says
// how to crop) and its first sample in Annex-B form, ready for a decoder
// (libavcodec here, NVDEC in decode_hevc's GPU kernel).
struct ParsedHevcSample {
  mp4::Movie movie;
  int track = -1;  // index into movie.tracks
  std::string annex_b;

  const mp4::Track& picture_track() const { return movie.tracks[track]; }
};

// The name errors give a sample: `label`, else its size.
std::string HevcSampleName(const std::string& label, size_t size);

// Parses the MP4 `data` (`size` bytes): the track named `track_name`, else
// the first HEVC track. `what` names the sample in errors.
Status ParseHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                       const std::string& what, ParsedHevcSample* sample);

// The rectangle of a decoded frame_w x frame_h picture to keep: `clean`: the
// clean aperture (clap box, else the tkhd size when within the frame); else
// the full frame.
Status HevcSampleRegion(const ParsedHevcSample& sample, bool clean, int frame_w, int frame_h,
                        const std::string& what, PictureRegion* region);

// Decodes a parsed sample with this thread's decoder; as DecodeHevcSample.
Status DecodeParsedHevcSample(const ParsedHevcSample& sample, bool clean, int threads,
                              const std::string& what, HevcDecoder** decoder,
                              PictureRegion* region);

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
