// The GPU path's device check: one phase per run, one JSON object on stdout
// (tools/gpu_device_check.sh writes each to its own file the moment it ends).
// It drives exactly the code the op kernels call: StreamWarper (similarity_warp),
// NvdecRgbDecoder's pools and launcher (decode_hevc) and DecodeWarped
// (decode_hevc_warped), on the driver gpu_runtime loads, or on the host
// stand-in (check_driver_host.cc) for the dry run.
//
//   device_check runtime    [--data DIR]   (with the decoders' device memory)
//   device_check warp       [--batch 256] [--iterations 5] [--small]
//   device_check nvdec      [--data DIR] [--small]
//   device_check throughput [--data DIR] [--images 8192] [--sessions 1,2,4,7,14] [--dmon FILE]
//                           [--budget-s S]
//
// Exit status: 0 = checked (NVDEC missing is a result: "nvdec": "unavailable: ..."),
// 1 = a mismatch or an error, 2 = bad arguments or data, 3 = no GPU kernels can run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cc/codec/hevc_coded_size.h"
#include "cc/codec/ycbcr.h"
#include "cc/gpu/decode_hevc_body.h"
#include "cc/gpu/decode_hevc_warped_body.h"
#include "cc/gpu/nvdec_pool.h"
#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/nvdec_warp.h"
#include "cc/gpu/stream_warp.h"
#include "cc/gpu/testing/check_driver.h"
#include "cc/gpu/testing/color_check.h"
#include "cc/gpu/testing/decode_runs.h"
#include "cc/gpu/testing/extra_phases.h"
#include "cc/gpu/testing/phase_args.h"
#include "cc/util/json_text.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

constexpr double kTolerance = 2.0;  // levels, as the CPU path's tests allow

// ---------------------------------------------------------------- JSON out
// NaN and infinities are not JSON: null.
std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

class Json {
 public:
  Json& Add(const std::string& key, const std::string& raw) {
    text_ += (text_.empty() ? "" : ", ") + JsonQuoted(key) + ": " + raw;
    return *this;
  }
  Json& Str(const std::string& key, const std::string& v) { return Add(key, JsonQuoted(v)); }
  Json& Num(const std::string& key, double v) { return Add(key, Number(v)); }
  Json& Bool(const std::string& key, bool v) { return Add(key, v ? "true" : "false"); }
  std::string Text() const { return "{" + text_ + "}"; }

 private:
  std::string text_;
};

std::string NvdecText(const Status& s) {
  return s.ok() ? "available" : "unavailable: " + s.message();
}

// ---------------------------------------------------------------- device
Status Check(const CheckDriver& d, CUresult r, const char* call) {
  return r == CUDA_SUCCESS ? Status::Ok() : CudaCallError(d.cuda, r, call);
}
#define TFG_CU(d, call) TFG_RETURN_IF_ERROR(Check((d), (d).call, #call))

// Device memory freed with the Device.
struct Device {
  const CheckDriver* d = nullptr;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string name;
  int major = 0, minor = 0;
  std::vector<CUdeviceptr> allocations;

