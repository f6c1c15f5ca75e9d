// The GPU path's proof on a machine with an NVIDIA GPU (no TensorFlow needed):
// NVDEC decoding through the decoder pool (cc/gpu/nvdec_pool.h) and the fused
// NV12 warp kernel, compared with the CPU path's outputs made on a development
// machine (cc/gpu/proof/data, tools/gpu_proof_data.py), then timed. Prints one
// JSON object. Run by `make gpu-proof` (tools/gpu_proof.sh).
//
//   gpu_proof [--data cc/gpu/proof/data] [--batch 256] [--images 4096]
//             [--sessions 1,2,4,7,14] [--surfaces 8]
//
// Exit status: 0 = within 2 levels of the CPU path, 1 = a mismatch or an
// error, 2 = bad arguments or data, 3 = no GPU / no NVDEC here (the JSON says
// which and why).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/gpu/cuda_driver.h"
#include "cc/gpu/embedded_fatbin.h"
#include "cc/gpu/harness_common.h"
#include "cc/gpu/nvdec_ycbcr.h"
#include "cc/gpu/proof/proof_decode.h"
#include "cc/gpu/similarity_warp_gpu.h"
#include "cc/gpu/ycbcr_check.h"

namespace tfg {
namespace gpu {
namespace {

using harness::JsonString;

struct Args {
  std::string data = "cc/gpu/proof/data";
  int batch = 256;
  int images = 4096;
  int surfaces = 8;
  std::vector<int> sessions = {1, 2, 4, 7, 14};
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--data") {
      a->data = v;
    } else if (k == "--batch") {
      a->batch = std::atoi(v.c_str());
    } else if (k == "--images") {
      a->images = std::atoi(v.c_str());
    } else if (k == "--surfaces") {
      a->surfaces = std::atoi(v.c_str());
    } else if (k == "--sessions") {
      a->sessions.clear();
      std::stringstream list(v);
      for (std::string n; std::getline(list, n, ',');) a->sessions.push_back(std::atoi(n.c_str()));
    } else {
      return false;
    }
  }
  if (argc % 2 == 0) return false;
  return a->batch > 0 && a->images > 0 && a->surfaces > 0 && !a->sessions.empty() &&
         std::all_of(a->sessions.begin(), a->sessions.end(), [](int s) { return s > 0; });
}

struct Sample {
  std::string file;
  int width = 0, height = 0;  // the clean picture, at the top left of the coded frame
  std::vector<uint8_t> bytes;  // Annex-B
};

struct Data {
  int out_size = 224;
  std::vector<Sample> samples;
  std::vector<float> matrices;   // [N, 9]
  std::vector<float> reference;  // [N, out, out, 3] levels
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

// The kernel's view of a mapped NVDEC picture, cropped to the clean
// width x height at its top left (chroma clamps at the coded frame's edge,
// as the CPU decoder's conversion does).
codec::YcbcrPicture PictureOf(const NvdecPicture& p, int width, int height) {
  codec::YcbcrPicture y = YcbcrOf(p);
  y.width = width;
  y.height = height;
  return y;
}

const float kBias[3] = {0, 0, 0}, kNorm[3] = {1, 1, 1}, kOob[3] = {0, 128, 255};

// Device-side constants and one output batch shared by the runs.
struct Device {
  const CudaDriver* d = nullptr;
  CUcontext context = nullptr;
  const GpuSimilarityWarp* warp = nullptr;
  harness::DeviceBuffer bias, norm, oob, matrices, dst;
};

// One worker's stream and its ring of YcbcrPicture slots in device memory.
// A slot's next upload is queued on the same stream after the kernel that
// read it, so stream order alone makes reuse safe; the ring only spreads the
// uploads (from pageable memory: the driver stages them before returning).
struct Worker {
  CUstream stream = nullptr;
  harness::DeviceBuffer pictures;
};

Status MakeWorker(const Device& dev, int slots, Worker* w) {
  TFG_CU_RETURN_IF_ERROR(*dev.d, cuStreamCreate(&w->stream, CU_STREAM_NON_BLOCKING));
  w->pictures.d = dev.d;
  TFG_CU_RETURN_IF_ERROR(*dev.d,
                         cuMemAlloc(&w->pictures.ptr, slots * sizeof(codec::YcbcrPicture)));
  return Status::Ok();
}

// Decodes sample `i`, warps it into output slot `slot` (if `warp`), releases it.
Status DecodeAndWarp(const Device& dev, proof::Decoder& decoder, Worker& w, int slot_count,
                     const Data& data, int i, int out_slot, bool warp, int* ring) {
  const Sample& s = data.samples[i % data.samples.size()];
  NvdecPicture p;
  TFG_RETURN_IF_ERROR(decoder.Decode(s.bytes.data(), s.bytes.size(), w.stream, s.file.c_str(), &p));
  Status status;
  if (warp) {
    const codec::YcbcrPicture y = PictureOf(p, s.width, s.height);
    const int slot = (*ring)++ % slot_count;
    const CUdeviceptr at = w.pictures.ptr + slot * sizeof(codec::YcbcrPicture);
    const size_t out = static_cast<size_t>(data.out_size) * data.out_size * 3;
    CUresult r = dev.d->cuMemcpyHtoDAsync(at, &y, sizeof(y), w.stream);
    if (r != CUDA_SUCCESS) status = CudaError(*dev.d, r, "cuMemcpyHtoDAsync");
    if (status.ok()) {
      status = dev.warp->LaunchYcbcr(
          1, at, /*bilinear_chroma=*/true,
          dev.matrices.ptr + 9 * sizeof(float) * (i % data.samples.size()), dev.bias.ptr,
          dev.norm.ptr, dev.oob.ptr, data.out_size, data.out_size, warp::Layout::kNHWC,
          dev.dst.ptr + out * sizeof(float) * out_slot, w.stream);
    }
  }
  const Status released = decoder.Release(p, w.stream);
  return status.ok() ? released : status;
}

// Sample `i` decoded and warped by decode_hevc_warped's GPU kernel
// (tfg_decode_warp_ycbcr: the mapped picture and the warp by value, one
// launch per picture, as the op launches it) into output slot `out_slot`.
Status DecodeAndWarpAsTheOp(const Device& dev, proof::Decoder& decoder, Worker& w,
                            const Data& data, int i, int out_slot) {
  const Sample& s = data.samples[i % data.samples.size()];
  NvdecPicture p;
  TFG_RETURN_IF_ERROR(decoder.Decode(s.bytes.data(), s.bytes.size(), w.stream, s.file.c_str(), &p));
  RegionWarp warp;
  warp.width = s.width;  // the clean aperture at the top left, as PictureOf crops it
  warp.height = s.height;
  std::copy(&data.matrices[9 * (i % data.samples.size())],
            &data.matrices[9 * (i % data.samples.size())] + 9, warp.matrix);
  std::copy(kBias, kBias + 3, warp.bias);
  std::copy(kNorm, kNorm + 3, warp.norm);
  std::copy(kOob, kOob + 3, warp.oob_color);
  warp.out_height = warp.out_width = data.out_size;
  warp.bilinear_chroma = 1;
  const size_t out = static_cast<size_t>(data.out_size) * data.out_size * 3;
  const Status status = dev.warp->LaunchDecodeWarp(
      YcbcrOf(p), warp, dev.dst.ptr + out * sizeof(float) * out_slot, w.stream);
  const Status released = decoder.Release(p, w.stream);
  return status.ok() ? released : status;
}

// The largest difference of the first data.samples outputs from the CPU
// path's, and how many values are more than 2 levels off.
Status CompareWithCpu(const Device& dev, const Data& data, double* max_diff, int64_t* off) {
  std::vector<float> got(data.reference.size());
  TFG_CU_RETURN_IF_ERROR(*dev.d, cuMemcpyDtoH(got.data(), dev.dst.ptr, got.size() * sizeof(float)));
  *max_diff = 0;
  *off = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    const double diff = std::fabs(static_cast<double>(got[k]) - data.reference[k]);
    if (!(diff <= *max_diff)) *max_diff = diff;
    if (!(diff <= 2.0)) ++*off;
  }
  return Status::Ok();
}

// Every sample once, warped; compared with the CPU path's outputs: by the
// batch kernel of the proof, then (`as_op`) by decode_hevc_warped's kernel.
Status CheckAgainstCpu(const Device& dev, const Args& a, const Data& data, double* max_diff,
                       int64_t* off, bool as_op = false) {
  std::unique_ptr<proof::Decoder> decoder;
  TFG_RETURN_IF_ERROR(proof::Decoder::Create(dev.context, 1, a.surfaces, 1024, &decoder));
  Worker w;
  TFG_RETURN_IF_ERROR(MakeWorker(dev, 4, &w));
  int ring = 0;
  // NaN first: a value the kernel never wrote fails the comparison.
  const std::vector<float> nan(data.reference.size(), std::nanf(""));
  TFG_CU_RETURN_IF_ERROR(*dev.d, cuMemcpyHtoD(dev.dst.ptr, nan.data(), nan.size() * sizeof(float)));
  for (int i = 0; i < static_cast<int>(data.samples.size()); ++i) {
    TFG_RETURN_IF_ERROR(as_op ? DecodeAndWarpAsTheOp(dev, *decoder, w, data, i, i)
                              : DecodeAndWarp(dev, *decoder, w, 4, data, i, i, true, &ring));
  }
  TFG_CU_RETURN_IF_ERROR(*dev.d, cuStreamSynchronize(w.stream));
  TFG_RETURN_IF_ERROR(CompareWithCpu(dev, data, max_diff, off));
  decoder.reset();
  dev.d->cuStreamDestroy(w.stream);
  return Status::Ok();
}

// Images/s of `images` pictures over `sessions` sessions, one thread each.
Status Throughput(const Device& dev, const Args& a, const Data& data, int sessions, bool warp,
                  double* images_per_s) {
  std::unique_ptr<proof::Decoder> decoder;
  TFG_RETURN_IF_ERROR(proof::Decoder::Create(dev.context, sessions, a.surfaces, 1024, &decoder));
  std::vector<Worker> workers(sessions);
  const int slots = a.surfaces * sessions + 1;
  for (Worker& w : workers) TFG_RETURN_IF_ERROR(MakeWorker(dev, slots, &w));
  std::atomic<int> next{0};
  std::vector<Status> results(sessions);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < sessions; ++t) {
    threads.emplace_back([&, t] {
      // Threads use the context through their streams; the pool pushes it
      // for its own calls, the launches need it current.
      dev.d->cuCtxSetCurrent(dev.context);
      int ring = 0;
      for (int i = next++; i < a.images; i = next++) {
        Status s = DecodeAndWarp(dev, *decoder, workers[t], slots, data, i, i % a.batch, warp,
                                 &ring);
        if (!s.ok()) {
          results[t] = s;
          return;
        }
      }
      const CUresult r = dev.d->cuStreamSynchronize(workers[t].stream);
      if (r != CUDA_SUCCESS) results[t] = CudaError(*dev.d, r, "cuStreamSynchronize");
    });
  }
  for (auto& th : threads) th.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const Status& s : results) TFG_RETURN_IF_ERROR(s);
  *images_per_s = a.images / seconds;
  decoder.reset();
  for (Worker& w : workers) dev.d->cuStreamDestroy(w.stream);
  return Status::Ok();
}

