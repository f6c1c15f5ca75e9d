#include "cc/codec/hevc_coded_size.h"
#include "cc/gpu/testing/decode_runs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>
#include <utility>

#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/nvdec_warp.h"
#include "cc/gpu/testing/fake_nvdec.h"
#include "cc/util/json_text.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

const CUcontext kFakeContext = reinterpret_cast<CUcontext>(0xC0);  // FakeNvdec::context()

CUresult CUDAAPI FakeStreamContext(CUstream stream, CUcontext* context) {
  *context = reinterpret_cast<intptr_t>(stream) >= kFakeSecondContextStreams ? kFakeSecondContext
                                                                             : kFakeContext;
  return CUDA_SUCCESS;
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), {});
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// decode_hevc_warped's plan for a throughput picture: the whole displayed
// picture scaled to the output (the values are not checked here).
WarpPlanner ScaleToOutput(const RunSample& s, int out_size, CUdeviceptr dst) {
  return [&s, out_size, dst](int width, int height, RegionWarp* w, CUdeviceptr* out) {
    w->x0 = w->y0 = 0;
    w->width = std::min(width, s.width);
    w->height = std::min(height, s.height);
    const float m[9] = {w->width / float(out_size), 0, 0, 0, w->height / float(out_size), 0,
                        0, 0, 1};
    std::copy(m, m + 9, w->matrix);
    const float oob[3] = {0, 128, 255};
    std::copy(oob, oob + 3, w->oob_color);
    w->out_height = w->out_width = out_size;
    w->bilinear_chroma = 1;
    w->u8_output = 0;
    *out = dst;
    return Status::Ok();
  };
}

}  // namespace

Status LoadRunSamples(const std::string& dir, bool with_set_column, const std::string& default_set,
                      std::vector<RunSample>* out) {
  std::ifstream index(dir + "/index.txt");
  if (!index) {
    return NotFoundError(dir, "/index.txt: missing (tools/gpu_proof_data.py and "
                              "tools/gpu_profile_data.py make the device check's data)");
  }
  for (std::string line; std::getline(index, line);) {
    std::istringstream words(line);
    RunSample s;
    s.set = default_set;
    if (with_set_column) words >> s.set;
    if (!(words >> s.file >> s.width >> s.height)) continue;
    s.bytes = ReadAll(dir + "/" + s.file);
    if (s.bytes.empty()) return NotFoundError(dir, "/", s.file, ": missing or empty");
    TFG_RETURN_IF_ERROR(codec::HevcCodedSize(s.bytes.data(), s.bytes.size(), dir + "/" + s.file,
                                             &s.size.coded_width, &s.size.coded_height));
    FakeSample fake;
    fake.width = s.size.coded_width;
    fake.height = s.size.coded_height;
    s.fake_bytes = FakeSampleBytes(fake);
    out->push_back(std::move(s));
  }
  return Status::Ok();
}

std::vector<const RunSample*> SetOf(const std::vector<RunSample>& all, const std::string& set) {
  std::vector<const RunSample*> out;
  for (const RunSample& s : all)
    if (s.set == set) out.push_back(&s);
  return out;
}

std::unique_ptr<DecodeSource> DecodeSource::Real(const CheckDriver& d, CUcontext context) {
  std::unique_ptr<DecodeSource> s(new DecodeSource);
  s->d_ = &d;
  s->cuda_ = d.cuda;
  s->nvdec_ = d.nvdec_api;
  s->context_ = context;
  s->fatbin_ = d.fatbin;
  s->fatbin_size_ = d.fatbin_size;
  return s;
}

std::unique_ptr<DecodeSource> DecodeSource::Fake(int engines) {
  std::unique_ptr<DecodeSource> s(new DecodeSource);
  s->fake_ = std::make_unique<FakeNvdec>();
  s->fake_->engines = engines;
  s->cuda_ = s->fake_->cuda();
  s->cuda_.cuStreamGetCtx = FakeStreamContext;  // as FakeKernels gives the pool's users
  s->nvdec_ = s->fake_->nvdec();
  s->context_ = s->fake_->context();
  return s;
}

DecodeSource::~DecodeSource() = default;

std::string DecodeSource::NameOf(bool fake) {
  return fake ? "fake NVDEC (dry run): the pool's counts are real, its times are not"
                : "nvidia driver";
}

void DecodeSource::MakeCurrent() const {
  if (!fake()) d_->cuCtxSetCurrent(context_);
}

Status DecodeSource::MakeStream(CUstream* stream) const {
  if (fake()) {
    *stream = reinterpret_cast<CUstream>(static_cast<intptr_t>(0x6000 + ++next_stream_));
    return Status::Ok();
  }
  const CUresult r = d_->cuStreamCreate(stream, CU_STREAM_NON_BLOCKING);
  return r == CUDA_SUCCESS ? Status::Ok() : CudaCallError(cuda_, r, "cuStreamCreate");
}

void DecodeSource::DestroyStream(CUstream stream) const {
  if (!fake()) d_->cuStreamDestroy(stream);
}

std::vector<std::string> DecodeSource::problems() const {
  return fake() ? fake_->problems() : std::vector<std::string>();
}