  ~Device() {
    if (d == nullptr) return;
    for (CUdeviceptr p : allocations) d->cuMemFree(p);
    if (stream != nullptr) d->cuStreamDestroy(stream);
  }
  Status Alloc(size_t bytes, CUdeviceptr* p) {
    TFG_RETURN_IF_ERROR(Check(*d, d->cuMemAlloc(p, bytes ? bytes : 1), "cuMemAlloc"));
    allocations.push_back(*p);
    return Status::Ok();
  }
  // Ordered on the kernels' stream (see CheckDriver on why never cuMemcpyHtoD).
  Status Upload(const void* host, size_t bytes, CUdeviceptr* p) {
    TFG_RETURN_IF_ERROR(Alloc(bytes, p));
    return Check(*d, d->cuMemcpyHtoDAsync(*p, host, bytes, stream), "cuMemcpyHtoDAsync");
  }
  Status Download(CUdeviceptr p, void* host, size_t bytes) {
    TFG_RETURN_IF_ERROR(Check(*d, d->cuMemcpyDtoHAsync(host, p, bytes, stream),
                              "cuMemcpyDtoHAsync"));
    return Check(*d, d->cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  // NaN bytes (0xFF): a value a kernel never wrote fails the comparison.
  Status Poison(CUdeviceptr p, size_t bytes) {
    return Check(*d, d->cuMemsetD8Async(p, 0xFF, bytes, stream), "cuMemsetD8Async");
  }
};

Status OpenDevice(const CheckDriver& d, Device* dev) {
  dev->d = &d;
  CUdevice device = 0;
  char name[256] = {0};
  TFG_CU(d, cuDeviceGet(&device, 0));
  TFG_CU(d, cuDeviceGetName(name, sizeof(name) - 1, device));
  dev->name = name;
  TFG_CU(d, cuDeviceGetAttribute(&dev->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 device));
  TFG_CU(d, cuDeviceGetAttribute(&dev->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 device));
  TFG_CU(d, cuDevicePrimaryCtxRetain(&dev->context, device));
  TFG_CU(d, cuCtxSetCurrent(dev->context));
  // Non-blocking, as TensorFlow's compute stream: nothing on the NULL stream
  // orders work on it.
  TFG_CU(d, cuStreamCreate(&dev->stream, CU_STREAM_NON_BLOCKING));
  return Status::Ok();
}

Json Header(const CheckDriver& d, const Device* dev, const std::string& phase) {
  Json j;
  j.Str("phase", phase).Bool("gpu", d.on_gpu && d.kernels.ok()).Str("driver", d.kind)
      .Str("path", d.path).Num("driver_version", d.driver_version);
  if (dev != nullptr && !dev->name.empty()) {
    j.Str("device", dev->name)
        .Str("compute_capability", std::to_string(dev->major) + "." + std::to_string(dev->minor));
  }
  return j;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// ---------------------------------------------------------------- test data
std::vector<float> Matrices(int count, int in_h, int in_w, int out_h, int out_w, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> m(static_cast<size_t>(count) * 9);
  for (int b = 0; b < count; ++b) {
    // Output -> input: scale, rotate, shift; every 5th maps partly outside,
    // every 8th has a perspective term.
    const float s = (0.6f + 0.8f * u(rng)) * std::min(in_h / float(out_h), in_w / float(out_w));
    const float a = (u(rng) - 0.5f) * 0.8f;
    float* x = &m[9 * b];
    x[0] = s * std::cos(a); x[1] = -s * std::sin(a);
    x[3] = s * std::sin(a); x[4] = s * std::cos(a);
    x[2] = in_w * (b % 5 == 0 ? 0.6f : 0.2f * u(rng));
    x[5] = in_h * 0.2f * u(rng);
    x[6] = 0; x[7] = b % 8 == 7 ? 1e-4f : 0.f; x[8] = 1;
  }
  return m;
}

std::vector<uint8_t> Pictures(size_t bytes, unsigned seed) {
  // Smooth content with some noise: bilinear taps matter, rounding is tested.
  std::vector<uint8_t> p(bytes);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < bytes; ++i) {
    p[i] = static_cast<uint8_t>((i * 7 + (i / 97) * 3 + (rng() & 15)) & 0xFF);
  }
  return p;
}

struct Diff {
  double max = 0;
  int64_t off = 0;  // values more than kTolerance away (NaN included)
  void Add(double got, double want) {
    const double d = std::fabs(got - want);
    if (!(d <= max)) max = std::isnan(d) ? NAN : std::max(max, d);
    if (!(d <= kTolerance)) ++off;
  }
  bool Within() const { return off == 0; }
};

// ---------------------------------------------------------------- warp phase
// RGB pictures through StreamWarper (similarity_warp's GPU kernel), against the
// CPU warp (cc/warp). `frames` > 1: clips, the clip's matrix repeated per frame
// as the op repeats it.
Status CheckRgb(Device& dev, const StreamWarper& warper, warp::Layout layout, int channels,
                int clips, int frames, Diff* diff) {
  const warp::WarpGeometry g{53, 67, channels, 31, 40, layout};
  const int n = clips * frames;
  const size_t in_size = static_cast<size_t>(g.in_height * g.in_width * channels);
  const size_t out_size = static_cast<size_t>(g.out_height * g.out_width * channels);
  const std::vector<uint8_t> src = Pictures(in_size * n, 7 + channels);
  const std::vector<float> clip_m = Matrices(clips, 53, 67, 31, 40, 11);
  std::vector<float> m;
  for (int c = 0; c < clips; ++c)
    for (int f = 0; f < frames; ++f) m.insert(m.end(), &clip_m[9 * c], &clip_m[9 * c] + 9);
  const float bias[4] = {0, 0, 0, 0}, norm[4] = {1, 1, 1, 1}, oob[4] = {0, 128, 255, 64};
  CUdeviceptr d_src, d_params, d_dst;
  TFG_RETURN_IF_ERROR(dev.Upload(src.data(), src.size(), &d_src));
  TFG_RETURN_IF_ERROR(dev.Alloc(StreamWarper::ParamFloats(n, channels) * 4, &d_params));
  TFG_RETURN_IF_ERROR(dev.Alloc(out_size * n * 4, &d_dst));
  TFG_RETURN_IF_ERROR(dev.Poison(d_dst, out_size * n * 4));
  // As the op runs it: the clips' matrices and the channel parameters from
  // host memory, copied and warped on the stream (StreamWarper::LaunchFromHost).
  TFG_RETURN_IF_ERROR(warper.LaunchFromHost(g, clips, frames, clip_m.data(), bias, norm, oob,
                                            d_src, d_params, d_dst, dev.stream));
  std::vector<float> got(out_size * n);
  TFG_RETURN_IF_ERROR(dev.Download(d_dst, got.data(), got.size() * 4));
  std::vector<float> want(out_size);
  for (int b = 0; b < n; ++b) {
    warp::WarpPicture(g, &src[in_size * b], &m[9 * b], bias, norm, oob, want.data());
    for (size_t k = 0; k < out_size; ++k) diff->Add(got[out_size * b + k], want[k]);
  }
  return Status::Ok();
}

// An NV12 surface as NVDEC lays one out: luma rows `pitch` apart, interleaved
// Cb Cr after `surface_height` luma rows.
struct Nv12 {
  int width = 0, height = 0, pitch = 0, surface_height = 0;
  std::vector<uint8_t> bytes;
};
Nv12 MakeNv12(int width, int height, unsigned seed) {
  Nv12 s;
  s.width = width; s.height = height;
  s.pitch = (width + 63) / 64 * 64;
  s.surface_height = (height + 15) / 16 * 16;
  s.bytes = Pictures(static_cast<size_t>(s.pitch) * s.surface_height * 3 / 2, seed);
  return s;
}
codec::YcbcrPicture PictureAt(const Nv12& s, CUdeviceptr base, bool full_range) {
  NvdecPicture p;
  p.width = s.width; p.height = s.height; p.pitch = s.pitch;
  p.luma = base;
  p.chroma = base + static_cast<unsigned long long>(s.pitch) * s.surface_height;
  p.surface_height = s.surface_height;
  p.full_range = full_range;
  p.matrix_coefficients = 1;  // BT.709
  return YcbcrOf(p);
}

// decode_hevc_warped's fused kernel (the op's launcher: NvdecRgbDecoder::Launch
// with DecodeWarpLaunchDims) on NV12 surfaces made here, against the CPU path:
// the CPU decoder's conversion (codec::PixelToRgb) of the region, then the CPU
// warp (cc/warp) in float or uint8.
Status CheckFused(Device& dev, NvdecRgbDecoder& launcher, bool u8, bool nchw, bool bilinear,
                  Diff* diff) {
  const Nv12 s = MakeNv12(131, 97, 21);
  CUdeviceptr d_surface;
  TFG_RETURN_IF_ERROR(dev.Upload(s.bytes.data(), s.bytes.size(), &d_surface));
  codec::YcbcrPicture device_picture = PictureAt(s, d_surface, /*full_range=*/false);
  const codec::YcbcrPicture host_picture =
      PictureAt(s, reinterpret_cast<CUdeviceptr>(s.bytes.data()), false);
  const int count = 6;
  const std::vector<float> m = Matrices(count, 80, 100, 33, 45, 5);
  const warp::WarpGeometry g{80, 100, 3, 33, 45, nchw ? warp::Layout::kNCHW : warp::Layout::kNHWC};
  const size_t values = static_cast<size_t>(g.out_height * g.out_width * 3);
  const size_t bytes = values * (u8 ? 1 : 4) * count;
  CUdeviceptr d_dst;
  TFG_RETURN_IF_ERROR(dev.Alloc(bytes, &d_dst));
  TFG_RETURN_IF_ERROR(dev.Poison(d_dst, bytes));
  const float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {0, 128, 255};
  for (int b = 0; b < count; ++b) {
    RegionWarp w;
    w.x0 = 1 + b % 3; w.y0 = 3; w.width = 100; w.height = 80;  // odd crop offsets
    std::copy(&m[9 * b], &m[9 * b] + 9, w.matrix);
    std::copy(oob, oob + 3, w.oob_color);
    w.out_height = static_cast<int>(g.out_height);
    w.out_width = static_cast<int>(g.out_width);
    w.nchw = nchw; w.bilinear_chroma = bilinear; w.u8_output = u8;
    CUdeviceptr dst = d_dst + values * (u8 ? 1 : 4) * b;
    void* args[] = {&device_picture, &w, &dst};
    TFG_RETURN_IF_ERROR(launcher.Launch(dev.context, "tfg_decode_warp_ycbcr",
                                        DecodeWarpLaunchDims(w), args, dev.stream,
                                        "device check picture"));
  }
  std::vector<uint8_t> got(bytes);
  TFG_RETURN_IF_ERROR(dev.Download(d_dst, got.data(), bytes));
  for (int b = 0; b < count; ++b) {
    // The CPU path: the region converted to RGB as the CPU decoder converts,
    // then the CPU warp.
    std::vector<uint8_t> rgb(static_cast<size_t>(g.in_height * g.in_width * 3));
    std::vector<uint8_t> planar(rgb.size());
    const int x0 = 1 + b % 3, y0 = 3;
    for (int y = 0; y < g.in_height; ++y)
      for (int x = 0; x < g.in_width; ++x)
        codec::PixelToRgb(host_picture, x0 + x, y0 + y, bilinear, &rgb[(y * g.in_width + x) * 3]);
    const uint8_t* src = rgb.data();
    if (nchw) {
      for (int c = 0; c < 3; ++c)
        for (int k = 0; k < g.in_height * g.in_width; ++k) planar[c * g.in_height * g.in_width + k] = rgb[k * 3 + c];
      src = planar.data();
    }
    if (u8) {
      std::vector<uint8_t> want(values);
      warp::WarpRows(g, src, &m[9 * b], oob, 0, g.out_height, want.data());
      for (size_t k = 0; k < values; ++k) diff->Add(got[values * b + k], want[k]);
    } else {
      std::vector<float> want(values);
      warp::WarpPicture(g, src, &m[9 * b], bias, norm, oob, want.data());
      const float* f = reinterpret_cast<const float*>(got.data()) + values * b;
      for (size_t k = 0; k < values; ++k) diff->Add(f[k], want[k]);
    }
  }
  return Status::Ok();
}

// Images/s of the warp alone: 512x512 RGB pictures already in device memory
// to 224x224x3 float, `batch` per launch (StreamWarper); and the fused kernel
// on 512x512 NV12 surfaces, one launch per picture as decode_hevc_warped launches.
Status TimeWarps(Device& dev, const StreamWarper& warper, NvdecRgbDecoder& launcher,
                 const PhaseArgs& a, double* rgb_per_s, double* fused_per_s) {
  const int batch = a.small ? 8 : a.batch;
  const int iterations = a.small ? 1 : a.iterations;
  const warp::WarpGeometry g{512, 512, 3, 224, 224};
  const size_t in_size = 512 * 512 * 3, out_values = 224 * 224 * 3;
  CUdeviceptr d_src, d_m, d_bias, d_norm, d_oob, d_dst;
  const std::vector<float> m = Matrices(batch, 512, 512, 224, 224, 3);
  const float bias[3] = {0, 0, 0}, norm[3] = {1, 1, 1}, oob[3] = {0, 0, 0};
  TFG_RETURN_IF_ERROR(dev.Alloc(in_size * batch, &d_src));
  TFG_RETURN_IF_ERROR(dev.Upload(m.data(), m.size() * 4, &d_m));
  TFG_RETURN_IF_ERROR(dev.Upload(bias, 12, &d_bias));
  TFG_RETURN_IF_ERROR(dev.Upload(norm, 12, &d_norm));
  TFG_RETURN_IF_ERROR(dev.Upload(oob, 12, &d_oob));
  TFG_RETURN_IF_ERROR(dev.Alloc(out_values * batch * 4, &d_dst));
  TFG_RETURN_IF_ERROR(dev.Poison(d_src, in_size * batch));
  TFG_RETURN_IF_ERROR(warper.Launch(g, batch, d_src, d_m, d_bias, d_norm, d_oob, d_dst,
                                    dev.stream));  // warm-up: module load
  TFG_CU(*dev.d, cuda.cuStreamSynchronize(dev.stream));
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    TFG_RETURN_IF_ERROR(warper.Launch(g, batch, d_src, d_m, d_bias, d_norm, d_oob, d_dst,
                                      dev.stream));
  }
  TFG_CU(*dev.d, cuda.cuStreamSynchronize(dev.stream));
  *rgb_per_s = batch * iterations / Seconds(start);

  const Nv12 s = MakeNv12(512, 512, 9);
  CUdeviceptr d_surface;
  TFG_RETURN_IF_ERROR(dev.Upload(s.bytes.data(), s.bytes.size(), &d_surface));
  codec::YcbcrPicture picture = PictureAt(s, d_surface, false);
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    for (int b = 0; b < batch; ++b) {
      RegionWarp w;
      w.width = w.height = 512;
      std::copy(&m[9 * b], &m[9 * b] + 9, w.matrix);
      w.out_height = w.out_width = 224;
      CUdeviceptr dst = d_dst + out_values * 4 * b;
      void* args[] = {&picture, &w, &dst};
      TFG_RETURN_IF_ERROR(launcher.Launch(dev.context, "tfg_decode_warp_ycbcr",
                                          DecodeWarpLaunchDims(w), args, dev.stream, "timing"));
    }
  }
  TFG_CU(*dev.d, cuda.cuStreamSynchronize(dev.stream));
  *fused_per_s = batch * iterations / Seconds(start);
  return Status::Ok();
}

