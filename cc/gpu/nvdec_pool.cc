#include "cc/gpu/nvdec_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <utility>

namespace tfg {
namespace gpu {

Status CudaCallError(const CudaApi& cuda, CUresult result, const char* call, const char* what) {
  const char* name = nullptr;
  if (cuda.cuGetErrorName == nullptr || cuda.cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    name = "unknown CUDA error";
  }
  return InternalError(call, " failed", what ? " for " : "", what ? what : "", ": ", name, " (",
                       static_cast<int>(result), ")");
}

const char* NvdecPoolCallName(NvdecPoolCall call) {
  static const char* const kNames[] = {"create", "destroy", "reconfigure", "reconfigure_refused",
                                       "drain", "end_of_stream_flush", "map", "session_wait"};
  return kNames[static_cast<int>(call)];
}

NvdecPoolStats NvdecPoolStats::Since(const NvdecPoolStats& earlier) const {
  NvdecPoolStats d;
  for (int i = 0; i < static_cast<int>(NvdecPoolCall::kCount); ++i) {
    d.call[i].calls = call[i].calls - earlier.call[i].calls;
    d.call[i].nanoseconds = call[i].nanoseconds - earlier.call[i].nanoseconds;
  }
  return d;
}

NvdecPoolStats& NvdecPoolStats::operator+=(const NvdecPoolStats& other) {
  for (int i = 0; i < static_cast<int>(NvdecPoolCall::kCount); ++i) {
    call[i].calls += other.call[i].calls;
    call[i].nanoseconds += other.call[i].nanoseconds;
  }
  return *this;
}

NvdecPoolStats NvdecPoolCounters::Read() const {
  NvdecPoolStats s;
  for (int i = 0; i < static_cast<int>(NvdecPoolCall::kCount); ++i) {
    s.call[i].calls = calls[i].load(std::memory_order_relaxed);
    s.call[i].nanoseconds = nanoseconds[i].load(std::memory_order_relaxed);
  }
  return s;
}

uint64_t NvdecSessionBytes(unsigned max_width, unsigned max_height, unsigned surfaces) {
  const uint64_t nv12 = static_cast<uint64_t>(max_width) * max_height * 3 / 2;
  return 2 * static_cast<uint64_t>(surfaces) * nv12;  // decode + output surfaces
}

namespace {

// Adds the scope's wall time to one of the pool's counters.
class CallTimer {
 public:
  CallTimer(NvdecPoolCounters* counters, NvdecPoolCall call)
      : counters_(counters), call_(call), start_(std::chrono::steady_clock::now()) {}
  ~CallTimer() { Stop(); }
  // Counts the call under `call` instead (a reconfigure refused).
  void CountAs(NvdecPoolCall call) { call_ = call; }
  void Stop() {
    if (counters_ == nullptr) return;
    counters_->Add(call_, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start_).count()));
    counters_ = nullptr;
  }

 private:
  NvdecPoolCounters* counters_;
  NvdecPoolCall call_;
  std::chrono::steady_clock::time_point start_;
};
// Megabytes (MiB) rounded up, for messages.
uint64_t MiB(uint64_t bytes) { return (bytes + (1u << 20) - 1) >> 20; }

// Pushes a context current for the scope (NVDEC and event calls act on the
// current context; the caller's thread may have another one current).
class ScopedContext {
 public:
  ScopedContext(const CudaApi& cuda, CUcontext ctx) : cuda_(cuda) {
    const CUresult r = cuda_.cuCtxPushCurrent(ctx);
    if (r == CUDA_SUCCESS) {
      pushed_ = true;
    } else {
      status_ = CudaCallError(cuda_, r, "cuCtxPushCurrent");
    }
  }
  ~ScopedContext() {
    if (pushed_) {
      CUcontext popped = nullptr;
      cuda_.cuCtxPopCurrent(&popped);
    }
  }
  const Status& status() const { return status_; }

 private:
  const CudaApi& cuda_;
  bool pushed_ = false;
  Status status_;
};

// The surfaces' events: a wait on one (cuEventSynchronize) blocks the
// waiting thread instead of spinning it, which the driver may do otherwise
// until the GPU gets there; the waiting thread is the pool's caller's.
constexpr unsigned kEventFlags = CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC;

void KeepFirst(Status* first, const Status& next) {
  if (first->ok() && !next.ok()) *first = next;
}

}  // namespace

