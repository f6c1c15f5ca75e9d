// The NVDEC and CUDA driver calls the decoder pool makes, as two tables of
// function pointers.
//
// Why tables: the pool never calls libcuda.so.1 or libnvcuvid.so.1 directly.
// In the product the tables are filled at run time from those libraries
// (nvdec_loader.h, through ffnvcodec's header-only loader), so nothing links a
// CUDA library; in tests they are filled by a fake that records every call and
// can fail any of them (testing/fake_nvdec.h). The types come from ffnvcodec's
// headers (Debian's libffmpeg-nvenc-dev), which declare the CUDA types
// themselves: this code compiles without the CUDA toolkit.
#ifndef TF_GULP_CC_GPU_NVDEC_API_H_
#define TF_GULP_CC_GPU_NVDEC_API_H_

#include <ffnvcodec/dynlink_cuda.h>
#include <ffnvcodec/dynlink_cuviddec.h>
#include <ffnvcodec/dynlink_nvcuvid.h>

namespace tfg {
namespace gpu {

// ffnvcodec 11.1 declares no type for these two; their signatures are the
// driver API's (cuda.h).
typedef CUresult CUDAAPI tcuDriverGetVersion_t(int* version);
typedef CUresult CUDAAPI tcuCtxSynchronize_t(void);
typedef CUresult CUDAAPI tcuStreamGetCtx_t(CUstream stream, CUcontext* context);

// cuda.h's CUDA_ERROR_OUT_OF_MEMORY; ffnvcodec 11.1's CUresult does not name it.
constexpr CUresult kCudaErrorOutOfMemory = static_cast<CUresult>(2);

// The calls ffnvcodec's loader binds, as X(its type, the name): one list
// declares the tables' fields below and gpu_runtime.cc's copy from the loaded
// libraries, so the two cannot drift apart.
//  - CUDA: context, events, stream sync for the decoder pool; the warp's
//    module and launch on a caller's stream (stream_warp.h); similarity_warp's
//    parameters to the device, ordered on its stream.
//  - NVDEC (libnvcuvid.so.1): cuvidMapVideoFrame is the 64-bit
//    cuvidMapVideoFrame64 (ffnvcodec maps the name on 64-bit hosts);
//    cuvidGetDecodeStatus says whether a mapped picture decoded cleanly
//    (older drivers may lack it: then not checked).
#define TFG_FFNVCODEC_CUDA_CALLS(X)             \
  X(tcuGetErrorName, cuGetErrorName)            \
  X(tcuCtxPushCurrent_v2, cuCtxPushCurrent)     \
  X(tcuCtxPopCurrent_v2, cuCtxPopCurrent)       \
  X(tcuEventCreate, cuEventCreate)              \
  X(tcuEventDestroy_v2, cuEventDestroy)         \
  X(tcuEventRecord, cuEventRecord)              \
  X(tcuEventQuery, cuEventQuery)                \
  X(tcuEventSynchronize, cuEventSynchronize)    \
  X(tcuStreamSynchronize, cuStreamSynchronize)  \
  X(tcuModuleLoadData, cuModuleLoadData)        \
  X(tcuModuleGetFunction, cuModuleGetFunction)  \
  X(tcuLaunchKernel, cuLaunchKernel)            \
  X(tcuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync)

#define TFG_FFNVCODEC_NVDEC_CALLS(X)                    \
  X(tcuvidGetDecoderCaps, cuvidGetDecoderCaps)          \
  X(tcuvidCreateDecoder, cuvidCreateDecoder)            \
  X(tcuvidDestroyDecoder, cuvidDestroyDecoder)          \
  X(tcuvidReconfigureDecoder, cuvidReconfigureDecoder)  \
  X(tcuvidDecodePicture, cuvidDecodePicture)            \
  X(tcuvidMapVideoFrame, cuvidMapVideoFrame)            \
  X(tcuvidGetDecodeStatus, cuvidGetDecodeStatus)        \
  X(tcuvidUnmapVideoFrame, cuvidUnmapVideoFrame)        \
  X(tcuvidCreateVideoParser, cuvidCreateVideoParser)    \
  X(tcuvidParseVideoData, cuvidParseVideoData)          \
  X(tcuvidDestroyVideoParser, cuvidDestroyVideoParser)

#define TFG_API_FIELD(type, name) type* name = nullptr;

// The CUDA driver calls the decoder pool and the warp make.
struct CudaApi {
  // ffnvcodec 11.1 loads none of these three; gpu_runtime.cc looks them up.
  tcuDriverGetVersion_t* cuDriverGetVersion = nullptr;
  tcuCtxSynchronize_t* cuCtxSynchronize = nullptr;
  tcuStreamGetCtx_t* cuStreamGetCtx = nullptr;
  TFG_FFNVCODEC_CUDA_CALLS(TFG_API_FIELD)
};

// The NVDEC calls the decoder pool makes.
struct NvdecApi {
  TFG_FFNVCODEC_NVDEC_CALLS(TFG_API_FIELD)
};

#undef TFG_API_FIELD

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_API_H_
