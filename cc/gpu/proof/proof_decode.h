// The proof's view of the NVDEC decoder pool, in plain types: gpu_proof.cc is
// built against the toolkit's cuda.h, the pool against ffnvcodec's headers,
// and the two cannot share a translation unit.
#ifndef TF_GULP_CC_GPU_PROOF_PROOF_DECODE_H_
#define TF_GULP_CC_GPU_PROOF_PROOF_DECODE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cc/gpu/nvdec_picture.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {
namespace proof {

struct RuntimeReport {
  std::string path;  // GpuPathName
  int driver_version = 0;
  std::string message;  // why not the whole GPU path; empty if it is
};
// Loads the driver libraries as the product does (gpu_runtime.h).
RuntimeReport ProbeRuntime();

class Decoder {
 public:
  // `context`: a CUcontext; sessions 0 = one per NVDEC engine.
  static Status Create(void* context, int sessions, int surfaces, int max_size,
                       std::unique_ptr<Decoder>* decoder);
  ~Decoder();
  int sessions() const;
  // `stream`: a CUstream.
  Status Decode(const uint8_t* data, size_t size, void* stream, const char* what,
                NvdecPicture* picture);
  Status Release(const NvdecPicture& picture, void* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace proof
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_PROOF_PROOF_DECODE_H_