// One decoder + parser and its surfaces. Decode/Close run with the session
// exclusively (NvdecPool hands it to one caller at a time); Release may run
// concurrently and only touches a surface's state and event under mutex_.
class NvdecSession {
 public:
  NvdecSession(const CudaApi& cuda, const NvdecApi& nvdec, CUcontext ctx, int index,
               const NvdecPoolOptions& options, const CUVIDDECODECAPS& caps,
               const std::atomic<unsigned>* max_hint_width,
               const std::atomic<unsigned>* max_hint_height, NvdecPoolCounters* counters)
      : cuda_(cuda), nvdec_(nvdec), ctx_(ctx), index_(index), options_(options), caps_(caps),
        max_hint_width_(max_hint_width), max_hint_height_(max_hint_height),
        counters_(counters), surfaces_(options.surfaces) {}

  // Creates one event per surface (the parser and decoder come lazily).
  Status Init() {
    ScopedContext scope(cuda_, ctx_);
    TFG_RETURN_IF_ERROR(scope.status());
    for (Surface& s : surfaces_) {
      const CUresult r = cuda_.cuEventCreate(&s.event, kEventFlags);
      if (r != CUDA_SUCCESS) {
        s.event = nullptr;
        return CudaCallError(cuda_, r, "cuEventCreate");
      }
    }
    return Status::Ok();
  }

  Status Decode(const uint8_t* data, size_t size, CUstream stream, const char* what,
                NvdecPicture* picture) {
    ScopedContext scope(cuda_, ctx_);
    TFG_RETURN_IF_ERROR(scope.status());
    Status status = DecodeInContext(data, size, stream, what, picture);
    if (!status.ok()) {
      // Pictures decoded but not handed out go back; a parser that met an
      // error is rebuilt before the next picture (its state is unknown).
      std::lock_guard<std::mutex> lock(mutex_);
      for (Surface& s : surfaces_) {
        if (s.state == State::kDecoded) s.state = State::kFree;
      }
      DestroyParser();
    }
    return status;
  }

  Status Release(const NvdecPicture& picture, CUstream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (picture.surface < 0 || picture.surface >= static_cast<int>(surfaces_.size()) ||
        surfaces_[picture.surface].state != State::kMapped ||
        surfaces_[picture.surface].luma != picture.luma) {
      return InvalidArgumentError("NVDEC picture (session ", index_, ", surface ",
                                  picture.surface, ") released twice or never decoded");
    }
    Surface& s = surfaces_[picture.surface];
    s.state = State::kReleased;
    s.stream = stream;
    Status status;
    {
      ScopedContext scope(cuda_, ctx_);
      status = scope.status();
      if (status.ok()) {
        const CUresult r = cuda_.cuEventRecord(s.event, stream);
        if (r != CUDA_SUCCESS) status = CudaCallError(cuda_, r, "cuEventRecord");
      }
    }
    // Without an event the surface is unmapped after synchronizing the whole
    // stream instead: slower, never early.
    s.event_recorded = status.ok();
    cv_.notify_all();
    return status;
  }

