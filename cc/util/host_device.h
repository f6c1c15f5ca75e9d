// TFG_HOST_DEVICE marks small inline functions that nvcc compiles for both the
// GPU and the host, and that g++ compiles as plain inline functions: the CPU
// and GPU paths then run the very same arithmetic (Y'CbCr conversion, the
// warp's per-pixel sampling), and the host can check what the GPU will do.
#ifndef TF_GULP_CC_UTIL_HOST_DEVICE_H_
#define TF_GULP_CC_UTIL_HOST_DEVICE_H_

#ifdef __CUDACC__
#define TFG_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TFG_HOST_DEVICE inline
#endif

#endif  // TF_GULP_CC_UTIL_HOST_DEVICE_H_
