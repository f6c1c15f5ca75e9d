// A pool of NVDEC decode sessions for per-image HEVC samples (Benzina's
// layout: every sample is one intra picture in Annex-B form).
//
// Why a pool: one decode session runs on one NVDEC engine (an H100 has seven),
// so a single session leaves most of the hardware idle. Each session owns an
// intra-only decoder (ulIntraDecodeOnly) created once at the largest picture
// size the dataset holds and reconfigured (cuvidReconfigureDecoder, cheaper
// than destroy + create) when a picture of another size arrives, and NVIDIA's
// parser (which fills the HEVC picture parameters).
//
// A decoded picture is mapped (cuvidMapVideoFrame) onto the caller's stream, so
// the post-processing copy into the output surface is ordered before the
// kernel the caller launches next on that stream. Release() records an event on
// that stream after the caller's kernel; the surface is unmapped only once that
// event has completed (Benzina unmapped right after launching, a race). Several
// pictures may be mapped at once; a Decode that needs a surface still in use
// waits for it and never decodes into it.
//
// Thread safety: Decode and Release may be called from any threads. A session
// decodes one picture at a time; Decode picks an idle session.
#ifndef TF_GULP_CC_GPU_NVDEC_POOL_H_
#define TF_GULP_CC_GPU_NVDEC_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/nvdec_picture.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {

struct NvdecPoolOptions {
  // Decode sessions; 0 = one per NVDEC engine (cuvidGetDecoderCaps'
  // nNumNVDECs; 1 where the driver does not say).
  int sessions = 0;
  // Decode surfaces per session, also the most pictures of one session mapped
  // at once (ulNumDecodeSurfaces = ulNumOutputSurfaces). A stream whose DPB
  // needs more (CUVIDEOFORMAT::min_num_decode_surfaces) gets that many.
  int surfaces = 8;
  // The largest coded picture the dataset holds (its index knows it); the
  // decoders are created at this size, so smaller pictures only reconfigure.
  int max_width = 0;
  int max_height = 0;
};

class NvdecSession;

// Per-call counts and total wall time of what the pool does besides decoding
// (the device check's profile phase reads them; docs/gpu.md). Kept always: an
// atomic add and two steady_clock reads per call, small beside the driver call
// each wraps.
enum class NvdecPoolCall : int {
  kCreate,               // cuvidCreateDecoder
  kDestroy,              // cuvidDestroyDecoder
  kReconfigure,          // cuvidReconfigureDecoder, accepted
  kReconfigureRefused,   // cuvidReconfigureDecoder, refused (destroy + create follow)
  kDrain,                // waiting for a session's pictures before a resize
  kEndOfStreamFlush,     // cuvidParseVideoData(CUVID_PKT_ENDOFSTREAM)
  kMap,                  // cuvidMapVideoFrame
  kSessionWait,          // Decode waiting for an idle session
  kCount
};
const char* NvdecPoolCallName(NvdecPoolCall call);
struct NvdecCallTotals {
  uint64_t calls = 0;
  uint64_t nanoseconds = 0;
};
struct NvdecPoolStats {
  NvdecCallTotals call[static_cast<int>(NvdecPoolCall::kCount)];
  const NvdecCallTotals& operator[](NvdecPoolCall c) const { return call[static_cast<int>(c)]; }
  // this - earlier, per call.
  NvdecPoolStats Since(const NvdecPoolStats& earlier) const;
  NvdecPoolStats& operator+=(const NvdecPoolStats& other);
};
struct NvdecPoolCounters {
  std::atomic<uint64_t> calls[static_cast<int>(NvdecPoolCall::kCount)] = {};
  std::atomic<uint64_t> nanoseconds[static_cast<int>(NvdecPoolCall::kCount)] = {};
  void Add(NvdecPoolCall c, uint64_t ns) {
    calls[static_cast<int>(c)].fetch_add(1, std::memory_order_relaxed);
    nanoseconds[static_cast<int>(c)].fetch_add(ns, std::memory_order_relaxed);
  }
  NvdecPoolStats Read() const;
};

class NvdecPool {
 public:
  // Creates the pool's sessions (each: events, a parser; the decoder itself
  // is created at the first picture, when the chroma format is known). `ctx`
  // is the CUDA context the caller's streams belong to (TensorFlow's); every
  // call is made with it pushed current. The tables must outlive the pool.
  static Status Create(const CudaApi* cuda, const NvdecApi* nvdec, CUcontext ctx,
                       const NvdecPoolOptions& options, std::unique_ptr<NvdecPool>* pool);

  // Waits for in-flight pictures (released or not), unmaps them and destroys
  // every decoder, parser and event. Decodes still waiting for a surface
  // return an error.
  ~NvdecPool();

  // Decodes one Annex-B HEVC picture and maps it on `stream`. The picture is
  // the caller's until Release. `what` names the sample in errors. A picture
  // NVDEC cannot take (not 8-bit 4:2:0, or outside this GPU's size limits) is
  // OutOfRange: the caller decodes it on the CPU.
  Status Decode(const uint8_t* data, size_t size, CUstream stream, const char* what,
                NvdecPicture* picture);

  // Call after launching the kernels that read `picture` on `stream`: records
  // an event there; the surface is unmapped once the event completed.
  Status Release(const NvdecPicture& picture, CUstream stream);

  // Stops the pool: waiting Decodes return, later ones fail; then cleans up as
  // the destructor does. Returns the first error the clean-up met.
  Status Shutdown();

  int sessions() const { return static_cast<int>(sessions_.size()); }

  // The largest picture the caller knows it will decode (a batch's or a
  // dataset's): decoders created from now on are sized for it (within this
  // GPU's limits), so that smaller pictures reconfigure rather than recreate.
  // Only ever raises. Thread safe.
  void RaiseMaxSize(int width, int height);

  // The counts and times so far (NvdecPoolCall); thread safe.
  NvdecPoolStats Stats() const { return counters_.Read(); }

 private:
  NvdecPool() = default;

  std::vector<std::unique_ptr<NvdecSession>> sessions_;
  std::mutex pick_mutex_;
  std::condition_variable pick_cv_;
  std::vector<bool> busy_;  // a Decode is using session i
  int next_ = 0;            // where the next pick starts (round robin)
  bool shut_down_ = false;
  std::atomic<unsigned> max_hint_width_{0};
  std::atomic<unsigned> max_hint_height_{0};
  NvdecPoolCounters counters_;
};

// The device memory one decode session's decoder needs, as far as its
// parameters tell (docs/gpu.md, "GPU memory"): `surfaces` decode surfaces
// (ulNumDecodeSurfaces) and as many output surfaces for the pictures mapped at
// once (ulNumOutputSurfaces), each a coded frame of max_width x max_height in
// NV12 (1.5 bytes a pixel). The driver allocates it outside TensorFlow's
// allocator; its own overhead comes on top (the device check measures it).
uint64_t NvdecSessionBytes(unsigned max_width, unsigned max_height, unsigned surfaces);

// "<call> failed: CUDA_ERROR_X (n)" for a failed driver/NVDEC call.
Status CudaCallError(const CudaApi& cuda, CUresult result, const char* call,
                     const char* what = nullptr);

}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_NVDEC_POOL_H_
