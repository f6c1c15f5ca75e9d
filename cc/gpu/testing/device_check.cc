// The GPU path's device check: one phase per run, one JSON object on stdout
// (tools/gpu_device_check.sh writes each to its own file the moment it ends).
// It drives exactly the code the op kernels call: StreamWarper (similarity_warp),
// NvdecRgbDecoder's pools and launcher (decode_hevc) and DecodeWarped
// (decode_hevc_warped), on the driver gpu_runtime loads, or on the host
// stand-in (check_driver_host.cc) for the dry run.
//
//   device_check runtime
//   device_check warp       [--batch 256] [--iterations 5] [--small]
//   device_check nvdec      [--data DIR] [--small]
//   device_check throughput [--data DIR] [--images 2048] [--sessions 1,2,4,7,14] [--dmon FILE]
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

#include "cc/codec/ycbcr.h"
#include "cc/gpu/decode_hevc_body.h"
#include "cc/gpu/decode_hevc_warped_body.h"
#include "cc/gpu/nvdec_pool.h"
#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/nvdec_warp.h"
#include "cc/gpu/stream_warp.h"
#include "cc/gpu/testing/check_driver.h"
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

// ---------------------------------------------------------------- arguments
struct Args {
  std::string phase;
  std::string data = "cc/gpu/testing/data";
  std::string dmon;
  int batch = 256;
  int iterations = 5;
  int images = 2048;
  bool small = false;
  std::vector<int> sessions = {1, 2, 4, 7, 14};
};