int WarpPhase(const CheckDriver& d, const PhaseArgs& a) {
  Device dev;
  Status s = d.kernels.ok() ? OpenDevice(d, &dev) : d.kernels;
  Json j = Header(d, &dev, "warp");
  j.Str("nvdec", NvdecText(d.nvdec));
  if (!s.ok()) {
    std::printf("%s\n", j.Str("error", s.message()).Text().c_str());
    return d.kernels.ok() ? 1 : 3;
  }
  // One loader for both launchers, as the op library shares KernelModules::Embedded.
  KernelModules modules(d.cuda, d.fatbin, d.fatbin_size);
  const StreamWarper warper(d.cuda, &modules);
  NvdecRgbDecoder launcher(d.cuda, d.nvdec_api, &modules, NvdecPoolOptions());
  bool within = true;
  std::string checks;
  auto record = [&](const std::string& name, const Status& st, const Diff& diff) {
    Json c;
    c.Str("check", name).Num("max_abs_diff_levels", diff.max)
        .Num("values_off_by_more_than_2_levels", static_cast<double>(diff.off));
    if (!st.ok()) c.Str("error", st.message());
    within = within && st.ok() && diff.Within();
    checks += (checks.empty() ? "" : ", ") + c.Text();
  };
  for (warp::Layout layout : {warp::Layout::kNHWC, warp::Layout::kNCHW}) {
    const std::string l = layout == warp::Layout::kNHWC ? "NHWC" : "NCHW";
    for (int channels : {3, 1, 4}) {
      Diff diff;
      record("rgb " + l + " " + std::to_string(channels) + "ch uint8->float",
             CheckRgb(dev, warper, layout, channels, 5, 1, &diff), diff);
    }
    Diff clip;
    record("clips " + l + " 4x3 frames", CheckRgb(dev, warper, layout, 3, 4, 3, &clip), clip);
  }
  for (bool u8 : {false, true})
    for (bool nchw : {false, true})
      for (bool bilinear : {true, false}) {
        Diff diff;
        record(std::string("nv12 fused ") + (u8 ? "uint8" : "float") + (nchw ? " NCHW" : " NHWC") +
                   (bilinear ? " bilinear" : " nearest") + " chroma",
               CheckFused(dev, launcher, u8, nchw, bilinear, &diff), diff);
      }
  double rgb_per_s = 0, fused_per_s = 0;
  s = TimeWarps(dev, warper, launcher, a, &rgb_per_s, &fused_per_s);
  if (!s.ok()) {
    j.Str("timing_error", s.message());
    within = false;
  }
  j.Add("checks", "[" + checks + "]").Bool("within_2_levels", within)
      .Num("rgb_warp_512_to_224_images_per_s", rgb_per_s)
      .Num("fused_nv12_warp_512_to_224_images_per_s", fused_per_s)
      .Num("timing_batch", a.small ? 8 : a.batch);
  std::printf("%s\n", j.Text().c_str());
  return within ? 0 : 1;
}

