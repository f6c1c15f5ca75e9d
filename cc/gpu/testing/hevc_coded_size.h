// The coded and displayed size of an Annex-B HEVC picture, read from its
// sequence parameter set. The device check sizes the decoders from the coded
// size (what NVDEC allocates; a sample entry or an index gives the displayed
// one, and a picture coded larger than the decoders' maximum forces a destroy
// + create of the decoder mid-run).
#ifndef TF_GULP_CC_GPU_TESTING_HEVC_CODED_SIZE_H_
#define TF_GULP_CC_GPU_TESTING_HEVC_CODED_SIZE_H_

#include <cstddef>
#include <cstdint>

#include "cc/util/status.h"

namespace tfg {
namespace gpu {
namespace testing {

struct HevcSize {
  int coded_width = 0, coded_height = 0;      // pic_width/height_in_luma_samples
  int display_width = 0, display_height = 0;  // less the conformance window
};

// The first SPS's sizes; DataLoss naming `what` and the byte offset when
// there is no SPS or it ends early.
Status ReadHevcSize(const uint8_t* data, size_t size, const char* what, HevcSize* out);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_HEVC_CODED_SIZE_H_
