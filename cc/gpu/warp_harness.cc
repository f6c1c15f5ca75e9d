// Proves the GPU similarity warp without TensorFlow: compares it with the CPU
// reference (cc/warp/similarity_warp.cc) on generated pictures and matrices,
// in both layouts, then times it. Prints one JSON object.
//
//   cmake -S cc/gpu -B build/gpu && cmake --build build/gpu -j && build/gpu/warp_harness
//   (or: make gpu-harness)
//
// Exit status: 0 = proven (GPU within tolerance of the CPU), 1 = mismatch or
// CUDA error, 2 = bad arguments, 3 = no GPU here (the JSON says why).
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
#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/similarity_warp_gpu.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace {

struct Options {
  int batch = 256;
  int in_size = 512;
  int out_size = 224;
  int iterations = 20;
};

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
    if (!ok) {
      std::fprintf(stderr,
                   "usage: warp_harness [--batch 256] [--in 512] [--out 224] "
                   "[--iterations 20]\n");
      return false;
    }
  }
  return true;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  return out + "\"";
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

// Random similarity transforms (scale, rotation, translation, flips) mapping
// output pixels to input pixels, some reaching outside the picture; every
// 8th picture gets a mild perspective term to exercise the W division.
std::vector<float> MakeMatrices(const Options& o) {
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

Status Upload(const CudaDriver& d, const void* host, size_t bytes, DeviceBuffer* buf) {
  buf->d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&buf->ptr, bytes));
  TFG_CU_RETURN_IF_ERROR(d, cuMemcpyHtoD(buf->ptr, host, bytes));
  return Status::Ok();
}

struct Check {
  double max_abs_diff_levels = 0;
  int64_t values_off_by_more_than_one = 0;
};

// Warps the batch on both sides with bias 0, norm 1 (so outputs are levels)
// and compares.
Status CompareLayout(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
                     warp::Layout layout, const std::vector<uint8_t>& pictures,
                     const std::vector<float>& matrices, CUstream stream, Check* check) {
  warp::WarpGeometry g;
  g.in_height = g.in_width = o.in_size;
  g.channels = 3;
  g.out_height = g.out_width = o.out_size;
  g.layout = layout;
  const float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {-1, -2, -3};
  const size_t in_picture = static_cast<size_t>(o.in_size) * o.in_size * 3;
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;

  DeviceBuffer src, mats, dbias, dnorm, doob, dst;
  TFG_RETURN_IF_ERROR(Upload(d, pictures.data(), pictures.size(), &src));
  TFG_RETURN_IF_ERROR(Upload(d, matrices.data(), matrices.size() * sizeof(float), &mats));
  TFG_RETURN_IF_ERROR(Upload(d, bias, sizeof(bias), &dbias));
  TFG_RETURN_IF_ERROR(Upload(d, norm, sizeof(norm), &dnorm));
  TFG_RETURN_IF_ERROR(Upload(d, oob, sizeof(oob), &doob));
  dst.d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&dst.ptr, o.batch * out_picture * sizeof(float)));
  TFG_RETURN_IF_ERROR(warp.Launch(g, o.batch, src.ptr, static_cast<int64_t>(in_picture),
                                  mats.ptr, dbias.ptr, dnorm.ptr, doob.ptr, dst.ptr, stream));
  TFG_CU_RETURN_IF_ERROR(d, cuStreamSynchronize(stream));
  std::vector<float> gpu(o.batch * out_picture);
  TFG_CU_RETURN_IF_ERROR(d, cuMemcpyDtoH(gpu.data(), dst.ptr, gpu.size() * sizeof(float)));

  std::vector<float> cpu(o.batch * out_picture);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int b = static_cast<int>(t); b < o.batch; b += static_cast<int>(threads)) {
        warp::WarpPicture(g, pictures.data() + b * in_picture, &matrices[b * 9], bias, norm,
                          oob, cpu.data() + b * out_picture);
      }
    });
  }
  for (auto& th : pool) th.join();
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    if (!(diff <= check->max_abs_diff_levels)) check->max_abs_diff_levels = diff;  // NaN too
    if (!(diff <= 1.0)) ++check->values_off_by_more_than_one;
  }
  return Status::Ok();
}