// ---------------------------------------------------------------- NVDEC data
struct Sample {
  std::string file;
  int width = 0, height = 0;  // the clean picture, at the top left of the coded frame
  std::vector<uint8_t> bytes;  // Annex-B
};
struct Data {
  int out_size = 224;
  std::vector<Sample> samples;
  std::vector<float> matrices;   // [N, 9]
  std::vector<float> reference;  // [N, out, out, 3] levels (the CPU path's)
};

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), {});
}

float HalfToFloat(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -v : v;
}

Status LoadData(const std::string& dir, Data* data) {
  std::ifstream index(dir + "/index.txt");
  if (!index) return NotFoundError(dir, "/index.txt: missing (tools/gpu_proof_data.py makes it)");
  Sample s;
  while (index >> s.file >> s.width >> s.height) {
    s.bytes = ReadFile(dir + "/" + s.file);
    if (s.bytes.empty()) return NotFoundError(dir, "/", s.file, ": missing or empty");
    data->samples.push_back(s);
  }
  const size_t n = data->samples.size();
  const std::vector<uint8_t> m = ReadFile(dir + "/matrices.f32");
  const std::vector<uint8_t> r = ReadFile(dir + "/reference.f16");
  const size_t per = static_cast<size_t>(data->out_size) * data->out_size * 3;
  if (n == 0 || m.size() != n * 9 * 4 || r.size() != n * per * 2) {
    return DataLossError(dir, ": ", n, " samples, ", m.size(), " matrix bytes, ", r.size(),
                         " reference bytes do not fit together");
  }
  data->matrices.resize(n * 9);
  std::memcpy(data->matrices.data(), m.data(), m.size());
  data->reference.resize(n * per);
  for (size_t i = 0; i < data->reference.size(); ++i) {
    data->reference[i] = HalfToFloat(static_cast<uint16_t>(r[2 * i] | r[2 * i + 1] << 8));
  }
  return Status::Ok();
}

// decode_hevc_warped's plan for a data sample: the clean picture at the top
// left, the carried matrix, float levels (bias 0, norm 1), bilinear chroma.
WarpPlanner PlanFor(const Data& data, size_t i, CUdeviceptr dst) {
  return [&data, i, dst](int width, int height, RegionWarp* w, CUdeviceptr* out) {
    const Sample& s = data.samples[i % data.samples.size()];
    if (width < s.width || height < s.height) {
      return DataLossError(s.file, ": NVDEC decoded ", width, "x", height, ", the CPU decoder ",
                           s.width, "x", s.height);
    }
    w->x0 = w->y0 = 0;
    w->width = s.width;
    w->height = s.height;
    const float* m = &data.matrices[9 * (i % data.samples.size())];
    std::copy(m, m + 9, w->matrix);
    const float oob[3] = {0, 128, 255};
    std::copy(oob, oob + 3, w->oob_color);
    w->out_height = w->out_width = data.out_size;
    w->bilinear_chroma = 1;
    w->u8_output = 0;
    *out = dst;
    return Status::Ok();
  };
}