  // Wakes a Decode waiting for a surface; it returns an error.
  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    cv_.notify_all();
  }

  // Waits for every picture, unmaps it, destroys everything. Pictures never
  // released may still be read by the caller's kernels: the context is
  // synchronized before they are unmapped.
  Status Close() {
    Status first;
    ScopedContext scope(cuda_, ctx_);
    if (!scope.status().ok()) return scope.status();  // nothing can be freed without it
    bool unreleased = false;
    for (Surface& s : surfaces_) unreleased |= s.state == State::kMapped;
    if (unreleased) {
      const CUresult r = cuda_.cuCtxSynchronize();
      if (r != CUDA_SUCCESS) KeepFirst(&first, CudaCallError(cuda_, r, "cuCtxSynchronize"));
    }
    for (Surface& s : surfaces_) {
      if (s.state == State::kReleased) {
        KeepFirst(&first, FinishRelease(&s));
      } else if (s.state == State::kMapped) {
        KeepFirst(&first, Unmap(&s));
      }
      s.state = State::kFree;
    }
    DestroyParser();
    KeepFirst(&first, DestroyDecoder());
    for (Surface& s : surfaces_) {
      if (s.event != nullptr) {
        const CUresult r = cuda_.cuEventDestroy(s.event);
        if (r != CUDA_SUCCESS) KeepFirst(&first, CudaCallError(cuda_, r, "cuEventDestroy"));
        s.event = nullptr;
      }
    }
    return first;
  }

 private:
  enum class State {
    kFree,      // nothing in it
    kDecoded,   // decoded during the current Decode, not yet mapped
    kMapped,    // handed to the caller
    kReleased,  // the caller is done once `event` (or `stream`) completes
  };
  struct Surface {
    State state = State::kFree;
    CUevent event = nullptr;
    bool event_recorded = false;
    CUstream stream = nullptr;
    unsigned long long luma = 0;
  };

  Status DecodeInContext(const uint8_t* data, size_t size, CUstream stream, const char* what,
                         NvdecPicture* picture) {
    what_ = what;
    TFG_RETURN_IF_ERROR(ReapCompleted());
    if (parser_ == nullptr) TFG_RETURN_IF_ERROR(CreateParser());
    callback_status_ = Status::Ok();
    displayed_.clear();

    CUVIDSOURCEDATAPACKET packet = {};
    packet.flags = CUVID_PKT_ENDOFPICTURE;
    packet.payload = data;
    packet.payload_size = size;
    CUresult r = nvdec_.cuvidParseVideoData(parser_, &packet);
    if (r != CUDA_SUCCESS) {
      KeepFirst(&callback_status_, CudaCallError(cuda_, r, "cuvidParseVideoData", what));
    }
    if (callback_status_.ok() && displayed_.empty()) {
      // A parser that holds the picture back for display is told the stream
      // ended (the next sample starts a new one).
      CUVIDSOURCEDATAPACKET end = {};
      end.flags = CUVID_PKT_ENDOFSTREAM;
      CallTimer timer(counters_, NvdecPoolCall::kEndOfStreamFlush);
      r = nvdec_.cuvidParseVideoData(parser_, &end);
      if (r != CUDA_SUCCESS) {
        KeepFirst(&callback_status_,
                  CudaCallError(cuda_, r, "cuvidParseVideoData (end of stream)", what));
      }
    }
    TFG_RETURN_IF_ERROR(callback_status_);
    if (displayed_.size() != 1) {
      return DataLossError(what, ": the NVDEC parser found ", displayed_.size(),
                           " pictures; a per-image HEVC sample holds exactly one");
    }
    const int index = displayed_[0];
    CUVIDPROCPARAMS params = {};
    params.progressive_frame = 1;
    params.output_stream = stream;  // the post-processing is ordered before the caller's kernel
    unsigned long long luma = 0;
    unsigned int pitch = 0;
    {
      CallTimer timer(counters_, NvdecPoolCall::kMap);
      r = nvdec_.cuvidMapVideoFrame(decoder_, index, &luma, &pitch, &params);
    }
    if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuvidMapVideoFrame", what);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Surface& s = surfaces_[index];
      s.state = State::kMapped;
      s.luma = luma;
      s.event_recorded = false;
    }
    // A corrupt picture decodes "successfully" and maps: the decode status
    // says so. NVIDIA's sample checks cuvidGetDecodeStatus once the frame is
    // mapped (NvDecoder.cpp, HandlePictureDisplay); we refuse to warp it.
    if (nvdec_.cuvidGetDecodeStatus != nullptr) {
      CUVIDGETDECODESTATUS decode_status = {};
      r = nvdec_.cuvidGetDecodeStatus(decoder_, index, &decode_status);
      Status bad;
      if (r != CUDA_SUCCESS) {
        bad = CudaCallError(cuda_, r, "cuvidGetDecodeStatus", what);
      } else if (decode_status.decodeStatus == cuvidDecodeStatus_Error ||
                 decode_status.decodeStatus == cuvidDecodeStatus_Error_Concealed) {
        bad = DataLossError(what, ": NVDEC could not decode this picture (decode status ",
                            static_cast<int>(decode_status.decodeStatus),
                            "): the sample's HEVC data is corrupt");
      }
      if (!bad.ok()) {
        // The map's post-processing is queued on `stream`: unmap once the
        // stream has finished it, waiting on the surface's (blocking) event.
        Surface& s = surfaces_[index];
        const bool recorded = cuda_.cuEventRecord(s.event, stream) == CUDA_SUCCESS;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          s.state = State::kReleased;
          s.stream = stream;
          s.event_recorded = recorded;
        }
        KeepFirst(&bad, FinishRelease(&s));
        return bad;
      }
    }

    picture->session = index_;
    picture->surface = index;
    picture->width = display_width_;
    picture->height = display_height_;
    picture->pitch = pitch;
    picture->luma = luma;
    picture->surface_height = surface_height_;
    picture->chroma = luma + static_cast<unsigned long long>(pitch) * surface_height_;
    picture->full_range = full_range_;
    picture->matrix_coefficients = matrix_coefficients_;
    return Status::Ok();
  }

  Status CreateParser() {
    CUVIDPARSERPARAMS params = {};
    params.CodecType = cudaVideoCodec_HEVC;
    params.ulMaxNumDecodeSurfaces = static_cast<unsigned int>(surfaces_.size());
    params.ulMaxDisplayDelay = 0;  // intra pictures: display as soon as decoded
    params.pUserData = this;
    params.pfnSequenceCallback = &NvdecSession::OnSequence;
    params.pfnDecodePicture = &NvdecSession::OnDecode;
    params.pfnDisplayPicture = &NvdecSession::OnDisplay;
    const CUresult r = nvdec_.cuvidCreateVideoParser(&parser_, &params);
    if (r != CUDA_SUCCESS) {
      parser_ = nullptr;
      return CudaCallError(cuda_, r, "cuvidCreateVideoParser");
    }
    return Status::Ok();
  }

  void DestroyParser() {
    // cuvidDestroyVideoParser only frees host memory; its result cannot
    // leak device resources.
    if (parser_ != nullptr) nvdec_.cuvidDestroyVideoParser(parser_);
    parser_ = nullptr;
  }

  Status DestroyDecoder() {
    if (decoder_ == nullptr) return Status::Ok();
    CallTimer timer(counters_, NvdecPoolCall::kDestroy);
    const CUresult r = nvdec_.cuvidDestroyDecoder(decoder_);
    decoder_ = nullptr;
    coded_width_ = coded_height_ = 0;
    if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuvidDestroyDecoder");
    return Status::Ok();
  }

  // The parser's callbacks return 0 to stop parsing; the reason is kept in
  // callback_status_ (the parser's own return value does not carry it).
  static int CUDAAPI OnSequence(void* self, CUVIDEOFORMAT* format) {
    auto* session = static_cast<NvdecSession*>(self);
    const Status s = session->Sequence(*format);
    KeepFirst(&session->callback_status_, s);
    // The parser uses this many decode surfaces from now on (NvDecoder.cpp's
    // HandleVideoSequence returns its surface count the same way).
    return s.ok() ? static_cast<int>(session->surfaces_.size()) : 0;
  }
  static int CUDAAPI OnDecode(void* self, CUVIDPICPARAMS* params) {
    auto* session = static_cast<NvdecSession*>(self);
    const Status s = session->DecodePicture(params);
    KeepFirst(&session->callback_status_, s);
    return s.ok() ? 1 : 0;
  }
  static int CUDAAPI OnDisplay(void* self, CUVIDPARSERDISPINFO* info) {
    auto* session = static_cast<NvdecSession*>(self);
    if (info != nullptr) session->displayed_.push_back(info->picture_index);
    return 1;
  }

  Status Sequence(const CUVIDEOFORMAT& format) {
    if (format.codec != cudaVideoCodec_HEVC || format.chroma_format != cudaVideoChromaFormat_420 ||
        format.bit_depth_luma_minus8 != 0 || format.bit_depth_chroma_minus8 != 0) {
      // OutOfRange, as pictures past the size limits: the op decodes these on the CPU.
      return OutOfRangeError(what_, ": NVDEC path decodes 8-bit 4:2:0 HEVC only (this "
                                  "picture: chroma format ", static_cast<int>(format.chroma_format),
                                  ", ", 8 + format.bit_depth_luma_minus8,
                                  "-bit); decode it on the CPU");
    }
    const unsigned w = format.coded_width, h = format.coded_height;
    if (w < caps_.nMinWidth || h < caps_.nMinHeight || w > caps_.nMaxWidth ||
        h > caps_.nMaxHeight ||
        (caps_.nMaxMBCount != 0 && (w / 16) * (h / 16) > caps_.nMaxMBCount)) {
      return OutOfRangeError(what_, ": a ", w, "x", h, " picture is outside this GPU's NVDEC "
                             "limits (", caps_.nMinWidth, "x", caps_.nMinHeight, " to ",
                             caps_.nMaxWidth, "x", caps_.nMaxHeight, "); decode it on the CPU");
    }
    display_width_ = format.display_area.right - format.display_area.left;
    display_height_ = format.display_area.bottom - format.display_area.top;
    full_range_ = format.video_signal_description.video_full_range_flag != 0;
    matrix_coefficients_ = format.video_signal_description.matrix_coefficients;
    // Decode surfaces = max(what the pool was asked for, what the stream's DPB
    // needs): NVIDIA's sample decoder (Video Codec SDK, NvDecoder.cpp,
    // HandleVideoSequence) sizes its decoder from min_num_decode_surfaces and
    // never refuses a stream for it. More surfaces need a new decoder.
    const size_t wanted = std::max<size_t>(static_cast<size_t>(options_.surfaces),
                                           format.min_num_decode_surfaces);
    const bool more_surfaces = wanted > surfaces_.size();
    if (decoder_ != nullptr && !more_surfaces && w == coded_width_ && h == coded_height_) {
      return Status::Ok();
    }

    // Reconfiguring or replacing the decoder reallocates its surfaces:
    // every picture of this session must be back first.
    {
      CallTimer timer(counters_, NvdecPoolCall::kDrain);
      TFG_RETURN_IF_ERROR(DrainAll());
    }
    if (more_surfaces) {
      TFG_RETURN_IF_ERROR(GrowSurfaces(wanted));
      TFG_RETURN_IF_ERROR(DestroyDecoder());
    }
    bool reconfigured = false;
    if (decoder_ != nullptr && w <= max_width_ && h <= max_height_) {
      CUVIDRECONFIGUREDECODERINFO info = {};
      info.ulWidth = w;
      info.ulHeight = h;
      info.ulTargetWidth = w;
      info.ulTargetHeight = h;
      info.ulNumDecodeSurfaces = static_cast<unsigned int>(surfaces_.size());
      info.display_area.right = info.target_rect.right = static_cast<short>(w);
      info.display_area.bottom = info.target_rect.bottom = static_cast<short>(h);
      // A reconfigure the driver refuses is not the end of the stream: NVIDIA's
      // reconfigure path (NvDecoder.cpp, ReconfigureDecoder) only covers sizes
      // within ulMaxWidth/Height, and FFmpeg's cuviddec.c never reconfigures
      // but makes a new decoder; we fall back to destroy + create.
      CallTimer timer(counters_, NvdecPoolCall::kReconfigure);
      reconfigured = nvdec_.cuvidReconfigureDecoder(decoder_, &info) == CUDA_SUCCESS;
      if (!reconfigured) timer.CountAs(NvdecPoolCall::kReconfigureRefused);
    }
    if (!reconfigured) {
      // First picture, larger than the dataset's largest promised, more
      // surfaces, or a refused reconfigure.
      TFG_RETURN_IF_ERROR(DestroyDecoder());
      CUVIDDECODECREATEINFO info = {};
      info.ulWidth = w;
      info.ulHeight = h;
      // At least the dataset's largest picture where the caller knows it
      // (options, RaiseMaxSize), so that smaller pictures only reconfigure.
      const unsigned max_w = std::max<unsigned>(static_cast<unsigned>(options_.max_width),
                                                max_hint_width_->load());
      const unsigned max_h = std::max<unsigned>(static_cast<unsigned>(options_.max_height),
                                                max_hint_height_->load());
      info.ulMaxWidth = std::min<unsigned>(std::max<unsigned>(w, max_w), caps_.nMaxWidth);
      info.ulMaxHeight = std::min<unsigned>(std::max<unsigned>(h, max_h), caps_.nMaxHeight);
      info.ulNumDecodeSurfaces = static_cast<unsigned int>(surfaces_.size());
      info.ulNumOutputSurfaces = static_cast<unsigned int>(surfaces_.size());
      info.CodecType = cudaVideoCodec_HEVC;
      info.ChromaFormat = cudaVideoChromaFormat_420;
      info.OutputFormat = cudaVideoSurfaceFormat_NV12;
      info.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
      info.ulCreationFlags = cudaVideoCreate_PreferCUVID;
      info.ulIntraDecodeOnly = 1;
      // The whole coded frame, unscaled, into the output surface: the
      // kernels crop (NvdecPicture::width/height) and address it themselves.
      info.ulTargetWidth = w;
      info.ulTargetHeight = h;
      info.display_area.right = info.target_rect.right = static_cast<short>(w);
      info.display_area.bottom = info.target_rect.bottom = static_cast<short>(h);
      CallTimer timer(counters_, NvdecPoolCall::kCreate);
      const CUresult r = nvdec_.cuvidCreateDecoder(&decoder_, &info);
      timer.Stop();
      if (r != CUDA_SUCCESS) {
        decoder_ = nullptr;
        if (r == kCudaErrorOutOfMemory) return DecoderOutOfMemory(info);
        return CudaCallError(cuda_, r, "cuvidCreateDecoder", what_);
      }
      max_width_ = info.ulMaxWidth;
      max_height_ = info.ulMaxHeight;
    }
    coded_width_ = w;
    coded_height_ = h;
    // The output surface is the coded size, NV12: chroma after `h` luma rows.
    surface_height_ = static_cast<int>(h);
    return Status::Ok();
  }

  // TensorFlow reserves nearly all GPU memory when it starts, and NVDEC's
  // surfaces are allocated by the driver outside it: say what to set, and how
  // much the pool needs (options_.sessions is the pool's session count).
  Status DecoderOutOfMemory(const CUVIDDECODECREATEINFO& info) const {
    const uint64_t per_session = NvdecSessionBytes(
        static_cast<unsigned>(info.ulMaxWidth), static_cast<unsigned>(info.ulMaxHeight),
        static_cast<unsigned>(info.ulNumDecodeSurfaces));
    const int sessions = std::max(1, options_.sessions);
    return ResourceExhaustedError(
        what_, ": cuvidCreateDecoder failed: CUDA_ERROR_OUT_OF_MEMORY: no room on the GPU for an "
        "NVDEC decoder of ", info.ulMaxWidth, "x", info.ulMaxHeight, " with ",
        info.ulNumDecodeSurfaces, " surfaces (about ", MiB(per_session), " MiB per decode "
        "session, ", MiB(per_session * sessions), " MiB for this GPU's ", sessions,
        " sessions, plus the driver's own). The driver allocates NVDEC's surfaces outside "
        "TensorFlow's memory, and TensorFlow takes nearly all GPU memory when it starts: call "
        "tf.config.experimental.set_memory_growth(gpu, True) for each GPU at program start, or "
        "give the GPU a memory limit (tf.config.set_logical_device_configuration(gpu, "
        "[tf.config.LogicalDeviceConfiguration(memory_limit=...)])) that leaves at least that "
        "much free (docs/gpu.md, \"GPU memory\")");
  }

  Status DecodePicture(CUVIDPICPARAMS* params) {
    const int index = params->CurrPicIdx;
    if (index < 0 || index >= static_cast<int>(surfaces_.size()) || decoder_ == nullptr) {
      return InternalError(what_, ": NVDEC parser chose surface ", index, " of ",
                           surfaces_.size());
    }
    TFG_RETURN_IF_ERROR(WaitForSurface(index));
    const CUresult r = nvdec_.cuvidDecodePicture(decoder_, params);
    if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuvidDecodePicture", what_);
    std::lock_guard<std::mutex> lock(mutex_);
    surfaces_[index].state = State::kDecoded;
    return Status::Ok();
  }

  // Makes surface `index` free: a released picture is finished (its event
  // waited for, then unmapped); one the caller still holds is waited for.
  Status WaitForSurface(int index) {
    Surface& s = surfaces_[index];
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopped_ || s.state != State::kMapped; });
      if (stopped_) {
        return UnavailableError(what_, ": the NVDEC decoder pool was shut down while waiting "
                                "for a free surface");
      }
      if (s.state == State::kFree) return Status::Ok();
    }
    return FinishRelease(&s);
  }

  Status DrainAll() {
    for (int i = 0; i < static_cast<int>(surfaces_.size()); ++i) {
      TFG_RETURN_IF_ERROR(WaitForSurface(i));
    }
    return Status::Ok();
  }

  // Adds surfaces (and their events) up to `count`; every surface is free
  // (DrainAll), so no Release can be looking at the vector.
  Status GrowSurfaces(size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (surfaces_.size() < count) {
      Surface s;
      const CUresult r = cuda_.cuEventCreate(&s.event, kEventFlags);
      if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuEventCreate");
      surfaces_.push_back(s);
    }
    return Status::Ok();
  }

  // Unmaps the released pictures whose kernels have finished, without waiting.
  Status ReapCompleted() {
    for (Surface& s : surfaces_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (s.state != State::kReleased || !s.event_recorded) continue;
      }
      const CUresult r = cuda_.cuEventQuery(s.event);
      if (r == CUDA_ERROR_NOT_READY) continue;
      // Done, or an error: FinishRelease waits either way, so the surface is
      // not lost, and the query's error is reported.
      Status status = FinishRelease(&s);
      if (r != CUDA_SUCCESS) status = CudaCallError(cuda_, r, "cuEventQuery", what_);
      TFG_RETURN_IF_ERROR(status);
    }
    return Status::Ok();
  }

  // Waits until the caller's kernels reading `s` are done, then unmaps it.
  // The surface is unmapped even if waiting failed (then the context is
  // broken and nothing runs any more): nothing leaks.
  Status FinishRelease(Surface* s) {
    Status status;
    const CUresult r = s->event_recorded ? cuda_.cuEventSynchronize(s->event)
                                         : cuda_.cuStreamSynchronize(s->stream);
    if (r != CUDA_SUCCESS) {
      status = CudaCallError(cuda_, r, s->event_recorded ? "cuEventSynchronize"
                                                         : "cuStreamSynchronize");
    }
    KeepFirst(&status, Unmap(s));
    return status;
  }

  Status Unmap(Surface* s) {
    const CUresult r = nvdec_.cuvidUnmapVideoFrame(decoder_, s->luma);
    std::lock_guard<std::mutex> lock(mutex_);
    s->state = State::kFree;
    s->luma = 0;
    if (r != CUDA_SUCCESS) return CudaCallError(cuda_, r, "cuvidUnmapVideoFrame");
    return Status::Ok();
  }

  const CudaApi& cuda_;
  const NvdecApi& nvdec_;
  const CUcontext ctx_;
  const int index_;
  const NvdecPoolOptions options_;
  const CUVIDDECODECAPS caps_;
  // The pool's RaiseMaxSize hints, shared by its sessions.
  const std::atomic<unsigned>* max_hint_width_;
  const std::atomic<unsigned>* max_hint_height_;
  NvdecPoolCounters* counters_;  // the pool's

  std::mutex mutex_;  // surfaces' states, stopped_
  std::condition_variable cv_;
  std::vector<Surface> surfaces_;
  bool stopped_ = false;

  CUvideoparser parser_ = nullptr;
  CUvideodecoder decoder_ = nullptr;
  unsigned coded_width_ = 0, coded_height_ = 0, max_width_ = 0, max_height_ = 0;
  int surface_height_ = 0, display_width_ = 0, display_height_ = 0;
  bool full_range_ = false;
  int matrix_coefficients_ = 2;

  // The current Decode's state, filled by the callbacks.
  const char* what_ = "";
  Status callback_status_;
  std::vector<int> displayed_;
};

