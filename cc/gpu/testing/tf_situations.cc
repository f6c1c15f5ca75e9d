// The device check's situations phase (extra_phases.h): three things a
// TensorFlow process does around the GPU ops that a plain program does not,
// each run through the ops' path (NvdecRgbDecoder + the fused warp) with the
// result it must give.
//
// 1. map_behind_host_function: the caller's stream already holds a 100 ms host
//    function (TensorFlow queues host callbacks and long kernels there). A
//    picture decoded and warped on that stream, then 32 more decoded on
//    another stream by the same single session (its surfaces cycle back to the
//    first picture's): the first output must equal the same picture decoded
//    alone, i.e. its surface was not reused before the kernel queued behind
//    the host function read it.
// 2. second_context: a second CUDA context on the same GPU (TensorFlow's
//    virtual devices, or another library's context): the same decoder object
//    decodes on a stream of that context with its own pool, same output.
// 3. other_context_current: the calling thread has another context current
//    (TensorFlow's threads switch contexts): the decode still runs in the
//    stream's context, same output, and the thread's context is left as it was.
//
// Dry run: the fake NVDEC models (1) (a stream with pending work: an early
// unmap or a surface reused while the kernel may still read it is a broken
// rule) and the context pushes of (2) and (3); the host stand-in has no
// device memory for outputs, so "same output" is checked on a GPU only.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cc/gpu/nvdec_rgb.h"
#include "cc/gpu/testing/decode_runs.h"
#include "cc/gpu/testing/extra_phases.h"
#include "cc/gpu/testing/fake_nvdec.h"
#include "cc/util/json_text.h"