int LargestSide(const Data& data) {
  int m = 0;
  for (const Sample& s : data.samples) m = std::max({m, s.width, s.height});
  return m;
}

// How both NVDEC phases start: the data loaded, the device opened (when there
// are kernels), the phase's header with NVDEC's state. -1 when the phase goes
// on; else its exit code, its line printed: 1 for an error (2 for unreadable
// data where `bad_data_is_2`), 0 or 3 when NVDEC or the kernels are missing
// (a result, not a failure).
int StartNvdecPhase(const CheckDriver& d, const PhaseArgs& a, const char* phase, bool bad_data_is_2,
                    Data* data, Device* dev, Json* j) {
  Status s = LoadData(a.data, data);
  if (s.ok() && d.kernels.ok()) s = OpenDevice(d, dev);
  *j = Header(d, dev, phase);
  j->Str("nvdec", NvdecText(d.nvdec));
  if (!s.ok()) {
    std::printf("%s\n", j->Str("error", s.message()).Text().c_str());
    const bool bad_data = s.code() == StatusCode::kNotFound || s.code() == StatusCode::kDataLoss;
    return bad_data && bad_data_is_2 ? 2 : 1;
  }
  if (!d.kernels.ok() || !d.nvdec.ok()) {
    std::printf("%s\n", j->Text().c_str());
    return d.kernels.ok() ? 0 : 3;
  }
  return -1;
}

int NvdecPhase(const CheckDriver& d, const PhaseArgs& a) {
  Data data;
  Device dev;
  Json j;
  const int done = StartNvdecPhase(d, a, "nvdec", true, &data, &dev, &j);
  if (done >= 0) return done;
  Status s;
  NvdecPoolOptions options;
  options.sessions = 1;
  NvdecRgbDecoder decoder(d.cuda, d.nvdec_api, d.fatbin, d.fatbin_size, options);
  const size_t n = a.small ? std::min<size_t>(4, data.samples.size()) : data.samples.size();
  const size_t per = static_cast<size_t>(data.out_size) * data.out_size * 3;
  CUdeviceptr d_out;
  s = dev.Alloc(per * n * 4, &d_out);
  if (s.ok()) s = dev.Poison(d_out, per * n * 4);
  std::string errors;
  int failed = 0;
  // decode_hevc_warped's body as the op runs it: one batch of every sample
  // (decoders sized from the SPSs first), decodes on the body's threads, the
  // per-picture errors in `done`; the samples after a failed one still run.
  TaskThreads* threads = TaskThreads::ForDecodes();  // the ops' threads
  if (s.ok()) {
    auto batch = std::make_shared<WarpedBatch>();
    batch->stream = dev.stream;
    for (size_t i = 0; i < n; ++i) {
      const Sample& sample = data.samples[i];
      batch->pictures.push_back({sample.bytes.data(), sample.bytes.size(), sample.file});
    }
    batch->plan = [&data, d_out, per](int64_t i, int width, int height, RegionWarp* w,
                                      CUdeviceptr* dst) {
      return PlanFor(data, static_cast<size_t>(i), d_out + per * 4 * i)(width, height, w, dst);
    };
    std::promise<std::vector<Status>> statuses;
    DecodeWarpedBatch(&decoder, threads, batch,
                      [&](std::vector<Status> got) { statuses.set_value(std::move(got)); });
    for (const Status& one : statuses.get_future().get()) {
      if (!one.ok()) {
        ++failed;
        if (failed <= 5) errors += (errors.empty() ? "" : ", ") + JsonQuoted(one.message());
      }
    }
  }
  // decode_hevc's body (NVDEC -> RGB kernel) on every sample too, one call
  // each as the op is called: errors only.
  int rgb_failed = 0;
  CUdeviceptr d_rgb = 0;
  if (s.ok()) s = dev.Alloc(static_cast<size_t>(LargestSide(data)) * LargestSide(data) * 3, &d_rgb);
  for (size_t i = 0; s.ok() && i < n; ++i) {
    const Sample& sample = data.samples[i];
    auto picture = std::make_shared<RgbPicture>();
    picture->data = sample.bytes.data();
    picture->size = sample.bytes.size();
    picture->what = sample.file;
    picture->stream = dev.stream;
    picture->allocate = [&sample, d_rgb](int width, int height, RgbRegion* region,
                                         CUdeviceptr* dst) {
      region->width = std::min(width, sample.width);
      region->height = std::min(height, sample.height);
      *dst = d_rgb;
      return Status::Ok();
    };
    std::promise<Status> decoded;
    DecodeHevcRgb(&decoder, threads, picture, [&](Status got) { decoded.set_value(got); });
    const Status one = decoded.get_future().get();
    if (!one.ok()) {
      ++rgb_failed;
      if (failed + rgb_failed <= 5) errors += (errors.empty() ? "" : ", ") + JsonQuoted(one.message());
    }
  }
  Diff diff;
  std::vector<float> got(per * n);
  if (s.ok()) {
    s = dev.Download(d_out, got.data(), got.size() * 4);
    for (size_t k = 0; s.ok() && k < got.size(); ++k) diff.Add(got[k], data.reference[k]);
  }
  // The colour case (color_check.h): the batch again with a colour draw per
  // picture, float and uint8, against the CPU's colour output stage on the
  // levels the first batch gave.
  double color_worst = 0;
  int color_failed = 0;
  for (int u8 = 0; s.ok() && u8 < 2; ++u8) {
    const size_t bytes = u8 ? 1 : 4;
    CUdeviceptr d_col = 0;
    s = dev.Alloc(per * n * bytes, &d_col);
    if (!s.ok()) break;
    auto batch = std::make_shared<WarpedBatch>();
    batch->stream = dev.stream;
    for (size_t i = 0; i < n; ++i) {
      const Sample& sample = data.samples[i];
      batch->pictures.push_back({sample.bytes.data(), sample.bytes.size(), sample.file});
      batch->colors.push_back(CheckColorDraw(static_cast<int>(i)));
    }
    batch->plan = [&data, d_col, per, bytes, u8](int64_t i, int width, int height, RegionWarp* w,
                                                 CUdeviceptr* dst) {
      TFG_RETURN_IF_ERROR(
          PlanFor(data, static_cast<size_t>(i), d_col + per * bytes * i)(width, height, w, dst));
      w->u8_output = u8;
      for (int c = 0; c < 3; ++c) {
        w->bias[c] = u8 ? 0.f : kCheckBias[c];
        w->norm[c] = u8 ? 1.f : kCheckNorm[c];
      }
      return Status::Ok();
    };
    std::promise<std::vector<Status>> statuses;
    DecodeWarpedBatch(&decoder, threads, batch,
                      [&](std::vector<Status> st) { statuses.set_value(std::move(st)); });
    std::vector<Status> colored = statuses.get_future().get();
    std::vector<float> out_f(u8 ? 0 : per * n);
    std::vector<uint8_t> out_u8(u8 ? per * n : 0);
    s = u8 ? dev.Download(d_col, out_u8.data(), out_u8.size())
           : dev.Download(d_col, out_f.data(), out_f.size() * 4);
    for (size_t i = 0; s.ok() && i < n; ++i) {
      if (!colored[i].ok()) {
        ++color_failed;
        if (failed + rgb_failed + color_failed <= 5) {
          errors += (errors.empty() ? "" : ", ") + JsonQuoted(colored[i].message());
        }
        continue;
      }
      const warp::ColorDraw& draw = batch->colors[i];
      const double d = u8 ? U8ColorDiff(draw, per / 3, &got[per * i], &out_u8[per * i])
                          : FloatColorDiff(draw, per / 3, &got[per * i], &out_f[per * i]);
      color_worst = std::max(color_worst, d);
      color_failed += d > 1;
    }
  }
  if (!s.ok()) j.Str("error", s.message());
  const bool within =
      s.ok() && failed == 0 && rgb_failed == 0 && diff.Within() && color_failed == 0;
  j.Num("samples", static_cast<double>(n)).Num("decode_warp_failed", failed)
      .Num("decode_rgb_failed", rgb_failed).Add("first_errors", "[" + errors + "]")
      .Num("decode_hevc_warped_vs_cpu_max_abs_diff_levels", diff.max)
      .Num("values_off_by_more_than_2_levels", static_cast<double>(diff.off))
      .Num("color_max_abs_diff_levels", color_worst).Num("color_pictures_off", color_failed)
      .Bool("color_within_1_level", s.ok() && color_failed == 0)
      .Bool("within_2_levels", within);
  std::printf("%s\n", j.Text().c_str());
  return within ? 0 : 1;
}

