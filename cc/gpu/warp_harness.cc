// Proves the GPU similarity warp without TensorFlow: compares it with the CPU
// reference (cc/warp/similarity_warp.cc) on generated pictures and matrices,
// in both layouts, then times it. Prints one JSON object.
//
//   cmake -S cc/gpu -B build/gpu && cmake --build build/gpu -j && build/gpu/warp_harness
//   (or: make gpu-harness)
//
// Before any GPU work it runs the kernel's per-pixel function (warp_pixel.h)
// on the host against the CPU reference, so the kernel's arithmetic is
// checked on machines without a GPU too.
//
// Exit status: 0 = proven (GPU and host emulation within tolerance of the
// CPU), 1 = mismatch or CUDA error, 2 = bad arguments, 3 = no GPU here (the
// JSON says why) and the host emulation within tolerance.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cc/gpu/cuda_driver.h"
#include "cc/gpu/harness_common.h"
#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/similarity_warp_gpu.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/gpu/ycbcr_check.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace {

using harness::Check;
using harness::CheckJson;
using harness::Compare;
using harness::DeviceBuffer;
using harness::ForEachPicture;
using harness::JsonString;
using harness::MakeMatrices;
using harness::Options;
using harness::TimeLaunches;
using harness::Upload;
using harness::Within;

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int* field) {
      if (i + 1 >= argc) return false;
      *field = std::atoi(argv[++i]);
      return *field > 0;
    };
    bool ok = false;
    if (a == "--batch") ok = value(&o->batch);
    if (a == "--in") ok = value(&o->in_size);
    if (a == "--out") ok = value(&o->out_size);
    if (a == "--iterations") ok = value(&o->iterations);
    if (!ok || o->in_size % 2 != 0) {
      std::fprintf(stderr,
                   "usage: warp_harness [--batch 256] [--in 512 (even)] [--out 224] "
                   "[--iterations 20]\n");
      return false;
    }
  }
  return true;
}

// Smooth colour fields plus texture: neighbouring pixels differ, so a wrong
// sample position shows up as a large difference.
void MakePictures(const Options& o, std::vector<uint8_t>* nhwc) {
  const int n = o.in_size;
  nhwc->resize(static_cast<size_t>(o.batch) * n * n * 3);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int b = 0; b < o.batch; ++b) {
    const float fx = 0.02f + 0.2f * u(rng), fy = 0.02f + 0.2f * u(rng), ph = 6.f * u(rng);
    uint8_t* p = nhwc->data() + static_cast<size_t>(b) * n * n * 3;
    for (int y = 0; y < n; ++y) {
      for (int x = 0; x < n; ++x) {
        for (int c = 0; c < 3; ++c) {
          const float v = 127.5f + 100.f * std::sin(fx * x + ph + c) * std::cos(fy * y - c) +
                          20.f * u(rng);
          p[(static_cast<size_t>(y) * n + x) * 3 + c] =
              static_cast<uint8_t>(std::fmin(255.f, std::fmax(0.f, v)));
        }
      }
    }
  }
}

void ToNchw(const std::vector<uint8_t>& nhwc, int batch, int n, std::vector<uint8_t>* nchw) {
  nchw->resize(nhwc.size());
  for (int b = 0; b < batch; ++b) {
    const uint8_t* src = nhwc.data() + static_cast<size_t>(b) * n * n * 3;
    uint8_t* dst = nchw->data() + static_cast<size_t>(b) * n * n * 3;
    for (int i = 0; i < n * n; ++i) {
      for (int c = 0; c < 3; ++c) dst[static_cast<size_t>(c) * n * n + i] = src[i * 3 + c];
    }
  }
}

// One warp problem on the device: the batch's pictures and matrices, the
// per-channel constants, and room for the output.
struct DeviceBatch {
  warp::WarpGeometry geometry;
  int64_t batch = 0;
  int64_t in_picture_bytes = 0;
  DeviceBuffer src, matrices, bias, norm, oob, dst;