// Images/s of the warp alone: `iterations` launches of the whole batch
// (ImageNet bias and norm, NCHW float output), timed with CUDA events.
Status TimeWarp(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
                const std::vector<uint8_t>& pictures, const std::vector<float>& matrices,
                CUstream stream, double* images_per_s) {
  warp::WarpGeometry g;
  g.in_height = g.in_width = o.in_size;
  g.channels = 3;
  g.out_height = g.out_width = o.out_size;
  g.layout = warp::Layout::kNCHW;
  const float bias[3] = {123.675f, 116.28f, 103.53f};
  const float norm[3] = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f}, oob[3] = {0, 0, 0};
  const size_t in_picture = static_cast<size_t>(o.in_size) * o.in_size * 3;
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;
  std::vector<uint8_t> planar;
  ToNchw(pictures, o.batch, o.in_size, &planar);
  DeviceBuffer src, mats, dbias, dnorm, doob, dst;
  TFG_RETURN_IF_ERROR(Upload(d, planar.data(), planar.size(), &src));
  TFG_RETURN_IF_ERROR(Upload(d, matrices.data(), matrices.size() * sizeof(float), &mats));
  TFG_RETURN_IF_ERROR(Upload(d, bias, sizeof(bias), &dbias));
  TFG_RETURN_IF_ERROR(Upload(d, norm, sizeof(norm), &dnorm));
  TFG_RETURN_IF_ERROR(Upload(d, oob, sizeof(oob), &doob));
  dst.d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&dst.ptr, o.batch * out_picture * sizeof(float)));
  auto launch = [&] {
    return warp.Launch(g, o.batch, src.ptr, static_cast<int64_t>(in_picture), mats.ptr,
                       dbias.ptr, dnorm.ptr, doob.ptr, dst.ptr, stream);
  };
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

int Run(const Options& o) {
  const bool nvcuvid = SharedLibraryPresent("libnvcuvid.so.1");
  const CudaDriver* d = nullptr;
  Status loaded = LoadCudaDriver(&d);
  int devices = 0;
  if (loaded.ok() && d->cuDeviceGetCount(&devices) == CUDA_SUCCESS && devices == 0) {
    loaded = UnavailableError("the CUDA driver reports no device");
  }
  if (!loaded.ok()) {
    std::printf("{\"gpu\": false, \"reason\": %s, \"libnvcuvid_present\": %s}\n",
                JsonString(loaded.message()).c_str(), nvcuvid ? "true" : "false");
    return 3;
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
  if (!s.ok()) return fail(s);

  std::vector<uint8_t> pictures;
  MakePictures(o, &pictures);
  const std::vector<float> matrices = MakeMatrices(o);
  std::vector<uint8_t> planar;
  ToNchw(pictures, o.batch, o.in_size, &planar);
  Check nhwc, nchw;
  s = CompareLayout(*d, warp, o, warp::Layout::kNHWC, pictures, matrices, stream, &nhwc);
  if (s.ok()) s = CompareLayout(*d, warp, o, warp::Layout::kNCHW, planar, matrices, stream, &nchw);
  double images_per_s = 0;
  if (s.ok()) s = TimeWarp(*d, warp, o, pictures, matrices, stream, &images_per_s);
  if (!s.ok()) return fail(s);

  // The proof's tolerance: 2 levels of 255 before normalization.
  const bool within = nhwc.max_abs_diff_levels <= 2.0 && nchw.max_abs_diff_levels <= 2.0;
  std::printf(
      "{\"gpu\": true, \"device\": %s, \"compute_capability\": \"%d.%d\", "
      "\"driver_version\": %d, \"libnvcuvid_present\": %s, \"batch\": %d, "
      "\"input\": \"%dx%dx3 uint8\", \"output\": \"%dx%d float32\", "
      "\"max_abs_diff_levels\": {\"NHWC\": %.3f, \"NCHW\": %.3f}, "
      "\"values_off_by_more_than_one_level\": {\"NHWC\": %lld, \"NCHW\": %lld}, "
      "\"within_2_levels\": %s, \"warp_images_per_s\": %.0f, \"iterations\": %d}\n",
      JsonString(name).c_str(), major, minor, version, nvcuvid ? "true" : "false", o.batch,
      o.in_size, o.in_size, o.out_size, o.out_size, nhwc.max_abs_diff_levels,
      nchw.max_abs_diff_levels, static_cast<long long>(nhwc.values_off_by_more_than_one),
      static_cast<long long>(nchw.values_off_by_more_than_one), within ? "true" : "false",
      images_per_s, o.iterations);
  d->cuStreamDestroy(stream);
  d->cuDevicePrimaryCtxRelease(device);
  return within ? 0 : 1;
}

}  // namespace
}  // namespace gpu
}  // namespace tfg

int main(int argc, char** argv) {
  tfg::gpu::Options options;
  if (!tfg::gpu::ParseArgs(argc, argv, &options)) return 2;
  return tfg::gpu::Run(options);
}