// ---------------------------------------------------------------- throughput
// One set's runs at every session count (decode alone, then decode + the fused
// warp where the source can warp), each a TimedDecodeRun; runs left when
// `deadline` has passed are reported skipped, so the phase ends inside its
// timeout with what it measured.
struct Peaks {
  double decode = 0, both = 0;
  int sessions = 0;  // where `both` was measured
};
std::string ThroughputRuns(const DecodeSource& source, const std::string& name,
                           const std::vector<const RunSample*>& set, const PhaseArgs& a, int images,
                           CUdeviceptr d_out, int out_size,
                           std::chrono::steady_clock::time_point deadline, bool* failed,
                           Peaks* peaks) {
  std::string runs;
  for (int sessions : a.sessions) {
    Json r;
    r.Str("samples", name).Num("sessions", sessions);
    if (std::chrono::steady_clock::now() > deadline) {
      runs += (runs.empty() ? "" : ", ") + r.Str("skipped", "the phase's time budget").Text();
      continue;
    }
    TimedRun decode, both;
    Status run = TimedDecodeRun(source, set, sessions, images, false, d_out, out_size, &decode);
    if (run.ok() && source.can_warp()) {
      run = TimedDecodeRun(source, set, sessions, images, true, d_out, out_size, &both);
    }
    const NvdecPoolStats& timed = source.can_warp() ? both.timed : decode.timed;
    r.Num("decode_images_per_s", decode.images_per_s)
        .Num("decode_second_half_images_per_s", decode.second_half_images_per_s);
    if (source.can_warp()) {
      r.Num("decode_and_warp_images_per_s", both.images_per_s)
          .Num("decode_and_warp_second_half_images_per_s", both.second_half_images_per_s);
    }
    // Inside the clock of both runs: decoders made or destroyed (0 when the
    // warm-up did its job) and reconfigures refused.
    const auto in_loop = [&](NvdecPoolCall c) {
      return static_cast<double>(decode.timed[c].calls + both.timed[c].calls);
    };
    r.Num("timed_decoder_creates", in_loop(NvdecPoolCall::kCreate))
        .Num("timed_decoder_destroys", in_loop(NvdecPoolCall::kDestroy))
        .Num("timed_reconfigures_refused", in_loop(NvdecPoolCall::kReconfigureRefused))
        .Add("timed_pool_calls", StatsJson(timed));
    if (!run.ok()) {
      r.Str("error", run.message());
      *failed = true;
    } else {
      peaks->decode = std::max(peaks->decode, decode.images_per_s);
      if (both.images_per_s > peaks->both) {
        peaks->both = both.images_per_s;
        peaks->sessions = sessions;
      }
    }
    runs += (runs.empty() ? "" : ", ") + r.Text();
  }
  return runs;
}

// nvidia-smi dmon's "dec" column (decoder utilisation, %): the largest and the
// mean of the samples above 0, from the file the script has been writing.
std::string DmonSummary(const std::string& path) {
  std::ifstream f(path);
  if (path.empty() || !f) return "null";
  int column = -1;
  double max = 0, sum = 0;
  int busy = 0, samples = 0;
  for (std::string line; std::getline(f, line);) {
    std::istringstream words(line);
    std::vector<std::string> w((std::istream_iterator<std::string>(words)), {});
    if (w.empty()) continue;
    if (w[0] == "#") {
      for (size_t i = 1; i < w.size(); ++i)
        if (w[i] == "dec" && column < 0) column = static_cast<int>(i) - 1;
      continue;
    }
    if (column < 0 || column >= static_cast<int>(w.size())) continue;
    const double v = std::atof(w[column].c_str());
    ++samples;
    max = std::max(max, v);
    if (v > 0) {
      sum += v;
      ++busy;
    }
  }
  Json j;
  j.Num("samples", samples).Num("dec_util_max_percent", column < 0 ? NAN : max)
      .Num("dec_util_mean_busy_percent", busy ? sum / busy : NAN);
  return j.Text();
}

