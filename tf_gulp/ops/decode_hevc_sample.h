// What both kernels of decode_hevc share (the CPU kernel in decode_hevc_op.cc,
// the GPU kernel in decode_hevc_gpu_op.cc): the MP4 sample parsed and checked
// on the host down to one Annex-B picture, the crop rectangle, and the CPU
// decode (the GPU kernel's fallback). No TensorFlow type: callers hand memory
// over through a callback.
#ifndef TF_GULP_OPS_DECODE_HEVC_SAMPLE_H_
#define TF_GULP_OPS_DECODE_HEVC_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "cc/codec/hevc_decoder.h"
#include "cc/mp4/mp4_reader.h"
#include "cc/util/status.h"

namespace tf_gulp {

// One sample of decode_hevc: its picture in Annex-B form and the track that
// says how to crop it.
struct HevcSample {
  std::string what;  // names the sample in errors
  tfg::mp4::Movie movie;
  int track = -1;  // index into movie.tracks
  std::string annex_b;
};

// Parses the MP4 `data` (track named `track_name`, else the first HEVC track)
// into `sample`. `label` names the sample in errors (empty: its size).
tfg::Status ParseHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                            const std::string& label, HevcSample* sample);

// The rectangle of a decoded frame_w x frame_h picture that decode_hevc
// outputs: the clean aperture (clap box, else the tkhd size when it is within
// the frame) when `clean`, else the full frame.
tfg::Status HevcCropRegion(const HevcSample& sample, bool clean, int frame_w, int frame_h,
                           int* x, int* y, int* w, int* h);

// Decodes `sample` on the CPU (libavcodec on this thread's decoder) and writes
// its RGB crop to the memory `allocate(height, width)` returns.
tfg::Status DecodeHevcOnCpu(const HevcSample& sample, bool clean,
                            tfg::codec::ChromaUpsampling chroma, int threads,
                            const std::function<tfg::Status(int h, int w, uint8_t** rgb)>& allocate);

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_DECODE_HEVC_SAMPLE_H_