int Run(const Args& a) {
  Data data;
  Status s = LoadData(a.data, &data);
  if (!s.ok()) {
    std::printf("{\"error\": %s}\n", JsonString(s.message()).c_str());
    return 2;
  }
  const proof::RuntimeReport runtime = proof::ProbeRuntime();
  const bool nvcuvid = SharedLibraryPresent("libnvcuvid.so.1");
  const CudaDriver* d = nullptr;
  Status loaded = LoadCudaDriver(&d);
  if (loaded.ok() && runtime.path != "nvdec_gpu_warp") loaded = UnavailableError(runtime.message);
  if (!loaded.ok()) {
    std::printf("{\"gpu\": false, \"path\": %s, \"driver_version\": %d, "
                "\"libnvcuvid_found\": %s, \"reason\": %s}\n",
                JsonString(runtime.path).c_str(), runtime.driver_version,
                nvcuvid ? "true" : "false", JsonString(loaded.message()).c_str());
    return 3;
  }
  auto fail = [](const Status& st) {
    std::printf("{\"gpu\": true, \"error\": %s}\n", JsonString(st.message()).c_str());
    return 1;
  };
  Device dev;
  dev.d = d;
  CUdevice device;
  char name[256] = {0};
  int major = 0, minor = 0;
  CUresult r = d->cuDeviceGet(&device, 0);
  if (r == CUDA_SUCCESS) r = d->cuDeviceGetName(name, sizeof(name) - 1, device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  if (r == CUDA_SUCCESS)
    r = d->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  if (r == CUDA_SUCCESS) r = d->cuDevicePrimaryCtxRetain(&dev.context, device);
  if (r == CUDA_SUCCESS) r = d->cuCtxSetCurrent(dev.context);
  if (r != CUDA_SUCCESS) return fail(CudaError(*d, r, "setting up device 0"));

  GpuSimilarityWarp warp;
  s = GpuSimilarityWarp::Create(d, tfg_similarity_warp_fatbin, &warp);
  dev.warp = &warp;
  const size_t out = static_cast<size_t>(data.out_size) * data.out_size * 3;
  const size_t slots = std::max<size_t>(a.batch, data.samples.size());
  if (s.ok()) s = harness::Upload(*d, kBias, sizeof(kBias), &dev.bias);
  if (s.ok()) s = harness::Upload(*d, kNorm, sizeof(kNorm), &dev.norm);
  if (s.ok()) s = harness::Upload(*d, kOob, sizeof(kOob), &dev.oob);
  if (s.ok()) {
    s = harness::Upload(*d, data.matrices.data(), data.matrices.size() * sizeof(float),
                        &dev.matrices);
  }
  if (s.ok()) {
    dev.dst.d = d;
    r = d->cuMemAlloc(&dev.dst.ptr, slots * out * sizeof(float));
    if (r != CUDA_SUCCESS) s = CudaError(*d, r, "cuMemAlloc(output batch)");
  }
  double max_diff = 0;
  int64_t off = 0;
  if (s.ok()) s = CheckAgainstCpu(dev, a, data, &max_diff, &off);
  // The same samples through decode_hevc_warped's kernel (one launch per picture).
  double op_max_diff = 0;
  int64_t op_off = 0;
  if (s.ok()) s = CheckAgainstCpu(dev, a, data, &op_max_diff, &op_off, /*as_op=*/true);
  if (!s.ok()) return fail(s);

  // Warp alone: the fused kernel on generated NV12 512x512 pictures already in
  // GPU memory, whole batches (the harness's measurement).
  harness::Options o;
  o.batch = a.batch;
  o.in_size = 512;
  o.out_size = data.out_size;
  const harness::Nv12Batch nv12 = harness::MakeNv12Batch(o);
  harness::Check nearest, bilinear;
  double warp_alone = 0;
  CUstream stream;
  r = d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) return fail(CudaError(*d, r, "cuStreamCreate"));
  s = harness::CheckYcbcrOnGpu(*d, warp, o, nv12, harness::MakeMatrices(o), stream, &nearest,
                               &bilinear, &warp_alone);
  if (!s.ok()) return fail(s);

  // Decode alone and decode + warp per session count.
  std::string runs;
  double best_both = 0, decode_one_session = 0;
  for (int sessions : a.sessions) {
    double decode = 0, both = 0;
    s = Throughput(dev, a, data, sessions, false, &decode);
    if (s.ok()) s = Throughput(dev, a, data, sessions, true, &both);
    if (!s.ok()) return fail(s);
    if (sessions == 1) decode_one_session = decode;
    best_both = std::max(best_both, both);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%s{\"sessions\": %d, \"decode_images_per_s\": %.0f, "
                  "\"decode_and_warp_images_per_s\": %.0f}",
                  runs.empty() ? "" : ", ", sessions, decode, both);
    runs += line;
  }
  // The NVDEC bound: every engine as fast as one session alone (one session
  // runs on one engine). nvdec_engines is what cuvidGetDecoderCaps reports.
  std::unique_ptr<proof::Decoder> probe;
  s = proof::Decoder::Create(dev.context, 0, a.surfaces, 1024, &probe);
  if (!s.ok()) return fail(s);
  const int engines = probe->sessions();
  probe.reset();
  const double bound = engines * decode_one_session;
  const bool within = max_diff <= 2.0 && op_max_diff <= 2.0 && harness::Within(nearest, bilinear);
  int version = 0;
  d->cuDriverGetVersion(&version);
  std::printf(
      "{\"gpu\": true, \"device\": %s, \"compute_capability\": \"%d.%d\", "
      "\"driver_version\": %d, \"path\": %s, \"libnvcuvid_found\": %s, \"samples\": %zu, "
      "\"nvdec_vs_cpu_max_abs_diff_levels\": %.3f, \"values_off_by_more_than_2_levels\": %lld, "
      "\"decode_hevc_warped_kernel_vs_cpu_max_abs_diff_levels\": %.3f, "
      "\"decode_hevc_warped_kernel_values_off_by_more_than_2_levels\": %lld, "
      "\"within_2_levels\": %s, \"batch\": %d, \"images_per_run\": %d, "
      "\"output\": \"%dx%dx3 float32 NHWC\", \"warp_alone_images_per_s\": %.0f, "
      "\"warp_alone_vs_host\": %s, \"runs\": [%s], \"nvdec_engines\": %d, "
      "\"nvdec_bound_images_per_s\": %.0f, \"fraction_of_nvdec_bound\": %.3f}\n",
      JsonString(name).c_str(), major, minor, version, JsonString(runtime.path).c_str(),
      nvcuvid ? "true" : "false", data.samples.size(), max_diff, static_cast<long long>(off),
      op_max_diff, static_cast<long long>(op_off), within ? "true" : "false", a.batch, a.images, data.out_size, data.out_size, warp_alone,
      harness::CheckJson(nearest, bilinear, "nearest chroma, NHWC", "bilinear chroma, NCHW")
          .c_str(),
      runs.c_str(), engines, bound, bound > 0 ? best_both / bound : 0.0);
  d->cuStreamDestroy(stream);
  return within ? 0 : 1;
}

}  // namespace
}  // namespace gpu
}  // namespace tfg

int main(int argc, char** argv) {
  tfg::gpu::Args args;
  if (!tfg::gpu::ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr, "usage: gpu_proof [--data DIR] [--batch 256] [--images 4096] "
                         "[--sessions 1,2,4,7,14] [--surfaces 8]\n");
    return 2;
  }
  return tfg::gpu::Run(args);
}