// The sets the throughput phase times: the 512x512 pictures, the ImageNet-like
// mix (testing/data/sets) and the data's mix as it is.
std::vector<std::pair<std::string, std::vector<const RunSample*>>> ThroughputSets(
    const std::vector<RunSample>& mix, const std::vector<RunSample>& sets) {
  std::vector<const RunSample*> fixed, all;
  for (const RunSample& s : mix) {
    all.push_back(&s);
    if (s.width == 512 && s.height == 512) fixed.push_back(&s);
  }
  // The ImageNet-like set before the old mix: runs past the time budget are skipped from the end.
  return {{"512x512", fixed}, {"imagenet_like", SetOf(sets, "imagenet_like")}, {"dataset_mix", all}};
}

// {"file": [coded width, coded height], ...}: the sizes the decoders are sized from.
std::string CodedSizes(const std::vector<RunSample>& samples) {
  Json j;
  for (const RunSample& s : samples) {
    j.Add(s.file, "[" + std::to_string(s.size.coded_width) + ", " +
                      std::to_string(s.size.coded_height) + "]");
  }
  return j.Text();
}

int ThroughputPhase(const CheckDriver& d, const PhaseArgs& a) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::min(a.budget_s, 1e7)));
  std::vector<RunSample> mix, sets;
  Status s = LoadRunSamples(a.data, false, "dataset_mix", &mix);
  if (s.ok()) s = LoadRunSamples(a.data + "/sets", true, "", &sets);
  Device dev;
  if (s.ok() && d.kernels.ok()) s = OpenDevice(d, &dev);
  Json j = Header(d, &dev, "throughput");
  j.Str("nvdec", NvdecText(d.nvdec));
  if (!s.ok()) {
    std::printf("%s\n", j.Str("error", s.message()).Text().c_str());
    return 1;
  }
  j.Add("coded_sizes", CodedSizes(mix));
  const int images = a.small ? 512 : a.images;
  j.Num("images_per_run", images);
  bool failed = false;
  if (d.path == "dry_run") {
    // No NVDEC on the host stand-in: the same runs, decode alone, on the fake
    // driver, so the pool's counts in the timed loop are checked here too.
    std::string runs;
    std::vector<std::string> problems;
    for (const auto& [name, set] : ThroughputSets(mix, sets)) {
      std::unique_ptr<DecodeSource> fake = DecodeSource::Fake(7);
      Peaks ignored;
      const std::string r =
          ThroughputRuns(*fake, name, set, a, images, 0, 224, deadline, &failed, &ignored);
      runs += (runs.empty() || r.empty() ? "" : ", ") + r;
      for (const std::string& p : fake->problems()) problems.push_back(JsonQuoted(name + ": " + p));
    }
    std::string listed;
    for (const std::string& p : problems) listed += (listed.empty() ? "" : ", ") + p;
    Json f;
    f.Str("source", DecodeSource::NameOf(true)).Add("runs", "[" + runs + "]")
        .Add("problems", "[" + listed + "]");
    j.Add("fake_nvdec", f.Text());
    std::printf("%s\n", j.Text().c_str());
    return failed || !problems.empty() ? 1 : 0;
  }
  if (!d.kernels.ok() || !d.nvdec.ok()) {
    std::printf("%s\n", j.Text().c_str());
    return d.kernels.ok() ? 0 : 3;
  }
  // The engine count as the pool sees it (cuvidGetDecoderCaps' nNumNVDECs).
  int engines = 0;
  {
    std::unique_ptr<NvdecPool> probe;
    s = NvdecPool::Create(&d.cuda, &d.nvdec_api, dev.context, NvdecPoolOptions(), &probe);
    if (s.ok()) engines = probe->sessions();
  }
  const int out_size = 224;
  const size_t per = static_cast<size_t>(out_size) * out_size * 3;
  CUdeviceptr d_out = 0;
  if (s.ok()) s = dev.Alloc(per * 256 * 4, &d_out);
  std::unique_ptr<DecodeSource> source = DecodeSource::Real(d, dev.context);
  std::string runs;
  // The bound is what was measured: the best 512x512 rate over the session
  // counts, with the engine count and the decoder utilisation beside it.
  Peaks peaks, other;
  for (const auto& [name, set] : ThroughputSets(mix, sets)) {
    if (!s.ok() || set.empty()) break;
    const std::string r = ThroughputRuns(*source, name, set, a, images, d_out, out_size, deadline,
                                         &failed, name == "512x512" ? &peaks : &other);
    runs += (runs.empty() || r.empty() ? "" : ", ") + r;
  }
  if (!s.ok()) j.Str("error", s.message());
  j.Num("nvdec_engines", engines).Add("runs", "[" + runs + "]");
  j.Num("measured_peak_decode_images_per_s_512", peaks.decode)
      .Num("measured_peak_decode_and_warp_images_per_s_512", peaks.both)
      .Num("peak_at_sessions", peaks.sessions).Add("dmon", DmonSummary(a.dmon))
      .Num("target_decode_and_warp_images_per_s_512_h100", 10000);
  std::printf("%s\n", j.Text().c_str());
  return s.ok() && !failed ? 0 : 1;
}

