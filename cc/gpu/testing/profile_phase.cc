// The device check's profile phase (extra_phases.h): where a decode session's
// time goes besides decoding, per picture set and session count, from the
// pool's own counters. On the dry run the runs go to the fake NVDEC (decode
// alone): the counts are the pool's, the times mean nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cc/gpu/testing/decode_runs.h"
#include "cc/gpu/testing/extra_phases.h"
#include "cc/util/json_text.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

const char* const kSets[] = {"dataset_mix",   "equal_bytes_512", "equal_bytes_1024",
                             "bitrate_crf16", "bitrate_crf26",   "bitrate_crf36",
                             "imagenet_like"};

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return v == v ? buf : "null";
}

// Bytes per picture of a set: what "equal bytes" means, reported beside it.
double MeanBytes(const std::vector<const RunSample*>& set) {
  double sum = 0;
  for (const RunSample* s : set) sum += static_cast<double>(s->bytes.size());
  return set.empty() ? 0 : sum / set.size();
}

}  // namespace

int ProfilePhase(const CheckDriver& d, const PhaseArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<RunSample> samples;
  Status s = LoadRunSamples(a.data, false, "dataset_mix", &samples);
  if (s.ok()) s = LoadRunSamples(a.data + "/sets", true, "", &samples);
  const bool dry = d.path == "dry_run";
  std::string head = "\"phase\": \"profile\", \"gpu\": " +
                     std::string(d.on_gpu && d.kernels.ok() ? "true" : "false") +
                     ", \"driver\": " + JsonQuoted(d.kind) + ", \"nvdec\": " +
                     JsonQuoted(d.nvdec.ok() ? "available" : "unavailable: " + d.nvdec.message());
  if (!s.ok()) {
    std::printf("{%s, \"error\": %s}\n", head.c_str(), JsonQuoted(s.message()).c_str());
    return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kDataLoss ? 2 : 1;
  }
  if (!dry && (!d.kernels.ok() || !d.nvdec.ok())) {
    std::printf("{%s}\n", head.c_str());
    return 0;
  }
  // The real driver: the primary context and device memory for the warp's
  // outputs (256 slots of 224x224x3 floats), as the throughput phase.
  CUcontext context = nullptr;
  CUdeviceptr d_out = 0;
  const int out_size = 224;
  if (!dry) {
    CUdevice device = 0;
    CUresult r = d.cuDeviceGet(&device, 0);
    if (r == CUDA_SUCCESS) r = d.cuDevicePrimaryCtxRetain(&context, device);
    if (r == CUDA_SUCCESS) r = d.cuCtxSetCurrent(context);
    if (r == CUDA_SUCCESS) r = d.cuMemAlloc(&d_out, static_cast<size_t>(out_size) * out_size * 3 * 4 * 256);
    if (r != CUDA_SUCCESS) {
      std::printf("{%s, \"error\": %s}\n", head.c_str(),
                  JsonQuoted(CudaCallError(d.cuda, r, "opening the device").message()).c_str());
      return 1;
    }
  }
  const int images = a.small ? 256 : a.images;
  std::string runs, problems, sets;
  bool failed = false;
  for (const char* name : kSets) {
    const std::vector<const RunSample*> set = SetOf(samples, name);
    sets += std::string(sets.empty() ? "" : ", ") + JsonQuoted(name) + ": {\"pictures\": " +
            std::to_string(set.size()) + ", \"mean_bytes\": " + Num(MeanBytes(set)) + "}";
    for (int sessions : a.sessions) {
      std::string r = "\"samples\": " + JsonQuoted(name) + ", \"sessions\": " +
                      std::to_string(sessions);
      if (set.empty()) {
        failed = true;
        runs += std::string(runs.empty() ? "" : ", ") + "{" + r + ", \"error\": \"no pictures\"}";
        continue;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
          a.budget_s) {
        runs += std::string(runs.empty() ? "" : ", ") + "{" + r +
                ", \"skipped\": \"the phase's time budget\"}";
        continue;
      }
      // A fresh fake per run: its call log stays small.
      std::unique_ptr<DecodeSource> source =
          dry ? DecodeSource::Fake(7) : DecodeSource::Real(d, context);
      TimedRun run;
      const bool warp = source->can_warp();
      const Status st = TimedDecodeRun(*source, set, sessions, images, warp, d_out, out_size, &run);
      r += std::string(", \"decode_and_warp\": ") + (warp ? "true" : "false") +
           ", \"images\": " + std::to_string(images) + ", \"images_per_s\": " +
           Num(run.images_per_s) + ", \"second_half_images_per_s\": " +
           Num(run.second_half_images_per_s) + ", \"warmup_pool_calls\": " +
           StatsJson(run.warmup) + ", \"timed_pool_calls\": " + StatsJson(run.timed) +
           ", \"second_half_pool_calls\": " + StatsJson(run.second_half);
      if (!st.ok()) {
        failed = true;
        r += ", \"error\": " + JsonQuoted(st.message());
      }
      for (const std::string& p : source->problems()) {
        problems += (problems.empty() ? "" : ", ") + JsonQuoted(std::string(name) + ": " + p);
      }
      runs += std::string(runs.empty() ? "" : ", ") + "{" + r + "}";
    }
  }
  if (d_out != 0) d.cuMemFree(d_out);
  std::printf("{%s, \"source\": %s, \"sets\": {%s}, \"runs\": [%s], \"problems\": [%s]}\n",
              head.c_str(),
              JsonQuoted(dry ? DecodeSource::NameOf(true) : "nvidia driver").c_str(),
              sets.c_str(), runs.c_str(), problems.c_str());
  return failed || !problems.empty() ? 1 : 0;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