  Status Launch(const GpuSimilarityWarp& warp, CUstream stream) const {
    return warp.Launch(geometry, batch, src.ptr, in_picture_bytes, matrices.ptr, bias.ptr,
                       norm.ptr, oob.ptr, dst.ptr, stream);
  }
};

// Square RGB pictures of o.in_size, warped to o.out_size in `layout`.
Status MakeDeviceBatch(const CudaDriver& d, const Options& o, warp::Layout layout,
                       const std::vector<uint8_t>& pictures, const std::vector<float>& matrices,
                       const float* bias, const float* norm, const float* oob,
                       DeviceBatch* out) {
  warp::WarpGeometry& g = out->geometry;
  g.in_height = g.in_width = o.in_size;
  g.channels = 3;
  g.out_height = g.out_width = o.out_size;
  g.layout = layout;
  out->batch = o.batch;
  out->in_picture_bytes = static_cast<int64_t>(o.in_size) * o.in_size * 3;
  const size_t out_values = static_cast<size_t>(o.batch) * o.out_size * o.out_size * 3;
  const size_t channel_bytes = 3 * sizeof(float);
  TFG_RETURN_IF_ERROR(Upload(d, pictures.data(), pictures.size(), &out->src));
  TFG_RETURN_IF_ERROR(
      Upload(d, matrices.data(), matrices.size() * sizeof(float), &out->matrices));
  TFG_RETURN_IF_ERROR(Upload(d, bias, channel_bytes, &out->bias));
  TFG_RETURN_IF_ERROR(Upload(d, norm, channel_bytes, &out->norm));
  TFG_RETURN_IF_ERROR(Upload(d, oob, channel_bytes, &out->oob));
  out->dst.d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&out->dst.ptr, out_values * sizeof(float)));
  return Status::Ok();
}

// The comparisons use bias 0 and norm 1, so outputs are levels (0-255).
const float kLevelsBias[3] = {0, 0, 0}, kLevelsNorm[3] = {1, 1, 1}, kOob[3] = {-1, -2, -3};

warp::WarpGeometry GeometryOf(const Options& o, warp::Layout layout) {
  warp::WarpGeometry g;
  g.in_height = g.in_width = o.in_size;
  g.channels = 3;
  g.out_height = g.out_width = o.out_size;
  g.layout = layout;
  return g;
}

// The CPU reference (cc/warp/similarity_warp.cc).
std::vector<float> CpuReference(const Options& o, warp::Layout layout,
                                const std::vector<uint8_t>& pictures,
                                const std::vector<float>& matrices) {
  const warp::WarpGeometry g = GeometryOf(o, layout);
  const size_t in_picture = static_cast<size_t>(o.in_size) * o.in_size * 3;
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;
  std::vector<float> out(o.batch * out_picture);
  ForEachPicture(o.batch, [&](int b) {
    warp::WarpPicture(g, pictures.data() + b * in_picture, &matrices[b * 9], kLevelsBias,
                      kLevelsNorm, kOob, out.data() + b * out_picture);
  });
  return out;
}

// The kernel's per-pixel function run on the host, pixel by pixel as the
// GPU's threads would.
std::vector<float> HostEmulation(const Options& o, warp::Layout layout,
                                 const std::vector<uint8_t>& pictures,
                                 const std::vector<float>& matrices) {
  const int nchw = layout == warp::Layout::kNCHW ? 1 : 0;
  const PixelStrides in = StridesOf(nchw, o.in_size, o.in_size, 3);
  const PixelStrides out = StridesOf(nchw, o.out_size, o.out_size, 3);
  const size_t in_picture = static_cast<size_t>(o.in_size) * o.in_size * 3;
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;
  std::vector<float> result(o.batch * out_picture);
  ForEachPicture(o.batch, [&](int b) {
    for (int y = 0; y < o.out_size; ++y) {
      for (int x = 0; x < o.out_size; ++x) {
        WarpPixel(pictures.data() + b * in_picture, o.in_size, o.in_size, 3, in,
                  &matrices[b * 9], kLevelsBias, kLevelsNorm, kOob, x, y,
                  result.data() + b * out_picture + y * out.y + x * out.x, out.c);
      }
    }
  });
  return result;
}

