// The coded size of an HEVC picture from its sequence parameter set: what a
// hardware decoder allocates for (pic_width/height_in_luma_samples), which may
// be larger than the picture shown (the conformance window, or a Benzina
// frame padded around a smaller picture) and than an MP4 sample entry's size.
//
// Why here: the GPU path sizes its NVDEC decoders from a batch's largest
// coded size before any picture is decoded, so that no decoder has to be
// destroyed and created again for a larger picture mid-batch.
#ifndef TF_GULP_CC_CODEC_HEVC_CODED_SIZE_H_
#define TF_GULP_CC_CODEC_HEVC_CODED_SIZE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "cc/util/status.h"

namespace tfg {
namespace codec {

// The coded size from the first SPS NAL unit of Annex-B `data` (`size` bytes;
// start codes 00 00 01 or 00 00 00 01). DataLoss naming `what` and the SPS's
// byte offset when there is no SPS or it ends before the size.
Status HevcCodedSize(const uint8_t* data, size_t size, const std::string& what, int* width,
                     int* height);

}  // namespace codec
}  // namespace tfg

#endif  // TF_GULP_CC_CODEC_HEVC_CODED_SIZE_H_
