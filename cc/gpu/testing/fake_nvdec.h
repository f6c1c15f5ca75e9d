// A fake CUDA driver + NVDEC for the decoder pool's tests: it records every
// call, can fail any call, models streams, events and surfaces, and notes
// every rule the pool breaks (decoding into a surface still in use, unmapping
// while a kernel may still read the picture, reconfiguring with pictures
// mapped or to more decode surfaces than the decoder was created with, waiting
// on an event created without CU_EVENT_BLOCKING_SYNC, calls without a context,
// objects leaked). Where the driver refuses a call, the fake refuses it too.
//
// The fake's parser does not parse HEVC: a sample for it is a FakeSample
// (coded size, chroma format, bit depth, pictures in it) serialized by
// FakeSampleBytes after a real SPS NAL unit giving its coded size (what the
// GPU bodies read before decoding). It calls the pool's callbacks the way NVIDIA's parser does
// (sequence callback on the first picture and on every format change, decode
// callback with surface indices cycling over the decode surfaces, display
// callback after decoding, or at end of stream when `defer_display` is set).
//
// One fake per process at a time (the tables hold plain function pointers).
#ifndef TF_GULP_CC_GPU_TESTING_FAKE_NVDEC_H_
#define TF_GULP_CC_GPU_TESTING_FAKE_NVDEC_H_

#include <cstdint>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/testing/fake_call_log.h"

namespace tfg {
namespace gpu {
namespace testing {

struct FakeSample {
  int width = 64;
  int height = 48;
  int chroma_format = cudaVideoChromaFormat_420;
  int bit_depth_minus8 = 0;
  int pictures = 1;
  bool defer_display = false;
};
std::vector<uint8_t> FakeSampleBytes(const FakeSample& sample);

// calls(), violations(), Find, Count and FailCall (failing with CUDA_ERROR_UNKNOWN
// unless told otherwise): FakeCallLog's.
class FakeNvdec : public FakeCallLog<CUresult, CUDA_SUCCESS, CUDA_ERROR_UNKNOWN> {
 public:
  FakeNvdec();   // installs itself as the process's fake
  ~FakeNvdec();  // uninstalls

  const CudaApi& cuda() const { return cuda_; }
  const NvdecApi& nvdec() const { return nvdec_; }
  CUcontext context() const { return reinterpret_cast<CUcontext>(0xC0);}

  // The stand-in for the caller's kernel reading `luma` on `stream`
  // (a picture's device pointer): fails the test's rules if it is not mapped.
  void LaunchKernel(CUstream stream, unsigned long long luma);
  // The GPU finishes everything queued on `stream` so far.
  void CompleteStream(CUstream stream);

  // NVDEC engines cuvidGetDecoderCaps reports; caps limits.
  int engines = 3;
  unsigned max_size = 4096;
  unsigned min_size = 16;
  // CUVIDEOFORMAT::min_num_decode_surfaces the parser reports.
  int min_decode_surfaces = 1;
  // Device memory for decoders' surfaces (0: unlimited). cuvidCreateDecoder
  // returns CUDA_ERROR_OUT_OF_MEMORY when the live decoders and the new one
  // would need more: each (decode + output surfaces) x max width x max height
  // x 1.5 bytes (NV12), what TensorFlow's allocator leaves the driver.
  uint64_t device_memory = 0;
  // The next this many pictures cuvidGetDecodeStatus is asked about report
  // `corrupt_status` (a corrupt picture still decodes and maps):
  // cuvidDecodeStatus_Error, or cuvidDecodeStatus_Error_Concealed (the driver
  // hid the damage: the picture is still wrong).
  int corrupt_pictures = 0;
  int corrupt_status = cuvidDecodeStatus_Error;
  // Waits as the driver waits: cuEventSynchronize, cuStreamSynchronize and
  // cuCtxSynchronize block until CompleteStream (or a failed wait) got the
  // stream past the work waited for. Off: a wait completes the work at once
  // (a GPU that always gets there).
  bool blocking_waits = false;
  // Threads blocked in one of those waits now (blocking_waits only): what a
  // test waits for instead of sleeping.
  int waiting() const;

  // Calls (by name) made so far, each name once, in first-call order.
  std::vector<std::string> call_names() const;
  // Decoders, parsers, events and mapped pictures alive, and pushed contexts
  // not popped; all 0 after the pool is gone.
  std::map<std::string, int> live() const;
  // The violations and what live() still holds ("decoders: 1 left alive"):
  // empty once a pool that behaved is gone.
  std::vector<std::string> problems() const;

  // ----- what the fake's C functions call (public for them, not for tests)
  struct Stream {
    uint64_t queued = 0;     // sequence number of the last work queued
    uint64_t completed = 0;  // all work up to this number has finished
  };
  struct Event {
    unsigned flags = 0;  // cuEventCreate's
    CUstream stream = nullptr;
    uint64_t marks = 0;  // the stream's work it waits for
    bool recorded = false;
  };
  struct Frame {  // a mapped picture
    int decoder = 0;
    int surface = 0;
    CUstream stream = nullptr;
    uint64_t last_read = 0;  // the last kernel reading it (sequence number on `stream`)
  };
  struct Decoder {
    unsigned width = 0, height = 0, max_width = 0, max_height = 0;
    unsigned surfaces = 0, output_surfaces = 0;
    std::vector<bool> decoded;  // per surface: holds a decoded picture
  };
  struct Parser {
    CUVIDPARSERPARAMS params = {};
    bool have_format = false;
    FakeSample format;
    int next_surface = 0;
    unsigned surfaces = 0;  // what the sequence callback returned (0: the creation's)
    std::vector<int> deferred;  // decoded, display pending until end of stream
  };

  bool ContextCurrent() const;
  uint64_t Queue(CUstream stream);

  std::map<CUstream, Stream> streams;
  std::map<CUevent, Event> events;
  std::map<int, Decoder> decoders;
  std::map<int, Parser> parsers;
  std::map<unsigned long long, Frame> frames;     // by luma pointer
  std::condition_variable_any progress;           // a stream completed more work
  int waiters = 0;                                // threads blocked in a wait
  int next_id = 1000;  // events
  int next_decoder = 1;
  int next_parser = 1;

 private:
  CudaApi cuda_;
  NvdecApi nvdec_;
};

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_FAKE_NVDEC_H_
