// A picture the NVDEC decoder pool (nvdec_pool.h) hands out, in plain types
// so that code built against the toolkit's cuda.h (which clashes with
// ffnvcodec's dynlink_cuda.h in one translation unit) can use it too.
#ifndef TF_GULP_CC_GPU_NVDEC_PICTURE_H_
#define TF_GULP_CC_GPU_NVDEC_PICTURE_H_

namespace tfg {
namespace gpu {

// One decoded picture, mapped in device memory: NV12, the chroma plane right
// after the luma plane's `surface_height` rows (NVDEC's layout).
struct NvdecPicture {
  int session = -1;
  int surface = -1;
  int width = 0;   // display size (the coded size may be padded)
  int height = 0;
  unsigned int pitch = 0;
  unsigned long long luma = 0;    // CUdeviceptr
  unsigned long long chroma = 0;  // CUdeviceptr: luma + pitch * surface_height
  int surface_height = 0;
  bool full_range = false;        // from the sequence's VUI
  int matrix_coefficients = 2;    // H.273 code, 2 = unspecified
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_PICTURE_H_