Status NvdecPool::Create(const CudaApi* cuda, const NvdecApi* nvdec, CUcontext ctx,
                         const NvdecPoolOptions& options, std::unique_ptr<NvdecPool>* pool) {
  if (options.surfaces < 1 || options.sessions < 0 || options.max_width < 0 ||
      options.max_height < 0) {
    return InvalidArgumentError("NVDEC pool: sessions (", options.sessions, ") must be >= 0, "
                                "surfaces (", options.surfaces, ") >= 1, sizes >= 0");
  }
  CUVIDDECODECAPS caps = {};
  caps.eCodecType = cudaVideoCodec_HEVC;
  caps.eChromaFormat = cudaVideoChromaFormat_420;
  caps.nBitDepthMinus8 = 0;
  {
    ScopedContext scope(*cuda, ctx);
    TFG_RETURN_IF_ERROR(scope.status());
    const CUresult r = nvdec->cuvidGetDecoderCaps(&caps);
    if (r != CUDA_SUCCESS) return CudaCallError(*cuda, r, "cuvidGetDecoderCaps");
  }
  if (!caps.bIsSupported) {
    return UnavailableError("this GPU's NVDEC cannot decode 8-bit 4:2:0 HEVC: decode on the CPU");
  }
  if (options.max_width > static_cast<int>(caps.nMaxWidth) ||
      options.max_height > static_cast<int>(caps.nMaxHeight)) {
    return OutOfRangeError("the dataset's largest picture (", options.max_width, "x",
                           options.max_height, ") exceeds this GPU's NVDEC limit (",
                           caps.nMaxWidth, "x", caps.nMaxHeight, "): decode on the CPU");
  }
  const int sessions = options.sessions > 0 ? options.sessions
                                            : std::max<int>(1, caps.nNumNVDECs);
  NvdecPoolOptions resolved = options;  // the sessions' errors name the pool's size
  resolved.sessions = sessions;
  std::unique_ptr<NvdecPool> result(new NvdecPool);
  for (int i = 0; i < sessions; ++i) {
    result->sessions_.emplace_back(new NvdecSession(*cuda, *nvdec, ctx, i, resolved, caps,
                                                    &result->max_hint_width_,
                                                    &result->max_hint_height_,
                                                    &result->counters_));
    result->busy_.push_back(false);
    Status status = result->sessions_.back()->Init();
    if (!status.ok()) {
      result->Shutdown();  // frees the events the sessions made so far
      return status;
    }
  }
  *pool = std::move(result);
  return Status::Ok();
}