// The same warp on the GPU.
Status GpuWarp(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
               warp::Layout layout, const std::vector<uint8_t>& pictures,
               const std::vector<float>& matrices, CUstream stream, std::vector<float>* out) {
  DeviceBatch batch;
  TFG_RETURN_IF_ERROR(MakeDeviceBatch(d, o, layout, pictures, matrices, kLevelsBias,
                                      kLevelsNorm, kOob, &batch));
  TFG_RETURN_IF_ERROR(batch.Launch(warp, stream));
  TFG_CU_RETURN_IF_ERROR(d, cuStreamSynchronize(stream));
  out->resize(static_cast<size_t>(o.batch) * o.out_size * o.out_size * 3);
  TFG_CU_RETURN_IF_ERROR(d, cuMemcpyDtoH(out->data(), batch.dst.ptr, out->size() * sizeof(float)));
  return Status::Ok();
}

// Images/s of the warp alone: `iterations` launches of the whole batch
// (ImageNet bias and norm, NCHW float output), timed with CUDA events.
Status TimeWarp(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
                const std::vector<uint8_t>& pictures, const std::vector<float>& matrices,
                CUstream stream, double* images_per_s) {
  const float bias[3] = {123.675f, 116.28f, 103.53f};
  const float norm[3] = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f}, oob[3] = {0, 0, 0};
  std::vector<uint8_t> planar;
  ToNchw(pictures, o.batch, o.in_size, &planar);
  DeviceBatch batch;
  TFG_RETURN_IF_ERROR(MakeDeviceBatch(d, o, warp::Layout::kNCHW, planar, matrices, bias, norm,
                                      oob, &batch));
  return TimeLaunches(d, o, stream, [&] { return batch.Launch(warp, stream); }, images_per_s);
}

constexpr char kNv12NearestLabel[] = "nearest chroma, NHWC";
constexpr char kNv12BilinearLabel[] = "bilinear chroma, NCHW";