bool ParseArgs(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->phase = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--small") {
      a->small = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (k == "--data") {
      a->data = v;
    } else if (k == "--dmon") {
      a->dmon = v;
    } else if (k == "--batch") {
      a->batch = std::atoi(v.c_str());
    } else if (k == "--iterations") {
      a->iterations = std::atoi(v.c_str());
    } else if (k == "--images") {
      a->images = std::atoi(v.c_str());
    } else if (k == "--sessions") {
      a->sessions.clear();
      std::stringstream list(v);
      for (std::string n; std::getline(list, n, ',');) a->sessions.push_back(std::atoi(n.c_str()));
    } else {
      return false;
    }
  }
  const bool phase_ok = a->phase == "runtime" || a->phase == "warp" || a->phase == "nvdec" ||
                        a->phase == "throughput";
  return phase_ok && a->batch > 0 && a->iterations > 0 && a->images > 0 &&
         !a->sessions.empty() &&
         std::all_of(a->sessions.begin(), a->sessions.end(), [](int s) { return s > 0; });
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
                 const Args& a, double* rgb_per_s, double* fused_per_s) {
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

int WarpPhase(const CheckDriver& d, const Args& a) {
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
int StartNvdecPhase(const CheckDriver& d, const Args& a, const char* phase, bool bad_data_is_2,
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

int NvdecPhase(const CheckDriver& d, const Args& a) {
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
  if (s.ok()) {
    std::vector<float> got(per * n);
    s = dev.Download(d_out, got.data(), got.size() * 4);
    for (size_t k = 0; s.ok() && k < got.size(); ++k) diff.Add(got[k], data.reference[k]);
  }
  if (!s.ok()) j.Str("error", s.message());
  const bool within = s.ok() && failed == 0 && rgb_failed == 0 && diff.Within();
  j.Num("samples", static_cast<double>(n)).Num("decode_warp_failed", failed)
      .Num("decode_rgb_failed", rgb_failed).Add("first_errors", "[" + errors + "]")
      .Num("decode_hevc_warped_vs_cpu_max_abs_diff_levels", diff.max)
      .Num("values_off_by_more_than_2_levels", static_cast<double>(diff.off))
      .Bool("within_2_levels", within);
  std::printf("%s\n", j.Text().c_str());
  return within ? 0 : 1;
}

// ---------------------------------------------------------------- throughput
// `images` pictures from `pool` (indices into data.samples) over `sessions`
// decode sessions, one thread and stream each; decode alone (the picture is
// released at once) or decode + the fused warp into a batch of 256 slots.
Status Throughput(const CheckDriver& d, Device& dev, const Data& data,
                  const std::vector<size_t>& pool, int sessions, int images, bool warp,
                  CUdeviceptr d_out, double* per_s) {
  NvdecPoolOptions options;
  options.sessions = sessions;
  // Gone before the streams (its pools wait on events recorded there).
  auto owned = std::make_unique<NvdecRgbDecoder>(d.cuda, d.nvdec_api, d.fatbin, d.fatbin_size,
                                                 options);
  NvdecRgbDecoder& decoder = *owned;
  int largest = 0;
  for (size_t i : pool) largest = std::max({largest, data.samples[i].width, data.samples[i].height});
  decoder.RaiseMaxSize(largest, largest);
  const size_t per = static_cast<size_t>(data.out_size) * data.out_size * 3;
  std::vector<CUstream> streams(sessions);
  for (CUstream& st : streams) TFG_CU(d, cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  // Warm-up: each session's decoder is created before the clock starts.
  for (int t = 0; t < sessions; ++t) {
    const Sample& s = data.samples[pool[0]];
    TFG_RETURN_IF_ERROR(decoder.DecodeThen(s.bytes.data(), s.bytes.size(), streams[t],
                                           s.file.c_str(),
                                           [](CUcontext, const NvdecPicture&) {
                                             return Status::Ok();
                                           }));
  }
  for (CUstream st : streams) TFG_CU(d, cuda.cuStreamSynchronize(st));
  std::atomic<int> next{0};
  std::vector<Status> results(sessions);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < sessions; ++t) {
    threads.emplace_back([&, t] {
      d.cuCtxSetCurrent(dev.context);
      for (int i = next++; i < images; i = next++) {
        const size_t k = pool[i % pool.size()];
        const Sample& s = data.samples[k];
        Status st = warp ? DecodeWarped(&decoder, s.bytes.data(), s.bytes.size(), streams[t],
                                        s.file.c_str(), PlanFor(data, k, d_out + per * 4 * (i % 256)))
                         : decoder.DecodeThen(s.bytes.data(), s.bytes.size(), streams[t],
                                              s.file.c_str(),
                                              [](CUcontext, const NvdecPicture&) {
                                                return Status::Ok();
                                              });
        if (!st.ok()) {
          results[t] = st;
          return;
        }
      }
      const CUresult r = d.cuda.cuStreamSynchronize(streams[t]);
      if (r != CUDA_SUCCESS) results[t] = CudaCallError(d.cuda, r, "cuStreamSynchronize");
    });
  }
  for (auto& th : threads) th.join();
  *per_s = images / Seconds(start);
  owned.reset();
  for (CUstream st : streams) d.cuStreamDestroy(st);
  for (const Status& st : results) TFG_RETURN_IF_ERROR(st);
  return Status::Ok();
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

int ThroughputPhase(const CheckDriver& d, const Args& a) {
  Data data;
  Device dev;
  Json j;
  const int done = StartNvdecPhase(d, a, "throughput", false, &data, &dev, &j);
  if (done >= 0) return done;
  Status s;
  // The engine count as the pool sees it (cuvidGetDecoderCaps' nNumNVDECs).
  int engines = 0;
  {
    std::unique_ptr<NvdecPool> probe;
    s = NvdecPool::Create(&d.cuda, &d.nvdec_api, dev.context, NvdecPoolOptions(), &probe);
    if (s.ok()) engines = probe->sessions();
  }
  const size_t per = static_cast<size_t>(data.out_size) * data.out_size * 3;
  CUdeviceptr d_out = 0;
  if (s.ok()) s = dev.Alloc(per * 256 * 4, &d_out);
  std::vector<size_t> fixed, mix;
  for (size_t i = 0; i < data.samples.size(); ++i) {
    mix.push_back(i);
    if (data.samples[i].width == 512 && data.samples[i].height == 512) fixed.push_back(i);
  }
  const int images = a.small ? 64 : a.images;
  std::string runs;
  double best_decode = 0, best_both = 0;
  int best_sessions = 0;
  for (const auto& [name, pool] : {std::make_pair(std::string("512x512"), fixed),
                                   std::make_pair(std::string("dataset_mix"), mix)}) {
    for (int sessions : a.sessions) {
      if (!s.ok() || pool.empty()) break;
      double decode = 0, both = 0;
      Status run = Throughput(d, dev, data, pool, sessions, images, false, d_out, &decode);
      if (run.ok()) run = Throughput(d, dev, data, pool, sessions, images, true, d_out, &both);
      Json r;
      r.Str("samples", name).Num("sessions", sessions).Num("decode_images_per_s", decode)
          .Num("decode_and_warp_images_per_s", both);
      if (!run.ok()) r.Str("error", run.message());
      runs += (runs.empty() ? "" : ", ") + r.Text();
      if (run.ok() && name == "512x512") {
        best_decode = std::max(best_decode, decode);
        if (both > best_both) {
          best_both = both;
          best_sessions = sessions;
        }
      }
    }
  }
  if (!s.ok()) j.Str("error", s.message());
  // The bound is what was measured: the best rate over the session counts,
  // with the engine count and the decoder utilisation beside it to say how
  // close to the hardware that is.
  j.Num("nvdec_engines", engines).Num("images_per_run", images).Add("runs", "[" + runs + "]")
      .Num("measured_peak_decode_images_per_s_512", best_decode)
      .Num("measured_peak_decode_and_warp_images_per_s_512", best_both)
      .Num("peak_at_sessions", best_sessions).Add("dmon", DmonSummary(a.dmon))
      .Num("target_decode_and_warp_images_per_s_512_h100", 10000);
  std::printf("%s\n", j.Text().c_str());
  return s.ok() && runs.find("\"error\"") == std::string::npos ? 0 : 1;
}

int RuntimePhase(const CheckDriver& d) {
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
  std::printf("%s\n", j.Text().c_str());
  return s.ok() ? 0 : 3;
}

}  // namespace
}  // namespace testing
}  // namespace gpu
}  // namespace tfg

int main(int argc, char** argv) {
  using namespace tfg::gpu::testing;
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: device_check runtime|warp|nvdec|throughput [--data DIR] [--batch N] "
                 "[--iterations N] [--images N] [--sessions 1,2,4,7,14] [--dmon FILE] [--small]\n");
    return 2;
  }
  CheckDriver driver;
  LoadCheckDriver(&driver);
  if (args.phase == "runtime") return RuntimePhase(driver);
  if (args.phase == "warp") return WarpPhase(driver, args);
  if (args.phase == "nvdec") return NvdecPhase(driver, args);
  return ThroughputPhase(driver, args);
}