// ---------------------------------------------------------------- decoder memory
// The device memory one decode session takes (docs/gpu.md, "GPU memory"):
// cuMemGetInfo before and while a one-session pool holds one decoded, mapped
// picture (its decoder created at that picture's coded size), beside
// NvdecSessionBytes' estimate, and again once the pool is gone. A 64 MiB
// cuMemAlloc is read the same way first, to show the method sees allocations
// (all the dry run can do: it has no NVDEC).
double MiB(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

Status FreeBytes(const CheckDriver& d, size_t* free_bytes, size_t* total_bytes = nullptr) {
  size_t total = 0;
  TFG_RETURN_IF_ERROR(Check(d, d.cuMemGetInfo(free_bytes, &total), "cuMemGetInfo"));
  if (total_bytes != nullptr) *total_bytes = total;
  return Status::Ok();
}

Status SessionMemory(const CheckDriver& d, Device& dev, const Sample& sample, Json* out) {
  NvdecPoolOptions options;
  options.sessions = 1;
  size_t before = 0, during = 0, after = 0;
  TFG_RETURN_IF_ERROR(FreeBytes(d, &before));
  std::unique_ptr<NvdecPool> pool;
  TFG_RETURN_IF_ERROR(NvdecPool::Create(&d.cuda, &d.nvdec_api, dev.context, options, &pool));
  NvdecPicture p;
  Status s = pool->Decode(sample.bytes.data(), sample.bytes.size(), dev.stream,
                          sample.file.c_str(), &p);
  if (s.ok()) s = FreeBytes(d, &during);
  if (s.ok()) s = pool->Release(p, dev.stream);
  const Status shut = pool->Shutdown();
  if (s.ok()) s = shut;
  pool.reset();
  if (s.ok()) s = FreeBytes(d, &after);
  TFG_RETURN_IF_ERROR(s);
  // The coded width is not reported; HEVC codes whole 8x8 blocks at least.
  const unsigned coded_w = (static_cast<unsigned>(p.width) + 7u) & ~7u;
  const unsigned coded_h = static_cast<unsigned>(p.surface_height);
  out->Str("sample", sample.file).Str("coded_size", std::to_string(coded_w) + "x" +
                                                     std::to_string(coded_h))
      .Num("surfaces", options.surfaces).Num("pitch", p.pitch)
      .Num("measured_mib", MiB(before > during ? before - during : 0))
      .Num("estimate_mib", MiB(NvdecSessionBytes(coded_w, coded_h, options.surfaces)))
      .Num("not_returned_after_destroy_mib", MiB(before > after ? before - after : 0));
  return Status::Ok();
}

std::string DecoderMemory(const CheckDriver& d, Device& dev, const PhaseArgs& a) {
  Json j;
  size_t free_bytes = 0, total = 0, with_block = 0;
  Status s = FreeBytes(d, &free_bytes, &total);
  CUdeviceptr block = 0;
  if (s.ok()) s = Check(d, d.cuMemAlloc(&block, size_t{64} << 20), "cuMemAlloc");
  if (s.ok()) {
    s = FreeBytes(d, &with_block);
    d.cuMemFree(block);
  }
  if (!s.ok()) return j.Str("error", s.message()).Text();
  j.Str("method", "cuMemGetInfo before and while a 1-session pool holds one decoded picture")
      .Num("device_total_mib", MiB(total)).Num("device_free_mib", MiB(free_bytes))
      .Num("a_64_mib_alloc_reads_mib",
           MiB(free_bytes > with_block ? free_bytes - with_block : 0));
  if (!d.nvdec.ok()) return j.Str("decoders", "not measured: no NVDEC").Text();
  Data data;
  s = LoadData(a.data, &data);
  if (!s.ok()) return j.Str("error", s.message()).Text();
  const Sample* square = nullptr;
  const Sample* largest = &data.samples[0];
  for (const Sample& sample : data.samples) {
    if (square == nullptr && sample.width == 512 && sample.height == 512) square = &sample;
    if (sample.width * sample.height > largest->width * largest->height) largest = &sample;
  }
  for (auto [key, sample] : {std::make_pair("one_session_512x512", square),
                             std::make_pair("one_session_largest", largest)}) {
    Json one;
    const Status measured = sample == nullptr ? NotFoundError("no 512x512 sample in ", a.data)
                                              : SessionMemory(d, dev, *sample, &one);
    if (!measured.ok()) one.Str("error", measured.message());
    j.Add(key, one.Text());
  }
  return j.Text();
}

int RuntimePhase(const CheckDriver& d, const PhaseArgs& a) {
  Device dev;
  const Status s = d.kernels.ok() ? OpenDevice(d, &dev) : d.kernels;
  Json j = Header(d, &dev, "runtime");
  j.Str("kernels", s.ok() ? "available" : "unavailable: " + s.message())
      .Str("nvdec", NvdecText(d.nvdec)).Num("fatbin_bytes", static_cast<double>(d.fatbin_size));
  if (s.ok() && d.nvdec.ok()) {
    // The NVDEC engine count as the pool sees it (cuvidGetDecoderCaps' nNumNVDECs).
    std::unique_ptr<NvdecPool> probe;
    const Status made =
        NvdecPool::Create(&d.cuda, &d.nvdec_api, dev.context, NvdecPoolOptions(), &probe);
    if (made.ok()) {
      j.Num("nvdec_engines", probe->sessions());
    } else {
      j.Str("nvdec_pool_error", made.message());
    }
  }
  if (s.ok()) j.Add("decoder_memory", DecoderMemory(d, dev, a));
  std::printf("%s\n", j.Text().c_str());
  return s.ok() ? 0 : 3;
}

}  // namespace
}  // namespace testing
}  // namespace gpu
}  // namespace tfg

int main(int argc, char** argv) {
  using namespace tfg::gpu::testing;
  PhaseArgs args;
  if (!ParsePhaseArgs(argc, argv, &args)) {
    std::fprintf(stderr, "usage: device_check %s\n", kPhaseUsage);
    return 2;
  }
  CheckDriver driver;
  LoadCheckDriver(&driver);
  if (args.phase == "runtime") return RuntimePhase(driver, args);
  if (args.phase == "warp") return WarpPhase(driver, args);
  if (args.phase == "nvdec") return NvdecPhase(driver, args);
  if (args.phase == "profile") return ProfilePhase(driver, args);
  if (args.phase == "situations") return SituationsPhase(driver, args);
  if (args.phase == "nvjpeg") return NvjpegPhase(driver, args);
  return ThroughputPhase(driver, args);
}