NvdecPool::~NvdecPool() { Shutdown(); }

void NvdecPool::RaiseMaxSize(int width, int height) {
  for (auto [hint, value] : {std::make_pair(&max_hint_width_, width),
                             std::make_pair(&max_hint_height_, height)}) {
    // Rounded up to whole 16x16 macroblocks: a sample entry's size is the
    // picture's, the coded size NVDEC reports is a multiple of 8 or 16 above it.
    const unsigned v = value > 0 ? (static_cast<unsigned>(value) + 15u) & ~15u : 0;
    unsigned seen = hint->load();
    while (v > seen && !hint->compare_exchange_weak(seen, v)) {
    }
  }
}

Status NvdecPool::Decode(const uint8_t* data, size_t size, CUstream stream, const char* what,
                         NvdecPicture* picture) {
  int chosen = -1;
  {
    CallTimer timer(&counters_, NvdecPoolCall::kSessionWait);
    std::unique_lock<std::mutex> lock(pick_mutex_);
    pick_cv_.wait(lock, [&] {
      if (shut_down_) return true;
      for (int i = 0; i < static_cast<int>(busy_.size()); ++i) {
        // Round robin from the last pick spreads pictures over the engines.
        const int candidate = (next_ + i) % static_cast<int>(busy_.size());
        if (!busy_[candidate]) {
          chosen = candidate;
          return true;
        }
      }
      return false;
    });
    if (shut_down_) {
      return UnavailableError(what, ": the NVDEC decoder pool is shut down");
    }
    busy_[chosen] = true;
    next_ = (chosen + 1) % static_cast<int>(busy_.size());
  }
  const Status status = sessions_[chosen]->Decode(data, size, stream, what, picture);
  {
    std::lock_guard<std::mutex> lock(pick_mutex_);
    busy_[chosen] = false;
  }
  pick_cv_.notify_all();
  return status;
}

Status NvdecPool::Release(const NvdecPicture& picture, CUstream stream) {
  if (picture.session < 0 || picture.session >= static_cast<int>(sessions_.size())) {
    return InvalidArgumentError("NVDEC picture of session ", picture.session,
                                " released to a pool of ", sessions_.size());
  }
  return sessions_[picture.session]->Release(picture, stream);
}

Status NvdecPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(pick_mutex_);
    if (shut_down_) return Status::Ok();
    shut_down_ = true;
  }
  pick_cv_.notify_all();
  for (auto& session : sessions_) session->Stop();
  {
    // Decodes in progress return (their surface waits were woken).
    std::unique_lock<std::mutex> lock(pick_mutex_);
    pick_cv_.wait(lock, [&] { return std::none_of(busy_.begin(), busy_.end(),
                                                  [](bool b) { return b; }); });
  }
  Status first;
  for (auto& session : sessions_) KeepFirst(&first, session->Close());
  return first;
}

}  // namespace gpu
}  // namespace tfg
