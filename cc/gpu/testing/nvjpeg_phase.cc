// The device check's nvjpeg phase: the GPU JPEG path (nvJPEG + the fused
// Y'CbCr warp kernel, driven through DecodeJpegWarpedNow as an op would)
// against the CPU fused JPEG path's outputs on every picture kind
// (data/jpeg_ref/), then its rate on gulp-like frames (320x240 4:2:0, clips of
// 8 frames to 112x112) and ImageNet-like JPEGs (to 224x224) at batches of 64
// and 256 frames (data/jpeg/, the bytes the jpeg phase times torchvision on).
// The colour case (color_check.h): the first reference pictures warped to
// levels, then with a colour draw (float and uint8), against the CPU's colour
// output stage on those levels.
// On the dry run nvJPEG is the fake (testing/fake_nvjpeg.h) and the kernels
// run on the host stand-in.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cc/gpu/decode_jpeg_warped_body.h"
#include "cc/gpu/kernel_modules.h"
#include "cc/gpu/nvdec_pool.h"  // CudaCallError
#include "cc/gpu/testing/color_check.h"
#include "cc/gpu/testing/extra_phases.h"
#include "cc/gpu/testing/jpeg_reference.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// A bump allocator over one device allocation, reset between batches (after
// the stream finished the batch).
struct Arena {
  CUdeviceptr base = 0;
  size_t size = 0, used = 0;
  Status Take(size_t bytes, CUdeviceptr* p) {
    bytes = (bytes + 255) & ~size_t{255};
    if (used + bytes > size) return ResourceExhaustedError("the phase's plane arena is full");
    *p = base + used;
    used += bytes;
    return Status::Ok();
  }
};