int Run(const Options& o) {
  // The data, the CPU reference and the kernel's arithmetic on the host:
  // checked on every machine, GPU or not.
  std::vector<uint8_t> pictures, planar;
  MakePictures(o, &pictures);
  ToNchw(pictures, o.batch, o.in_size, &planar);
  const std::vector<float> matrices = MakeMatrices(o);
  const std::vector<float> cpu_nhwc = CpuReference(o, warp::Layout::kNHWC, pictures, matrices);
  const std::vector<float> cpu_nchw = CpuReference(o, warp::Layout::kNCHW, planar, matrices);
  const Check host_nhwc =
      Compare(HostEmulation(o, warp::Layout::kNHWC, pictures, matrices), cpu_nhwc);
  const Check host_nchw =
      Compare(HostEmulation(o, warp::Layout::kNCHW, planar, matrices), cpu_nchw);
  // The fused Y'CbCr (NV12) variant against the CPU decoder's conversion + warp.
  const harness::Nv12Batch nv12 = harness::MakeNv12Batch(o);
  Check host_ycbcr_nearest, host_ycbcr_bilinear;
  harness::CheckYcbcrOnHost(o, nv12, matrices, &host_ycbcr_nearest, &host_ycbcr_bilinear);
  const bool host_ok =
      Within(host_nhwc, host_nchw) && Within(host_ycbcr_nearest, host_ycbcr_bilinear);
  const std::string host_json =
      "{\"rgb\": " + CheckJson(host_nhwc, host_nchw) + ", \"nv12\": " +
      CheckJson(host_ycbcr_nearest, host_ycbcr_bilinear, kNv12NearestLabel, kNv12BilinearLabel) +
      "}";

  const bool nvcuvid = SharedLibraryPresent("libnvcuvid.so.1");
  const CudaDriver* d = nullptr;
  Status loaded = LoadCudaDriver(&d);
  int devices = 0;
  if (loaded.ok() && d->cuDeviceGetCount(&devices) == CUDA_SUCCESS && devices == 0) {
    loaded = UnavailableError("the CUDA driver reports no device");
  }
  if (!loaded.ok()) {
    std::printf("{\"gpu\": false, \"reason\": %s, \"libnvcuvid_present\": %s, "
                "\"host_emulation\": %s, \"host_emulation_within_2_levels\": %s}\n",
                JsonString(loaded.message()).c_str(), nvcuvid ? "true" : "false",
                host_json.c_str(), host_ok ? "true" : "false");
    return host_ok ? 3 : 1;
  }
  auto fail = [](const Status& s) {
    std::printf("{\"gpu\": true, \"error\": %s}\n", JsonString(s.message()).c_str());
    return 1;
  };
  int version = 0;
  d->cuDriverGetVersion(&version);
  CUdevice device;
  char name[256] = {0};
  CUcontext context;
  CUstream stream;
  int major = 0, minor = 0;
  CUresult r = d->cuDeviceGet(&device, 0);
  if (r == CUDA_SUCCESS) r = d->cuDeviceGetName(name, sizeof(name) - 1, device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  if (r == CUDA_SUCCESS) r = d->cuDevicePrimaryCtxRetain(&context, device);
  if (r == CUDA_SUCCESS) r = d->cuCtxSetCurrent(context);
  if (r == CUDA_SUCCESS) r = d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) return fail(CudaError(*d, r, "setting up device 0"));

  GpuSimilarityWarp warp;
  Status s = GpuSimilarityWarp::Create(d, tfg_similarity_warp_fatbin, &warp);
  std::vector<float> gpu_nhwc, gpu_nchw;
  if (s.ok()) s = GpuWarp(*d, warp, o, warp::Layout::kNHWC, pictures, matrices, stream, &gpu_nhwc);
  if (s.ok()) s = GpuWarp(*d, warp, o, warp::Layout::kNCHW, planar, matrices, stream, &gpu_nchw);
  double images_per_s = 0, nv12_images_per_s = 0;
  if (s.ok()) s = TimeWarp(*d, warp, o, pictures, matrices, stream, &images_per_s);
  Check gpu_ycbcr_nearest, gpu_ycbcr_bilinear;
  if (s.ok()) {
    s = harness::CheckYcbcrOnGpu(*d, warp, o, nv12, matrices, stream, &gpu_ycbcr_nearest,
                                 &gpu_ycbcr_bilinear, &nv12_images_per_s);
  }
  if (!s.ok()) return fail(s);
  const Check nhwc = Compare(gpu_nhwc, cpu_nhwc), nchw = Compare(gpu_nchw, cpu_nchw);
  const bool within =
      Within(nhwc, nchw) && Within(gpu_ycbcr_nearest, gpu_ycbcr_bilinear);
  std::printf(
      "{\"gpu\": true, \"device\": %s, \"compute_capability\": \"%d.%d\", "
      "\"driver_version\": %d, \"libnvcuvid_present\": %s, \"batch\": %d, "
      "\"input\": \"%dx%dx3 uint8\", \"output\": \"%dx%d float32\", "
      "\"gpu_vs_cpu\": {\"rgb\": %s, \"nv12\": %s}, \"within_2_levels\": %s, "
      "\"host_emulation\": %s, \"warp_images_per_s\": %.0f, "
      "\"nv12_warp_images_per_s\": %.0f, \"iterations\": %d}\n",
      JsonString(name).c_str(), major, minor, version, nvcuvid ? "true" : "false", o.batch,
      o.in_size, o.in_size, o.out_size, o.out_size, CheckJson(nhwc, nchw).c_str(),
      CheckJson(gpu_ycbcr_nearest, gpu_ycbcr_bilinear, kNv12NearestLabel, kNv12BilinearLabel)
          .c_str(),
      within ? "true" : "false", host_json.c_str(), images_per_s, nv12_images_per_s,
      o.iterations);
  d->cuStreamDestroy(stream);
  d->cuDevicePrimaryCtxRelease(device);
  return within && host_ok ? 0 : 1;
}

}  // namespace
}  // namespace gpu
}  // namespace tfg

int main(int argc, char** argv) {
  tfg::gpu::Options options;
  if (!tfg::gpu::ParseArgs(argc, argv, &options)) return 2;
  return tfg::gpu::Run(options);
}
