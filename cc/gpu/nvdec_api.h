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

// The CUDA driver calls the pool needs (context, events, stream sync).
struct CudaApi {
  tcuDriverGetVersion_t* cuDriverGetVersion = nullptr;
  tcuGetErrorName* cuGetErrorName = nullptr;
  tcuCtxPushCurrent_v2* cuCtxPushCurrent = nullptr;
  tcuCtxPopCurrent_v2* cuCtxPopCurrent = nullptr;
  tcuCtxSynchronize_t* cuCtxSynchronize = nullptr;
  tcuEventCreate* cuEventCreate = nullptr;
  tcuEventDestroy_v2* cuEventDestroy = nullptr;
  tcuEventRecord* cuEventRecord = nullptr;
  tcuEventQuery* cuEventQuery = nullptr;
  tcuEventSynchronize* cuEventSynchronize = nullptr;
  tcuStreamSynchronize* cuStreamSynchronize = nullptr;
  // The warp on a caller's stream (stream_warp.h): the stream's context, the
  // kernels' module, the launch. The decoder pool does not use these.
  tcuStreamGetCtx_t* cuStreamGetCtx = nullptr;
  tcuModuleLoadData* cuModuleLoadData = nullptr;
  tcuModuleGetFunction* cuModuleGetFunction = nullptr;
  tcuLaunchKernel* cuLaunchKernel = nullptr;
  // similarity_warp's parameters to the device, ordered on its stream.
  tcuMemcpyHtoDAsync_v2* cuMemcpyHtoDAsync = nullptr;
};

// The NVDEC calls (libnvcuvid.so.1). cuvidMapVideoFrame is the 64-bit
// cuvidMapVideoFrame64 (ffnvcodec maps the name on 64-bit hosts).
struct NvdecApi {
  tcuvidGetDecoderCaps* cuvidGetDecoderCaps = nullptr;
  tcuvidCreateDecoder* cuvidCreateDecoder = nullptr;
  tcuvidDestroyDecoder* cuvidDestroyDecoder = nullptr;
  tcuvidReconfigureDecoder* cuvidReconfigureDecoder = nullptr;
  tcuvidDecodePicture* cuvidDecodePicture = nullptr;
  tcuvidMapVideoFrame* cuvidMapVideoFrame = nullptr;
  // Whether a mapped picture decoded cleanly (older drivers may lack it:
  // then not checked).
  tcuvidGetDecodeStatus* cuvidGetDecodeStatus = nullptr;
  tcuvidUnmapVideoFrame* cuvidUnmapVideoFrame = nullptr;
  tcuvidCreateVideoParser* cuvidCreateVideoParser = nullptr;
  tcuvidParseVideoData* cuvidParseVideoData = nullptr;
  tcuvidDestroyVideoParser* cuvidDestroyVideoParser = nullptr;
};

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_API_H_