struct Gpu {
  const CheckDriver* d = nullptr;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::vector<CUdeviceptr> allocations;
  ~Gpu() {
    for (CUdeviceptr p : allocations) d->cuMemFree(p);
    if (stream != nullptr) d->cuStreamDestroy(stream);
  }
  Status Call(CUresult r, const char* what) {
    return r == CUDA_SUCCESS ? Status::Ok() : CudaCallError(d->cuda, r, what);
  }
  Status Alloc(size_t bytes, CUdeviceptr* p) {
    TFG_RETURN_IF_ERROR(Call(d->cuMemAlloc(p, bytes), "cuMemAlloc"));
    allocations.push_back(*p);
    return Status::Ok();
  }
  Status Open(const CheckDriver& driver) {
    d = &driver;
    CUdevice device = 0;
    TFG_RETURN_IF_ERROR(Call(d->cuDeviceGet(&device, 0), "cuDeviceGet"));
    TFG_RETURN_IF_ERROR(Call(d->cuDevicePrimaryCtxRetain(&context, device),
                             "cuDevicePrimaryCtxRetain"));
    TFG_RETURN_IF_ERROR(Call(d->cuCtxSetCurrent(context), "cuCtxSetCurrent"));
    return Call(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  Status Sync() { return Call(d->cuda.cuStreamSynchronize(stream), "cuStreamSynchronize"); }
};

// Reference picture `i` (`jpeg`, named `name`) as a batch of one, warped as
// ReferenceWarp draws it into `out`, its planes from `arena` (emptied: the
// stream finished the last batch). `jpeg` must outlive the batch.
JpegClipBatch ReferenceBatch(const Gpu& gpu, Arena& arena, const std::string& jpeg,
                             const std::string& name, int i, CUdeviceptr out) {
  JpegClipBatch b;
  b.frames.push_back({reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size(), name});
  b.stream = gpu.stream;
  arena.used = 0;
  b.allocate = [&arena](size_t bytes, CUdeviceptr* p) { return arena.Take(bytes, p); };
  b.plan = [i](int64_t, int w, int h, RegionWarp* warp) {
    ReferenceWarp(i, w, h, warp);
    return Status::Ok();
  };
  b.dst = [out](int64_t) { return out; };
  return b;
}

// Correctness: every reference picture, decoded and warped on the GPU, against
// the CPU fused path's bytes. A JSON array; `worst` the largest difference.
std::string Correctness(Gpu& gpu, const JpegWarpGpu& jw, Arena& arena, const std::string& dir,
                        int* worst, int* failures) {
  std::ifstream index(dir + "/index.txt");
  std::string line, rows;
  *worst = 0;
  *failures = 0;
  std::vector<uint8_t> host(kReferenceOut * kReferenceOut * 3);
  CUdeviceptr out = 0;
  Status s = gpu.Alloc(host.size(), &out);
  while (s.ok() && std::getline(index, line)) {
    std::istringstream fields(line);
    std::string base, kind;
    int i = 0;
    if (!(fields >> base >> kind >> i)) continue;
    std::string jpeg, want;
    if (!ReadFile(dir + "/" + base + ".jpg", &jpeg) || !ReadFile(dir + "/" + base + ".u8", &want) ||
        want.size() != host.size()) {
      s = InvalidArgumentError(dir, "/", base, ": missing or of the wrong size");
      break;
    }
    JpegClipBatch b = ReferenceBatch(gpu, arena, jpeg, base, i, out);
    const Status one = DecodeJpegWarpedNow(jw, b)[0];
    int diff = -1;
    if (one.ok()) {
      s = gpu.Call(gpu.d->cuMemcpyDtoHAsync(host.data(), out, host.size(), gpu.stream),
                   "cuMemcpyDtoHAsync");
      if (s.ok()) s = gpu.Sync();
      if (!s.ok()) break;
      diff = 0;
      for (size_t k = 0; k < host.size(); ++k) {
        diff = std::max(diff, std::abs(int(host[k]) - int(static_cast<uint8_t>(want[k]))));
      }
      *worst = std::max(*worst, diff);
    }
    if (!one.ok() || diff > 2) ++*failures;
    rows += std::string(rows.empty() ? "" : ", ") + "{\"picture\": " + Quoted(base) +
            ", \"kind\": " + Quoted(kind) + ", \"status\": " +
            Quoted(one.ok() ? "ok" : one.message()) + ", \"max_abs_diff_levels\": " + Num(diff) +
            "}";
  }
  if (!s.ok()) {
    ++*failures;
    rows += std::string(rows.empty() ? "" : ", ") + "{\"error\": " + Quoted(s.message()) + "}";
  }
  return "[" + rows + "]";
}

// The colour case on the first `count` reference pictures. A JSON array;
// `worst` the largest difference in levels.
std::string ColorCorrectness(Gpu& gpu, const JpegWarpGpu& jw, Arena& arena,
                             const std::string& dir, int count, double* worst, int* failures) {
  std::ifstream index(dir + "/index.txt");
  std::string line, rows;
  *worst = 0;
  *failures = 0;
  const int64_t pixels = int64_t{kReferenceOut} * kReferenceOut;
  std::vector<float> levels(pixels * 3), colored(pixels * 3);
  std::vector<uint8_t> colored_u8(pixels * 3);
  CUdeviceptr out = 0;
  Status s = gpu.Alloc(levels.size() * 4, &out);
  // One frame on the GPU into `out`, downloaded into `host`.
  auto run = [&](const std::string& jpeg, const std::string& name, int i, bool u8,
                 const warp::ColorDraw* color, void* host) {
    JpegClipBatch b = ReferenceBatch(gpu, arena, jpeg, name, i, out);
    b.plan = [&](int64_t, int w, int h, RegionWarp* warp) {
      ReferenceWarp(i, w, h, warp);
      warp->u8_output = u8;
      for (int c = 0; c < 3; ++c) {
        warp->bias[c] = color ? kCheckBias[c] : 0.f;
        warp->norm[c] = color ? kCheckNorm[c] : 1.f;
      }
      return Status::Ok();
    };
    if (color) b.colors = {*color};
    Status one = DecodeJpegWarpedNow(jw, b)[0];
    if (one.ok()) {
      one = gpu.Call(gpu.d->cuMemcpyDtoHAsync(host, out, pixels * 3 * (u8 ? 1 : 4), gpu.stream),
                     "cuMemcpyDtoHAsync");
    }
    if (one.ok()) one = gpu.Sync();
    return one;
  };
  for (int done = 0; s.ok() && done < count && std::getline(index, line);) {
    std::istringstream fields(line);
    std::string base, kind;
    int i = 0;
    if (!(fields >> base >> kind >> i)) continue;
    std::string jpeg;
    if (!ReadFile(dir + "/" + base + ".jpg", &jpeg)) {
      s = InvalidArgumentError(dir, "/", base, ".jpg: missing");
      break;
    }
    ++done;
    const warp::ColorDraw draw = CheckColorDraw(i);
    Status one = run(jpeg, base, i, false, nullptr, levels.data());
    if (one.ok()) one = run(jpeg, base, i, false, &draw, colored.data());
    if (one.ok()) one = run(jpeg, base, i, true, &draw, colored_u8.data());
    double diff_f = -1, diff_u8 = -1;
    if (one.ok()) {
      diff_f = FloatColorDiff(draw, pixels, levels.data(), colored.data());
      diff_u8 = U8ColorDiff(draw, pixels, levels.data(), colored_u8.data());
      *worst = std::max({*worst, diff_f, diff_u8});
    }
    if (!one.ok() || diff_f > 1 || diff_u8 > 1) ++*failures;
    rows += std::string(rows.empty() ? "" : ", ") + "{\"picture\": " + Quoted(base) +
            ", \"kind\": " + Quoted(kind) + ", \"steps\": " + Num(draw.count) +
            ", \"status\": " + Quoted(one.ok() ? "ok" : one.message()) +
            ", \"float_max_abs_diff_levels\": " + Num(diff_f) +
            ", \"u8_max_abs_diff_levels\": " + Num(diff_u8) + "}";
  }
  if (!s.ok()) {
    ++*failures;
    rows += std::string(rows.empty() ? "" : ", ") + "{\"error\": " + Quoted(s.message()) + "}";
  }
  return "[" + rows + "]";
}

// Frames per second of decode + warp on `frames` (cycled) at `batch` frames
// per call in clips of `clip`, to out x out float, for about `seconds`.
std::string Rate(Gpu& gpu, const JpegWarpGpu& jw, Arena& arena, const std::string& name,
                 const std::vector<std::string>& frames, int batch, int clip, int out,
                 double seconds, bool* failed) {
  CUdeviceptr dst = 0;
  const size_t frame_bytes = size_t{4} * out * out * 3;
  Status s = gpu.Alloc(frame_bytes * batch, &dst);
  JpegClipBatch b;
  for (int k = 0; k < batch; ++k) {
    const std::string& f = frames[k % frames.size()];
    b.frames.push_back({reinterpret_cast<const uint8_t*>(f.data()), f.size(),
                        name + " frame " + std::to_string(k)});
  }
  b.frames_per_clip = clip;
  b.stream = gpu.stream;
  b.allocate = [&](size_t bytes, CUdeviceptr* p) { return arena.Take(bytes, p); };
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  uint64_t draws = 0;
  b.plan = [&](int64_t c, int w, int h, RegionWarp* warp) {
    PlanClipWarp(ReferenceSpec(), HashKey({7, 0, draws++ + static_cast<uint64_t>(c)}), w, h, out,
                 out, zero, one, zero, warp);
    return Status::Ok();
  };
  b.dst = [&](int64_t i) { return dst + frame_bytes * i; };
  std::map<std::string, int> routes_failed;
  int calls = 0;
  double elapsed = 0;
  // One untimed call first: nvJPEG's first batch allocates its buffers.
  for (int warm = 1; s.ok() && (warm || calls == 0 || elapsed < seconds); warm = 0) {
    const auto t0 = std::chrono::steady_clock::now();
    arena.used = 0;
    for (const Status& st : DecodeJpegWarpedNow(jw, b)) {
      if (!st.ok()) ++routes_failed[st.message().substr(0, 120)];
    }
    s = gpu.Sync();
    if (!warm) {
      elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++calls;
    }
  }
  *failed = *failed || !s.ok() || !routes_failed.empty();
  std::string errors;
  for (const auto& e : routes_failed) {
    errors += std::string(errors.empty() ? "" : ", ") + Quoted(e.first);
  }
  return "{\"set\": " + Quoted(name) + ", \"batch\": " + Num(batch) + ", \"clip\": " + Num(clip) +
         ", \"out\": " + Num(out) + ", \"calls\": " + Num(calls) + ", \"frames_per_s\": " +
         Num(elapsed > 0 ? calls * batch / elapsed : 0) + ", \"status\": " +
         Quoted(s.ok() ? "ok" : s.message()) + ", \"frame_errors\": [" + errors + "]}";
}

}  // namespace

int NvjpegPhase(const CheckDriver& d, const PhaseArgs& a) {
  std::string json = "{\"phase\": \"nvjpeg\", \"gpu\": " +
                     std::string(d.on_gpu && d.kernels.ok() ? "true" : "false") +
                     ", \"driver\": " + Quoted(d.kind);
  auto finish = [&](int rc) {
    std::printf("%s}\n", json.c_str());
    return rc;
  };
  if (!d.kernels.ok()) {
    json += ", \"nvjpeg\": " + Quoted("not run: " + d.kernels.message());
    return finish(3);
  }
  NvjpegApi api;
  std::string from;
  const Status loaded = LoadCheckNvjpeg(a, &api, &from);
  if (!loaded.ok()) {  // a result: the machine has no nvJPEG
    json += ", \"nvjpeg\": " + Quoted("unavailable: " + loaded.message());
    return finish(0);
  }
  json += ", \"nvjpeg\": " + Quoted("available") + ", \"library\": " + Quoted(from);
  Gpu gpu;
  Status s = gpu.Open(d);
  std::vector<std::string> reasons;
  NvjpegDecoder decoder(api, [&](const std::string& r) { reasons.push_back(r); });
  if (s.ok()) s = decoder.Init();
  KernelModules modules(d.cuda, d.fatbin, d.fatbin_size);
  JpegWarpGpu jw;
  jw.cuda = d.cuda;
  jw.modules = &modules;
  jw.decoder = &decoder;
  Arena arena;
  arena.size = size_t{256} * 1300 * 1300 * 2;  // 256 ImageNet-like 4:4:4 frames' planes at most
  if (a.small) arena.size /= 16;
  if (s.ok()) s = gpu.Alloc(arena.size, &arena.base);
  if (!s.ok()) {
    json += ", \"error\": " + Quoted(s.message());
    return finish(1);
  }
  json += ", \"hardware_backend\": " + std::string(decoder.has_hardware() ? "true" : "false");
  int worst = 0, failures = 0;
  json += ", \"correctness\": " +
          Correctness(gpu, jw, arena, a.data + "/jpeg_ref", &worst, &failures);
  json += ", \"max_abs_diff_levels\": " + Num(worst) +
          ", \"within_2_levels\": " + (failures == 0 ? "true" : "false");
  double color_worst = 0;
  int color_failures = 0;
  json += ", \"color\": " + ColorCorrectness(gpu, jw, arena, a.data + "/jpeg_ref", a.small ? 2 : 6,
                                             &color_worst, &color_failures);
  json += ", \"color_max_abs_diff_levels\": " + Num(color_worst) +
          ", \"color_within_1_level\": " + (color_failures == 0 ? "true" : "false");
  failures += color_failures;
  // The rates.
  std::map<std::string, std::vector<std::string>> sets;
  {
    std::ifstream index(a.data + "/jpeg/index.txt");
    std::string line;
    while (std::getline(index, line)) {
      std::istringstream fields(line);
      std::string set, file;
      std::string bytes;
      if (fields >> set >> file && ReadFile(a.data + "/jpeg/" + file, &bytes)) {
        sets[set].push_back(bytes);
      }
    }
  }
  bool rate_failed = sets["gulp_320x240"].empty() || sets["imagenet_like"].empty();
  std::string rates;
  const double seconds = a.small ? 0 : std::min(4.0, a.budget_s / 8);
  for (int batch : a.small ? std::vector<int>{8} : std::vector<int>{64, 256}) {
    if (rate_failed) break;
    for (const auto& [set, clip, out] :
         {std::tuple<std::string, int, int>{"gulp_320x240", 8, 112}, {"imagenet_like", 1, 224}}) {
      rates += std::string(rates.empty() ? "" : ", ") +
               Rate(gpu, jw, arena, set, sets[set], batch, clip, a.small ? 32 : out, seconds,
                    &rate_failed);
    }
  }
  json += ", \"rates\": [" + rates + "]";
  std::string logged;
  for (const std::string& r : decoder.reasons()) {
    logged += std::string(logged.empty() ? "" : ", ") + Quoted(r);
  }
  json += ", \"reasons_logged\": [" + logged + "]";
  return finish(failures == 0 && !rate_failed ? 0 : 1);
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
