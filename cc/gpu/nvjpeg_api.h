// nvJPEG's entry points and types, declared here so that nothing CUDA is
// needed at build time: libnvjpeg.so is opened at run time
// (nvjpeg_loader.h), as gpu_runtime opens libcuda and libnvcuvid, and tests
// fill the table with a fake (testing/fake_nvjpeg.h).
//
// The values and signatures are those of NVIDIA's nvjpeg.h (CUDA 12.x, library
// major version 12); the handles are opaque pointers. nvJPEG takes a
// cudaStream_t, which is a CUstream (TensorFlow's stream as it is).
#ifndef TF_GULP_CC_GPU_NVJPEG_API_H_
#define TF_GULP_CC_GPU_NVJPEG_API_H_

#include <cstddef>

#include "cc/gpu/nvdec_api.h"  // CUstream (ffnvcodec's declaration)

namespace tfg {
namespace gpu {

constexpr int kNvjpegMaxComponent = 4;

enum NvjpegStatus : int {
  NVJPEG_STATUS_SUCCESS = 0,
  NVJPEG_STATUS_NOT_INITIALIZED = 1,
  NVJPEG_STATUS_INVALID_PARAMETER = 2,
  NVJPEG_STATUS_BAD_JPEG = 3,
  NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
  NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
  NVJPEG_STATUS_EXECUTION_FAILED = 6,
  NVJPEG_STATUS_ARCH_MISMATCH = 7,
  NVJPEG_STATUS_INTERNAL_ERROR = 8,
  NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
  NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10,
};

enum NvjpegBackend : int {
  NVJPEG_BACKEND_DEFAULT = 0,
  NVJPEG_BACKEND_HYBRID = 1,
  NVJPEG_BACKEND_GPU_HYBRID = 2,
  NVJPEG_BACKEND_HARDWARE = 3,
};

enum NvjpegOutputFormat : int {
  NVJPEG_OUTPUT_UNCHANGED = 0,
  NVJPEG_OUTPUT_YUV = 1,  // planar Y, Cb, Cr at the JPEG's own chroma subsampling
  NVJPEG_OUTPUT_Y = 2,
  NVJPEG_OUTPUT_RGB = 3,
  NVJPEG_OUTPUT_RGBI = 5,
};

enum NvjpegChromaSubsampling : int {
  NVJPEG_CSS_444 = 0,
  NVJPEG_CSS_422 = 1,
  NVJPEG_CSS_420 = 2,
  NVJPEG_CSS_440 = 3,
  NVJPEG_CSS_411 = 4,
  NVJPEG_CSS_410 = 5,
  NVJPEG_CSS_GRAY = 6,
  NVJPEG_CSS_410V = 7,
  NVJPEG_CSS_UNKNOWN = -1,
};

// SOF markers nvjpegJpegStreamGetJpegEncoding reports.
enum NvjpegJpegEncoding : int {
  NVJPEG_ENCODING_UNKNOWN = 0x0,
  NVJPEG_ENCODING_BASELINE_DCT = 0xc0,
  NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN = 0xc1,
  NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN = 0xc2,
};

struct NvjpegImage {  // nvjpegImage_t
  unsigned char* channel[kNvjpegMaxComponent];
  size_t pitch[kNvjpegMaxComponent];
};

struct NvjpegHandleOpaque;
struct NvjpegStateOpaque;
struct NvjpegStreamOpaque;
using NvjpegHandle = NvjpegHandleOpaque*;   // nvjpegHandle_t
using NvjpegState = NvjpegStateOpaque*;     // nvjpegJpegState_t
using NvjpegStream = NvjpegStreamOpaque*;   // nvjpegJpegStream_t

// The entry points this project calls, as nvjpeg.h declares them (device and
// pinned allocators passed as null: nvJPEG's defaults).
struct NvjpegApi {
  int (*nvjpegCreateEx)(int backend, void* dev_allocator, void* pinned_allocator,
                        unsigned flags, NvjpegHandle* handle) = nullptr;
  int (*nvjpegDestroy)(NvjpegHandle handle) = nullptr;
  int (*nvjpegJpegStateCreate)(NvjpegHandle handle, NvjpegState* state) = nullptr;
  int (*nvjpegJpegStateDestroy)(NvjpegState state) = nullptr;
  int (*nvjpegJpegStreamCreate)(NvjpegHandle handle, NvjpegStream* stream) = nullptr;
  int (*nvjpegJpegStreamDestroy)(NvjpegStream stream) = nullptr;
  int (*nvjpegJpegStreamParse)(NvjpegHandle handle, const unsigned char* data, size_t length,
                               int save_metadata, int save_stream,
                               NvjpegStream stream) = nullptr;
  int (*nvjpegJpegStreamGetJpegEncoding)(NvjpegStream stream, int* encoding) = nullptr;
  int (*nvjpegJpegStreamGetFrameDimensions)(NvjpegStream stream, unsigned* width,
                                            unsigned* height) = nullptr;
  int (*nvjpegJpegStreamGetComponentsNum)(NvjpegStream stream, unsigned* components) = nullptr;
  int (*nvjpegJpegStreamGetComponentDimensions)(NvjpegStream stream, unsigned component,
                                                unsigned* width, unsigned* height) = nullptr;
  int (*nvjpegJpegStreamGetSamplePrecision)(NvjpegStream stream, unsigned* precision) = nullptr;
  // `*is_supported` is 0 when the hardware CAN decode the stream (sic).
  int (*nvjpegDecodeBatchedSupported)(NvjpegHandle handle, NvjpegStream stream,
                                      int* is_supported) = nullptr;
  int (*nvjpegDecodeBatchedInitialize)(NvjpegHandle handle, NvjpegState state, int batch_size,
                                       int max_cpu_threads, int output_format) = nullptr;
  int (*nvjpegDecodeBatched)(NvjpegHandle handle, NvjpegState state,
                             const unsigned char* const* data, const size_t* lengths,
                             NvjpegImage* destinations, CUstream stream) = nullptr;
  // One picture on any backend (the fallback for what the hardware refuses).
  int (*nvjpegDecode)(NvjpegHandle handle, NvjpegState state, const unsigned char* data,
                      size_t length, int output_format, NvjpegImage* destination,
                      CUstream stream) = nullptr;
};

// "NVJPEG_STATUS_BAD_JPEG" etc.
const char* NvjpegStatusName(int status);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVJPEG_API_H_
