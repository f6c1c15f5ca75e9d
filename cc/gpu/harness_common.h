// Pieces shared by the GPU harness's checks (warp_harness.cc, ycbcr_check.cc):
// options, generated matrices, device buffers, comparisons, timing.
#ifndef TF_GULP_CC_GPU_HARNESS_COMMON_H_
#define TF_GULP_CC_GPU_HARNESS_COMMON_H_

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cc/gpu/cuda_driver.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {
namespace harness {

struct Options {
  int batch = 256;
  int in_size = 512;
  int out_size = 224;
  int iterations = 20;
};

inline std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  return out + "\"";
}

// Random similarity transforms (scale, rotation, translation, flips) mapping
// output pixels to input pixels, some reaching outside the picture; every
// 8th picture gets a mild perspective term to exercise the W division.
inline std::vector<float> MakeMatrices(const Options& o) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> m(static_cast<size_t>(o.batch) * 9);
  for (int b = 0; b < o.batch; ++b) {
    const float scale = (0.6f + 1.2f * u(rng)) * o.in_size / o.out_size;
    const float angle = 6.2831853f * u(rng);
    const float flip = u(rng) < 0.5f ? -1.f : 1.f;
    const float a = scale * std::cos(angle), s = scale * std::sin(angle);
    const float cx = o.in_size * (0.2f + 0.6f * u(rng)), cy = o.in_size * (0.2f + 0.6f * u(rng));
    const float ox = 0.5f * (o.out_size - 1), oy = ox;
    float* M = &m[static_cast<size_t>(b) * 9];
    M[0] = a * flip; M[1] = -s; M[2] = cx - (M[0] * ox + M[1] * oy);
    M[3] = s * flip; M[4] = a;  M[5] = cy - (M[3] * ox + M[4] * oy);
    M[6] = 0.f;      M[7] = 0.f; M[8] = 1.f;
    if (b % 8 == 7) {
      M[6] = 1e-4f;
      M[8] = 1.f - 1e-4f * ox;
    }
  }
  return m;
}

struct DeviceBuffer {
  const CudaDriver* d = nullptr;
  CUdeviceptr ptr = 0;
  ~DeviceBuffer() {
    if (ptr != 0) d->cuMemFree(ptr);
  }
};

inline Status Upload(const CudaDriver& d, const void* host, size_t bytes, DeviceBuffer* buf) {
  buf->d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&buf->ptr, bytes));
  TFG_CU_RETURN_IF_ERROR(d, cuMemcpyHtoD(buf->ptr, host, bytes));
  return Status::Ok();
}

struct Check {
  double max_abs_diff_levels = 0;
  int64_t values_off_by_more_than_one = 0;
};

inline Check Compare(const std::vector<float>& a, const std::vector<float>& b) {
  Check check;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(diff <= check.max_abs_diff_levels)) check.max_abs_diff_levels = diff;  // NaN too
    if (!(diff <= 1.0)) ++check.values_off_by_more_than_one;
  }
  return check;
}

// Runs `picture_fn(b)` for every picture of the batch on all cores.
template <typename Fn>
void ForEachPicture(int batch, Fn picture_fn) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int b = t; b < batch; b += threads) picture_fn(b);
    });
  }
  for (auto& th : pool) th.join();
}

inline std::string CheckJson(const Check& a, const Check& b, const char* label_a = "NHWC",
                             const char* label_b = "NCHW") {
  char buf[384];
  std::snprintf(buf, sizeof(buf),
                "{\"max_abs_diff_levels\": {\"%s\": %.3f, \"%s\": %.3f}, "
                "\"values_off_by_more_than_one_level\": {\"%s\": %lld, \"%s\": %lld}}",
                label_a, a.max_abs_diff_levels, label_b, b.max_abs_diff_levels, label_a,
                static_cast<long long>(a.values_off_by_more_than_one), label_b,
                static_cast<long long>(b.values_off_by_more_than_one));
  return buf;
}

// The proof's tolerance: 2 levels of 255 before normalization.
inline bool Within(const Check& a, const Check& b) {
  return a.max_abs_diff_levels <= 2.0 && b.max_abs_diff_levels <= 2.0;
}

// Images/s of `launch` (one whole batch per call): one untimed launch, then
// o.iterations timed with CUDA events on `stream`.
inline Status TimeLaunches(const CudaDriver& d, const Options& o, CUstream stream,
                           const std::function<Status()>& launch, double* images_per_s) {
  TFG_RETURN_IF_ERROR(launch());  // warm-up
  CUevent start, stop;
  TFG_CU_RETURN_IF_ERROR(d, cuEventCreate(&start, CU_EVENT_DEFAULT));
  TFG_CU_RETURN_IF_ERROR(d, cuEventCreate(&stop, CU_EVENT_DEFAULT));
  TFG_CU_RETURN_IF_ERROR(d, cuEventRecord(start, stream));
  for (int i = 0; i < o.iterations; ++i) TFG_RETURN_IF_ERROR(launch());
  TFG_CU_RETURN_IF_ERROR(d, cuEventRecord(stop, stream));
  TFG_CU_RETURN_IF_ERROR(d, cuEventSynchronize(stop));
  float ms = 0;
  TFG_CU_RETURN_IF_ERROR(d, cuEventElapsedTime(&ms, start, stop));
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  *images_per_s = 1000.0 * o.batch * o.iterations / ms;
  return Status::Ok();
}

}  // namespace harness
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_HARNESS_COMMON_H_