namespace tfg {
namespace gpu {
namespace testing {
namespace {

constexpr int kOut = 224;
constexpr size_t kOutBytes = static_cast<size_t>(kOut) * kOut * 3 * 4;
constexpr int kFollowers = 32;

struct Result {
  Result(std::string n, std::string e, std::string d = "", bool o = false)
      : name(std::move(n)), expected(std::move(e)), detail(std::move(d)), ok(o) {}
  std::string name, expected, detail;
  bool ok = false;
  std::string Json() const {
    return "{\"situation\": " + JsonQuoted(name) + ", \"expected\": " + JsonQuoted(expected) +
           ", \"ok\": " + (ok ? "true" : "false") + ", \"detail\": " + JsonQuoted(detail) + "}";
  }
};

void SleepHostFunction(void* done) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  static_cast<std::atomic<bool>*>(done)->store(true);
}

Status Cu(const CheckDriver& d, CUresult r, const char* call) {
  return r == CUDA_SUCCESS ? Status::Ok() : CudaCallError(d.cuda, r, call);
}

// On a GPU: every situation with device outputs compared byte for byte.
Status RunOnGpu(const CheckDriver& d, const std::vector<const RunSample*>& set,
                std::vector<Result>* results) {
  CUdevice dev = 0;
  CUcontext primary = nullptr;
  TFG_RETURN_IF_ERROR(Cu(d, d.cuDeviceGet(&dev, 0), "cuDeviceGet"));
  TFG_RETURN_IF_ERROR(Cu(d, d.cuDevicePrimaryCtxRetain(&primary, dev), "cuDevicePrimaryCtxRetain"));
  TFG_RETURN_IF_ERROR(Cu(d, d.cuCtxSetCurrent(primary), "cuCtxSetCurrent"));
  std::unique_ptr<DecodeSource> source = DecodeSource::Real(d, primary);
  NvdecPoolOptions options;
  options.sessions = 1;  // one session: the followers cycle through the first picture's surfaces
  auto decoder = std::make_unique<NvdecRgbDecoder>(d.cuda, d.nvdec_api, d.fatbin, d.fatbin_size,
                                                   options);
  int max_w = 0, max_h = 0;
  for (const RunSample* s : set) {
    max_w = std::max(max_w, s->size.coded_width);
    max_h = std::max(max_h, s->size.coded_height);
  }
  decoder->RaiseMaxSize(max_w, max_h);
  CUstream s1 = nullptr, s2 = nullptr;
  CUdeviceptr ref = 0, out_a = 0, scratch = 0, out_c = 0;
  TFG_RETURN_IF_ERROR(source->MakeStream(&s1));
  TFG_RETURN_IF_ERROR(source->MakeStream(&s2));
  for (CUdeviceptr* p : {&ref, &out_a, &scratch, &out_c}) {
    TFG_RETURN_IF_ERROR(Cu(d, d.cuMemAlloc(p, kOutBytes), "cuMemAlloc"));
  }
  const RunSample& a = *set[0];
  std::vector<uint8_t> want(kOutBytes), got(kOutBytes);
  auto download = [&](CUdeviceptr p, CUstream st, std::vector<uint8_t>* host) {
    TFG_RETURN_IF_ERROR(Cu(d, d.cuMemcpyDtoHAsync(host->data(), p, kOutBytes, st),
                           "cuMemcpyDtoHAsync"));
    return Cu(d, d.cuda.cuStreamSynchronize(st), "cuStreamSynchronize");
  };
  TFG_RETURN_IF_ERROR(DecodeOne(*decoder, *source, a, s2, true, ref, kOut));
  TFG_RETURN_IF_ERROR(download(ref, s2, &want));

  {  // 1
    Result r{"map_behind_host_function",
             "the picture warped behind a 100 ms host function on its stream equals the same "
             "picture decoded alone, with 32 pictures decoded by the same session meanwhile"};
    std::atomic<bool> host_done{false};
    Status st = Cu(d, d.cuLaunchHostFunc(s1, SleepHostFunction, &host_done), "cuLaunchHostFunc");
    if (st.ok()) st = Cu(d, d.cuMemsetD8Async(out_a, 0xFF, kOutBytes, s1), "cuMemsetD8Async");
    if (st.ok()) st = DecodeOne(*decoder, *source, a, s1, true, out_a, kOut);
    const bool returned_first = !host_done.load();
    for (int k = 0; st.ok() && k < kFollowers; ++k) {
      st = DecodeOne(*decoder, *source, *set[1 + k % (set.size() - 1)], s2, true, scratch, kOut);
    }
    if (st.ok()) st = download(out_a, s1, &got);
    r.ok = st.ok() && got == want;
    r.detail = st.ok() ? std::string(got == want ? "equal" : "differs") +
                             "; the decode returned before the host function ended: " +
                             (returned_first ? "yes" : "no")
                       : st.message();
    results->push_back(r);
  }
  // 2 and 3 share the second context.
  CUcontext second = nullptr;
  Status made = Cu(d, d.cuCtxCreate(&second, 0, dev), "cuCtxCreate");  // current now
  {
    Result r{"second_context",
             "a second context on the same GPU gets its own pool from the same decoder and the "
             "same output"};
    CUstream s3 = nullptr;
    CUdeviceptr out_b = 0;
    Status st = made;
    if (st.ok()) st = source->MakeStream(&s3);
    if (st.ok()) st = Cu(d, d.cuMemAlloc(&out_b, kOutBytes), "cuMemAlloc");
    if (st.ok()) st = DecodeOne(*decoder, *source, a, s3, true, out_b, kOut);
    if (st.ok()) st = download(out_b, s3, &got);
    r.ok = st.ok() && got == want && decoder->pools() == 2;
    r.detail = st.ok() ? std::string(got == want ? "equal" : "differs") + ", pools " +
                             std::to_string(decoder->pools())
                       : st.message();
    results->push_back(r);
    if (s3 != nullptr) {
      d.cuda.cuStreamSynchronize(s3);
      source->DestroyStream(s3);
    }
    if (out_b != 0) d.cuMemFree(out_b);
  }
  {
    Result r{"other_context_current",
             "a thread with another context current decodes on the primary context's stream: "
             "same output, its current context unchanged"};
    Status st = made;
    CUcontext after = nullptr;
    if (st.ok()) {
      std::thread caller([&] {
        st = Cu(d, d.cuCtxSetCurrent(second), "cuCtxSetCurrent");
        if (st.ok()) st = DecodeOne(*decoder, *source, a, s1, true, out_c, kOut);
        if (st.ok()) st = Cu(d, d.cuCtxGetCurrent(&after), "cuCtxGetCurrent");
      });
      caller.join();
    }
    if (st.ok()) st = Cu(d, d.cuCtxSetCurrent(primary), "cuCtxSetCurrent");
    if (st.ok()) st = download(out_c, s1, &got);
    r.ok = st.ok() && got == want && after == second;
    r.detail = st.ok() ? std::string(got == want ? "equal" : "differs") +
                             ", the thread's context " +
                             (after == second ? "unchanged" : "changed")
                       : st.message();
    results->push_back(r);
  }
  // The decoder's pools (one in `second`) go before the context.
  decoder.reset();
  if (made.ok()) d.cuCtxDestroy(second);
  d.cuCtxSetCurrent(primary);
  for (CUstream st : {s1, s2}) source->DestroyStream(st);
  for (CUdeviceptr p : {ref, out_a, scratch, out_c}) d.cuMemFree(p);
  return Status::Ok();
}

// The dry run: the fake NVDEC's model of the same three.
Status RunOnFake(const CheckDriver& d, const std::vector<const RunSample*>& set,
                 std::vector<Result>* results) {
  std::unique_ptr<DecodeSource> source = DecodeSource::Fake(1);
  FakeNvdec& fake = *source->fake_driver();
  NvdecPoolOptions options;
  options.sessions = 1;
  auto decoder = std::make_unique<NvdecRgbDecoder>(source->cuda(), source->nvdec(), nullptr, 0,
                                                   options);
  CUstream s1 = nullptr, s2 = nullptr;
  TFG_RETURN_IF_ERROR(source->MakeStream(&s1));
  TFG_RETURN_IF_ERROR(source->MakeStream(&s2));
  const CUstream s3 = reinterpret_cast<CUstream>(kFakeSecondContextStreams + 1);
  // The kernel a decode launches reads the mapped picture on its stream.
  auto decode = [&](const RunSample& s, CUstream stream) {
    const std::vector<uint8_t>& bytes = source->BytesOf(s);
    return decoder->DecodeThen(bytes.data(), bytes.size(), stream, s.file.c_str(),
                               [&](CUcontext, const NvdecPicture& p) {
                                 fake.LaunchKernel(stream, p.luma);
                                 return Status::Ok();
                               });
  };
  const RunSample& a = *set[0];
  TFG_RETURN_IF_ERROR(decode(a, s2));
  {
    Result r{"map_behind_host_function",
             "with work pending on the caller's stream, no surface is unmapped or reused before "
             "the kernel behind it could read it (fake NVDEC)"};
    {
      std::lock_guard<std::recursive_mutex> lock(fake.mutex);
      fake.Queue(s1);  // the host function: queued, not completed
    }
    Status st = decode(a, s1);
    for (int k = 0; st.ok() && k < kFollowers; ++k) {
      st = decode(*set[1 + k % (set.size() - 1)], s2);
    }
    fake.CompleteStream(s1);
    fake.CompleteStream(s2);
    const int waits = fake.Count("cuEventSynchronize");
    r.ok = st.ok() && fake.violations().empty() && waits > 0;
    r.detail = st.ok() ? "broken rules: " + std::to_string(fake.violations().size()) +
                             ", waits on the callers' events: " + std::to_string(waits)
                       : st.message();
    results->push_back(r);
  }
  {
    Result r{"second_context", "a second context gets its own pool (fake NVDEC)"};
    const Status st = decode(a, s3);
    fake.CompleteStream(s3);
    r.ok = st.ok() && decoder->pools() == 2 && fake.violations().empty();
    r.detail = st.ok() ? "pools " + std::to_string(decoder->pools()) : st.message();
    results->push_back(r);
  }
  {
    Result r{"other_context_current",
             "every pool call has the stream's context pushed, every push popped (fake NVDEC; "
             "the host stand-in's current context is the thread's own)"};
    const CUcontext other = kFakeSecondContext;
    CUcontext after = nullptr;
    Status st;
    std::thread caller([&] {
      d.cuCtxSetCurrent(other);
      st = decode(a, s1);
      d.cuCtxGetCurrent(&after);
    });
    caller.join();
    fake.CompleteStream(s1);
    r.ok = st.ok() && after == other && fake.violations().empty();
    r.detail = st.ok() ? std::string("the thread's context ") +
                             (after == other ? "unchanged" : "changed")
                       : st.message();
    results->push_back(r);
  }
  decoder.reset();
  const std::vector<std::string> left = fake.problems();
  if (!left.empty()) {
    results->push_back(Result{"clean_end", "nothing left alive", left[0], false});
  }
  return Status::Ok();
}

}  // namespace

int SituationsPhase(const CheckDriver& d, const PhaseArgs& a) {
  const std::string& data = a.data;
  const bool dry = d.path == "dry_run";
  std::string head = "\"phase\": \"situations\", \"gpu\": " +
                     std::string(d.on_gpu && d.kernels.ok() ? "true" : "false") +
                     ", \"driver\": " + JsonQuoted(d.kind) + ", \"nvdec\": " +
                     JsonQuoted(d.nvdec.ok() ? "available" : "unavailable: " + d.nvdec.message());
  std::vector<RunSample> samples;
  Status s = LoadRunSamples(data, false, "dataset_mix", &samples);
  std::vector<const RunSample*> set;
  for (const RunSample& r : samples)
    if (r.width == 512 && r.height == 512) set.push_back(&r);
  if (s.ok() && set.size() < 2) s = DataLossError(data, ": fewer than two 512x512 pictures");
  if (!s.ok()) {
    std::printf("{%s, \"error\": %s}\n", head.c_str(), JsonQuoted(s.message()).c_str());
    return 2;
  }
  if (!dry && (!d.kernels.ok() || !d.nvdec.ok())) {
    std::printf("{%s}\n", head.c_str());
    return 0;
  }
  std::vector<Result> results;
  s = dry ? RunOnFake(d, set, &results) : RunOnGpu(d, set, &results);
  std::string listed;
  bool all = s.ok() && results.size() >= 3;
  for (const Result& r : results) {
    listed += (listed.empty() ? "" : ", ") + r.Json();
    all = all && r.ok;
  }
  std::printf("{%s, \"source\": %s, \"situations\": [%s], \"all_as_expected\": %s%s}\n",
              head.c_str(), JsonQuoted(DecodeSource::NameOf(dry)).c_str(), listed.c_str(),
              all ? "true" : "false",
              s.ok() ? "" : (", \"error\": " + JsonQuoted(s.message())).c_str());
  return all ? 0 : 1;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