Status TimedDecodeRun(const DecodeSource& source, const std::vector<const RunSample*>& set,
                      int sessions, int images, bool warp, CUdeviceptr d_out, int out_size,
                      TimedRun* run) {
  if (set.empty()) return InvalidArgumentError("no pictures to decode");
  if (warp && !source.can_warp()) return InvalidArgumentError("this source cannot warp");
  NvdecPoolOptions options;
  options.sessions = sessions;
  // Gone before the streams (its pools wait on events recorded there).
  auto owned = std::make_unique<NvdecRgbDecoder>(source.cuda(), source.nvdec(), source.fatbin(),
                                                 source.fatbin_size(), options);
  NvdecRgbDecoder& decoder = *owned;
  // The decoders' maximum: the largest coded size of the set.
  int max_w = 0, max_h = 0;
  std::map<std::pair<int, int>, const RunSample*> by_size;  // one picture per coded size
  for (const RunSample* s : set) {
    max_w = std::max(max_w, s->size.coded_width);
    max_h = std::max(max_h, s->size.coded_height);
    by_size.emplace(std::make_pair(s->size.coded_width, s->size.coded_height), s);
  }
  decoder.RaiseMaxSize(max_w, max_h);
  const size_t per = static_cast<size_t>(out_size) * out_size * 3 * 4;
  std::vector<CUstream> streams(sessions);
  Status status;
  int made = 0;
  for (; made < sessions && status.ok(); ++made) status = source.MakeStream(&streams[made]);
  if (!status.ok()) --made;
  // Warm-up: every session decodes (and warps, loading the module) one
  // picture of every coded size. Decodes from one thread with every session
  // idle go round robin over the sessions, so each gets each size.
  for (const auto& [size, sample] : by_size) {
    for (int t = 0; t < sessions && status.ok(); ++t) {
      status = DecodeOne(decoder, source, *sample, streams[t], warp, d_out, out_size);
    }
  }
  for (int t = 0; t < made && status.ok(); ++t) {
    const CUresult r = source.cuda().cuStreamSynchronize(streams[t]);
    if (r != CUDA_SUCCESS) status = CudaCallError(source.cuda(), r, "cuStreamSynchronize");
  }
  std::vector<Status> results(sessions);
  if (status.ok()) {
    run->warmup = decoder.Stats();
    std::atomic<int> next{0};
    const int half = images / 2;
    std::chrono::steady_clock::time_point half_at;
    NvdecPoolStats at_half;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < sessions; ++t) {
      threads.emplace_back([&, t] {
        source.MakeCurrent();
        for (int i = next++; i < images; i = next++) {
          if (i == half) {  // exactly one thread takes this index
            half_at = std::chrono::steady_clock::now();
            at_half = decoder.Stats();
          }
          const RunSample& s = *set[i % set.size()];
          Status st = DecodeOne(decoder, source, s, streams[t], warp, d_out + per * (i % 256),
                                out_size);
          if (!st.ok()) {
            results[t] = st;
            return;
          }
        }
        const CUresult r = source.cuda().cuStreamSynchronize(streams[t]);
        if (r != CUDA_SUCCESS) results[t] = CudaCallError(source.cuda(), r, "cuStreamSynchronize");
      });
    }
    for (auto& th : threads) th.join();
    const double seconds = Seconds(start);
    const auto end = std::chrono::steady_clock::now();
    const NvdecPoolStats after = decoder.Stats();
    run->images = images;
    run->images_per_s = images / seconds;
    run->second_half_images_per_s =
        (images - half) / std::chrono::duration<double>(end - half_at).count();
    run->timed = after.Since(run->warmup);
    run->second_half = after.Since(at_half);
  }
  owned.reset();
  for (int t = 0; t < made; ++t) source.DestroyStream(streams[t]);
  TFG_RETURN_IF_ERROR(status);
  for (const Status& st : results) TFG_RETURN_IF_ERROR(st);
  return Status::Ok();
}

Status DecodeOne(NvdecRgbDecoder& decoder, const DecodeSource& source, const RunSample& s,
                 CUstream stream, bool warp, CUdeviceptr dst, int out_size) {
  const std::vector<uint8_t>& bytes = source.BytesOf(s);
  if (warp) {
    return DecodeWarped(&decoder, bytes.data(), bytes.size(), stream, s.file.c_str(),
                        ScaleToOutput(s, out_size, dst));
  }
  return decoder.DecodeThen(bytes.data(), bytes.size(), stream, s.file.c_str(),
                            [](CUcontext, const NvdecPicture&) { return Status::Ok(); });
}

std::string StatsJson(const NvdecPoolStats& stats) {
  std::string out;
  for (int i = 0; i < static_cast<int>(NvdecPoolCall::kCount); ++i) {
    const NvdecCallTotals& c = stats.call[i];
    char ms[64];
    std::snprintf(ms, sizeof(ms), "%.6g", c.nanoseconds / 1e6);
    out += (out.empty() ? "" : ", ") + JsonQuoted(NvdecPoolCallName(static_cast<NvdecPoolCall>(i))) +
           ": {\"calls\": " + std::to_string(c.calls) + ", \"ms\": " + ms + "}";
  }
  return "{" + out + "}";
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
