#include "cc/gpu/testing/fake_nvdec.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>

namespace tfg {
namespace gpu {
namespace testing {
namespace {

// ffnvcodec's dynlink_cuda.h names only a few CUresult values; these are
// cuda.h's.
constexpr CUresult kInvalidValue = static_cast<CUresult>(1);
constexpr CUresult kOutOfMemory = static_cast<CUresult>(2);

FakeNvdec* g_fake = nullptr;
thread_local int t_context_depth = 0;
std::atomic<int> g_contexts_pushed{0};

template <typename... Args>
std::string Str(const Args&... args) {
  std::ostringstream out;
  ((out << args), ...);
  return out.str();
}

int Id(const void* handle) { return static_cast<int>(reinterpret_cast<intptr_t>(handle)); }
template <typename T>
T Handle(int id) {
  return reinterpret_cast<T>(static_cast<intptr_t>(id));
}

unsigned long long LumaPointer(int decoder, int surface) {
  return 0x100000000ull * decoder + 0x1000000ull * (surface + 1);
}

// Destroy calls free their object even when made to fail: the pool can only
// report such an error, and the leak checks stay meaningful.
#define FAKE_ENTER(name, args)                                   \
  std::unique_lock<std::recursive_mutex> lock(g_fake->mutex);    \
  const CUresult injected = g_fake->Enter(name, Str args);

// ----- CUDA driver
CUresult CUDAAPI FakeGetErrorName(CUresult result, const char** name) {
  if (result == CUDA_ERROR_UNKNOWN) {
    *name = "CUDA_ERROR_UNKNOWN";
  } else if (result == CUDA_ERROR_NOT_READY) {
    *name = "CUDA_ERROR_NOT_READY";
  } else if (result == kInvalidValue) {
    *name = "CUDA_ERROR_INVALID_VALUE";
  } else if (result == kOutOfMemory) {
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
  } else {
    *name = "CUDA_ERROR_OTHER";
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeDriverGetVersion(int* version) {
  FAKE_ENTER("cuDriverGetVersion", ());
  if (injected != CUDA_SUCCESS) return injected;
  *version = 12080;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeCtxPush(CUcontext ctx) {
  FAKE_ENTER("cuCtxPushCurrent", ("ctx=", Id(ctx)));
  if (injected != CUDA_SUCCESS) return injected;
  ++t_context_depth;
  ++g_contexts_pushed;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeCtxPop(CUcontext* ctx) {
  FAKE_ENTER("cuCtxPopCurrent", ());
  if (t_context_depth == 0) g_fake->Violation("cuCtxPopCurrent with no context pushed");
  --t_context_depth;
  --g_contexts_pushed;
  if (ctx) *ctx = g_fake->context();
  return injected;
}

// A wait that fails means the context met a sticky error: nothing runs on it
// any more, so nothing still reads a picture.
void AbortAllWork() {
  for (auto& [stream, s] : g_fake->streams) s.completed = s.queued;
  g_fake->progress.notify_all();
}

// A driver wait: with blocking_waits, blocks (the fake unlocked) until
// `done()`; otherwise returns at once (the caller then completes the work).
template <typename Done>
void WaitFor(std::unique_lock<std::recursive_mutex>& lock, Done done) {
  if (!g_fake->blocking_waits) return;
  ++g_fake->waiters;
  g_fake->progress.notify_all();  // a test may be waiting for a waiter
  g_fake->progress.wait(lock, done);
  --g_fake->waiters;
}

CUresult CUDAAPI FakeCtxSynchronize() {
  FAKE_ENTER("cuCtxSynchronize", ());
  if (injected != CUDA_SUCCESS) {
    AbortAllWork();
    return injected;
  }
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuCtxSynchronize without a context");
  WaitFor(lock, [] {
    for (auto& [stream, s] : g_fake->streams) {
      if (s.completed < s.queued) return false;
    }
    return true;
  });
  for (auto& [stream, s] : g_fake->streams) s.completed = s.queued;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeEventCreate(CUevent* event, unsigned int flags) {
  FAKE_ENTER("cuEventCreate", ("flags=", flags));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuEventCreate without a context");
  *event = Handle<CUevent>(g_fake->next_id++);
  g_fake->events[*event] = FakeNvdec::Event();
  g_fake->events[*event].flags = flags;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeEventDestroy(CUevent event) {
  FAKE_ENTER("cuEventDestroy", ("event=", Id(event)));
  if (g_fake->events.erase(event) == 0) g_fake->Violation("cuEventDestroy of an unknown event");
  return injected;
}

CUresult CUDAAPI FakeEventRecord(CUevent event, CUstream stream) {
  FAKE_ENTER("cuEventRecord", ("event=", Id(event), ", stream=", Id(stream)));
  if (injected != CUDA_SUCCESS) return injected;
  auto it = g_fake->events.find(event);
  if (it == g_fake->events.end()) {
    g_fake->Violation("cuEventRecord of an unknown event");
    return kInvalidValue;
  }
  it->second.stream = stream;
  it->second.marks = g_fake->streams[stream].queued;
  it->second.recorded = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeEventQuery(CUevent event) {
  FAKE_ENTER("cuEventQuery", ("event=", Id(event)));
  if (injected != CUDA_SUCCESS) return injected;
  auto it = g_fake->events.find(event);
  if (it == g_fake->events.end()) return kInvalidValue;
  if (!it->second.recorded) return CUDA_SUCCESS;
  return g_fake->streams[it->second.stream].completed >= it->second.marks ? CUDA_SUCCESS
                                                                          : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI FakeEventSynchronize(CUevent event) {
  FAKE_ENTER("cuEventSynchronize", ("event=", Id(event)));
  if (injected != CUDA_SUCCESS) {
    AbortAllWork();
    return injected;
  }
  auto it = g_fake->events.find(event);
  if (it == g_fake->events.end()) return kInvalidValue;
  // Without CU_EVENT_BLOCKING_SYNC the driver may spin the waiting CPU thread
  // until the GPU gets there (CUDA driver API, cuEventCreate's flags).
  if (!(it->second.flags & CU_EVENT_BLOCKING_SYNC)) {
    g_fake->Violation("cuEventSynchronize on an event created without CU_EVENT_BLOCKING_SYNC "
                      "(the wait may spin a CPU thread)");
  }
  if (it->second.recorded) {
    const CUstream stream = it->second.stream;
    const uint64_t marks = it->second.marks;
    WaitFor(lock, [&] { return g_fake->streams[stream].completed >= marks; });
    auto& s = g_fake->streams[stream];
    s.completed = std::max(s.completed, marks);  // blocks until the GPU got there
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeStreamSynchronize(CUstream stream) {
  FAKE_ENTER("cuStreamSynchronize", ("stream=", Id(stream)));
  if (injected != CUDA_SUCCESS) {
    AbortAllWork();
    return injected;
  }
  const uint64_t queued = g_fake->streams[stream].queued;
  WaitFor(lock, [&] { return g_fake->streams[stream].completed >= queued; });
  auto& s = g_fake->streams[stream];
  s.completed = std::max(s.completed, queued);
  return CUDA_SUCCESS;
}

// ----- NVDEC
CUresult CUDAAPI FakeGetDecoderCaps(CUVIDDECODECAPS* caps) {
  FAKE_ENTER("cuvidGetDecoderCaps", ());
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidGetDecoderCaps without a context");
  caps->bIsSupported = caps->eCodecType == cudaVideoCodec_HEVC ? 1 : 0;
  caps->nNumNVDECs = static_cast<unsigned char>(g_fake->engines);
  caps->nMaxWidth = caps->nMaxHeight = g_fake->max_size;
  caps->nMinWidth = caps->nMinHeight = static_cast<unsigned short>(g_fake->min_size);
  caps->nMaxMBCount = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeCreateDecoder(CUvideodecoder* decoder, CUVIDDECODECREATEINFO* info) {
  FAKE_ENTER("cuvidCreateDecoder",
             ("size=", info->ulWidth, "x", info->ulHeight, ", max=", info->ulMaxWidth, "x",
              info->ulMaxHeight, ", surfaces=", info->ulNumDecodeSurfaces));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidCreateDecoder without a context");
  if (info->ulIntraDecodeOnly != 1) g_fake->Violation("decoder not created intra-only");
  if (info->ulNumDecodeSurfaces < static_cast<unsigned>(g_fake->min_decode_surfaces)) {
    g_fake->Violation("decoder created with fewer surfaces than the stream needs");
  }
  if (info->target_rect.right != static_cast<short>(info->ulTargetWidth) ||
      info->display_area.bottom != static_cast<short>(info->ulHeight)) {
    g_fake->Violation("decoder output is not the whole coded frame, unscaled");
  }
  if (info->ulWidth > info->ulMaxWidth || info->ulHeight > info->ulMaxHeight) {
    g_fake->Violation("decoder created larger than its maximum");
    return kInvalidValue;
  }
  if (g_fake->device_memory != 0) {
    auto bytes = [](unsigned long w, unsigned long h, unsigned long surfaces) {
      return static_cast<uint64_t>(w) * h * 3 / 2 * surfaces;
    };
    uint64_t used = bytes(info->ulMaxWidth, info->ulMaxHeight,
                          info->ulNumDecodeSurfaces + info->ulNumOutputSurfaces);
    for (const auto& live : g_fake->decoders) {
      const FakeNvdec::Decoder& d = live.second;
      used += bytes(d.max_width, d.max_height, d.surfaces + d.output_surfaces);
    }
    if (used > g_fake->device_memory) return kOutOfMemory;
  }
  const int id = g_fake->next_decoder++;
  FakeNvdec::Decoder& d = g_fake->decoders[id];
  d.width = info->ulWidth;
  d.height = info->ulHeight;
  d.max_width = info->ulMaxWidth;
  d.max_height = info->ulMaxHeight;
  d.surfaces = info->ulNumDecodeSurfaces;
  d.output_surfaces = info->ulNumOutputSurfaces;
  d.decoded.assign(d.surfaces, false);
  *decoder = Handle<CUvideodecoder>(id);
  return CUDA_SUCCESS;
}

int MappedOn(int decoder) {
  int n = 0;
  for (auto& [luma, f] : g_fake->frames) n += f.decoder == decoder;
  return n;
}

CUresult CUDAAPI FakeDestroyDecoder(CUvideodecoder decoder) {
  FAKE_ENTER("cuvidDestroyDecoder", ("decoder=", Id(decoder)));
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidDestroyDecoder without a context");
  if (MappedOn(Id(decoder)) != 0) {
    g_fake->Violation(Str("decoder ", Id(decoder), " destroyed with pictures mapped"));
    for (auto it = g_fake->frames.begin(); it != g_fake->frames.end();) {
      it = it->second.decoder == Id(decoder) ? g_fake->frames.erase(it) : std::next(it);
    }
  }
  if (g_fake->decoders.erase(Id(decoder)) == 0) g_fake->Violation("unknown decoder destroyed");
  return injected;
}

CUresult CUDAAPI FakeReconfigureDecoder(CUvideodecoder decoder,
                                        CUVIDRECONFIGUREDECODERINFO* info) {
  FAKE_ENTER("cuvidReconfigureDecoder",
             ("decoder=", Id(decoder), ", size=", info->ulWidth, "x", info->ulHeight));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidReconfigureDecoder without a context");
  auto it = g_fake->decoders.find(Id(decoder));
  if (it == g_fake->decoders.end()) return kInvalidValue;
  if (MappedOn(Id(decoder)) != 0) g_fake->Violation("decoder reconfigured with pictures mapped");
  if (info->ulWidth > it->second.max_width || info->ulHeight > it->second.max_height) {
    g_fake->Violation("decoder reconfigured beyond its maximum size");
    return kInvalidValue;
  }
  // The decode surfaces are allocated with the decoder: a reconfigure cannot
  // add any (cuviddec.h's ulNumDecodeSurfaces; NVIDIA's NvDecoder.cpp makes a
  // new decoder for more), and the stream's DPB needs its minimum.
  if (info->ulNumDecodeSurfaces > it->second.surfaces) {
    g_fake->Violation(Str("decoder reconfigured to ", info->ulNumDecodeSurfaces,
                          " decode surfaces, more than the ", it->second.surfaces,
                          " it was created with"));
    return kInvalidValue;
  }
  if (info->ulNumDecodeSurfaces < static_cast<unsigned>(g_fake->min_decode_surfaces)) {
    g_fake->Violation("decoder reconfigured with fewer surfaces than the stream needs");
  }
  it->second.width = info->ulWidth;
  it->second.height = info->ulHeight;
  it->second.decoded.assign(it->second.surfaces, false);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeDecodePicture(CUvideodecoder decoder, CUVIDPICPARAMS* params) {
  FAKE_ENTER("cuvidDecodePicture", ("decoder=", Id(decoder), ", surface=", params->CurrPicIdx));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidDecodePicture without a context");
  auto it = g_fake->decoders.find(Id(decoder));
  if (it == g_fake->decoders.end()) return kInvalidValue;
  const int surface = params->CurrPicIdx;
  if (surface < 0 || surface >= static_cast<int>(it->second.surfaces)) {
    return kInvalidValue;
  }
  if (g_fake->frames.count(LumaPointer(Id(decoder), surface)) != 0) {
    g_fake->Violation(Str("decoded into surface ", surface, " while it is mapped"));
  }
  it->second.decoded[surface] = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeMapVideoFrame(CUvideodecoder decoder, int surface,
                                   unsigned long long* luma, unsigned int* pitch,
                                   CUVIDPROCPARAMS* params) {
  FAKE_ENTER("cuvidMapVideoFrame", ("decoder=", Id(decoder), ", surface=", surface,
                                    ", stream=", Id(params->output_stream)));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidMapVideoFrame without a context");
  auto it = g_fake->decoders.find(Id(decoder));
  if (it == g_fake->decoders.end()) return kInvalidValue;
  if (surface < 0 || surface >= static_cast<int>(it->second.surfaces) ||
      !it->second.decoded[surface]) {
    g_fake->Violation(Str("mapped surface ", surface, ", which holds no decoded picture"));
    return kInvalidValue;
  }
  const unsigned long long pointer = LumaPointer(Id(decoder), surface);
  if (g_fake->frames.count(pointer) != 0) {
    g_fake->Violation(Str("surface ", surface, " mapped twice"));
    return kInvalidValue;
  }
  if (MappedOn(Id(decoder)) >= static_cast<int>(it->second.output_surfaces)) {
    g_fake->Violation("more pictures mapped than output surfaces");
    return kOutOfMemory;
  }
  FakeNvdec::Frame& frame = g_fake->frames[pointer];
  frame.decoder = Id(decoder);
  frame.surface = surface;
  frame.stream = params->output_stream;
  frame.last_read = g_fake->Queue(params->output_stream);  // the post-processing copy
  *luma = pointer;
  *pitch = (it->second.width + 255) / 256 * 256;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeUnmapVideoFrame(CUvideodecoder decoder, unsigned long long luma) {
  FAKE_ENTER("cuvidUnmapVideoFrame", ("decoder=", Id(decoder), ", surface=",
                                      static_cast<int>((luma & 0xFFFFFFFFull) / 0x1000000ull) - 1));
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidUnmapVideoFrame without a context");
  auto it = g_fake->frames.find(luma);
  if (it == g_fake->frames.end()) {
    g_fake->Violation("unmapped a picture that is not mapped");
    return kInvalidValue;
  }
  const FakeNvdec::Stream& s = g_fake->streams[it->second.stream];
  if (s.completed < it->second.last_read) {
    g_fake->Violation(Str("surface ", it->second.surface, " unmapped while work #",
                          it->second.last_read, " reading it may still run (stream done up to #",
                          s.completed, ")"));
  }
  // Even a failed unmap gives the mapping back here (see FAKE_ENTER).
  g_fake->frames.erase(it);
  return injected;
}

CUresult CUDAAPI FakeGetDecodeStatus(CUvideodecoder decoder, int surface,
                                     CUVIDGETDECODESTATUS* status) {
  FAKE_ENTER("cuvidGetDecodeStatus", ("decoder=", Id(decoder), ", surface=", surface));
  if (injected != CUDA_SUCCESS) return injected;
  if (!g_fake->ContextCurrent()) g_fake->Violation("cuvidGetDecodeStatus without a context");
  auto it = g_fake->decoders.find(Id(decoder));
  if (it == g_fake->decoders.end() || surface < 0 ||
      surface >= static_cast<int>(it->second.surfaces)) {
    return kInvalidValue;
  }
  *status = {};
  status->decodeStatus = static_cast<cuvidDecodeStatus>(
      g_fake->corrupt_pictures > 0 ? g_fake->corrupt_status : cuvidDecodeStatus_Success);
  if (g_fake->corrupt_pictures > 0) --g_fake->corrupt_pictures;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeCreateVideoParser(CUvideoparser* parser, CUVIDPARSERPARAMS* params) {
  FAKE_ENTER("cuvidCreateVideoParser", ("surfaces=", params->ulMaxNumDecodeSurfaces));
  if (injected != CUDA_SUCCESS) return injected;
  const int id = g_fake->next_parser++;
  g_fake->parsers[id].params = *params;
  *parser = Handle<CUvideoparser>(id);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI FakeDestroyVideoParser(CUvideoparser parser) {
  FAKE_ENTER("cuvidDestroyVideoParser", ("parser=", Id(parser)));
  if (g_fake->parsers.erase(Id(parser)) == 0) g_fake->Violation("unknown parser destroyed");
  return injected;
}

// The fake picture: the packet's last 12 bytes (after the SPS FakeSampleBytes
// puts first, which the fake parser does not read).
bool ParseSample(const CUVIDSOURCEDATAPACKET& packet, FakeSample* sample) {
  if (packet.payload == nullptr || packet.payload_size < 12 ||
      std::memcmp(packet.payload + packet.payload_size - 12, "FAKE", 4) != 0) {
    return false;
  }
  const unsigned char* p = packet.payload + packet.payload_size - 12 + 4;
  sample->width = p[0] | p[1] << 8;
  sample->height = p[2] | p[3] << 8;
  sample->chroma_format = p[4];
  sample->bit_depth_minus8 = p[5];
  sample->pictures = p[6];
  sample->defer_display = p[7] != 0;
  return true;
}

// Calls a parser callback with the fake unlocked: the pool's callbacks may
// wait for another thread's Release, which calls into the fake.
template <typename F>
int Unlocked(std::unique_lock<std::recursive_mutex>& lock, F callback) {
  lock.unlock();
  const int r = callback();
  lock.lock();
  return r;
}

CUresult CUDAAPI FakeParseVideoData(CUvideoparser parser, CUVIDSOURCEDATAPACKET* packet) {
  FAKE_ENTER("cuvidParseVideoData", ("parser=", Id(parser), ", flags=", packet->flags));
  if (injected != CUDA_SUCCESS) return injected;
  auto found = g_fake->parsers.find(Id(parser));
  if (found == g_fake->parsers.end()) return kInvalidValue;
  const int id = Id(parser);
  const CUVIDPARSERPARAMS params = found->second.params;
  if (packet->flags & CUVID_PKT_ENDOFSTREAM) {
    std::vector<int> deferred;
    deferred.swap(g_fake->parsers[id].deferred);
    g_fake->parsers[id].have_format = false;  // a new stream starts with a new sequence
    for (int surface : deferred) {
      CUVIDPARSERDISPINFO info = {};
      info.picture_index = surface;
      info.progressive_frame = 1;
      if (Unlocked(lock, [&] { return params.pfnDisplayPicture(params.pUserData, &info); }) == 0) {
        break;
      }
    }
    return CUDA_SUCCESS;
  }
  FakeSample sample;
  if (!ParseSample(*packet, &sample)) return CUDA_SUCCESS;  // no picture found in the bytes
  FakeNvdec::Parser& state = g_fake->parsers[id];
  const bool changed = !state.have_format || state.format.width != sample.width ||
                       state.format.height != sample.height ||
                       state.format.chroma_format != sample.chroma_format ||
                       state.format.bit_depth_minus8 != sample.bit_depth_minus8;
  if (changed) {
    CUVIDEOFORMAT format = {};
    format.codec = cudaVideoCodec_HEVC;
    format.chroma_format = static_cast<cudaVideoChromaFormat>(sample.chroma_format);
    format.bit_depth_luma_minus8 = format.bit_depth_chroma_minus8 =
        static_cast<unsigned char>(sample.bit_depth_minus8);
    // HEVC codes in 8x8 units; the display area is the real size.
    format.coded_width = (sample.width + 7) / 8 * 8;
    format.coded_height = (sample.height + 7) / 8 * 8;
    format.display_area.right = sample.width;
    format.display_area.bottom = sample.height;
    format.progressive_sequence = 1;
    format.min_num_decode_surfaces = static_cast<unsigned char>(g_fake->min_decode_surfaces);
    format.video_signal_description.matrix_coefficients = 1;
    const int r = Unlocked(lock, [&] { return params.pfnSequenceCallback(params.pUserData, &format); });
    if (r == 0) return CUDA_SUCCESS;  // like NVIDIA's parser: the callback's failure is not returned
    // NVIDIA's parser: a return value above 1 is the decode surfaces it uses from now on.
    if (r > 1) g_fake->parsers[id].surfaces = static_cast<unsigned>(r);
    g_fake->parsers[id].have_format = true;
    g_fake->parsers[id].format = sample;
  }
  for (int i = 0; i < sample.pictures; ++i) {
    CUVIDPICPARAMS pic = {};
    FakeNvdec::Parser& p = g_fake->parsers[id];
    const unsigned surfaces = p.surfaces > 0 ? p.surfaces : params.ulMaxNumDecodeSurfaces;
    p.next_surface = p.next_surface % static_cast<int>(surfaces);
    pic.CurrPicIdx = p.next_surface;
    p.next_surface = (p.next_surface + 1) % static_cast<int>(surfaces);
    pic.intra_pic_flag = 1;
    if (Unlocked(lock, [&] { return params.pfnDecodePicture(params.pUserData, &pic); }) == 0) {
      return CUDA_SUCCESS;
    }
    if (sample.defer_display) {
      g_fake->parsers[id].deferred.push_back(pic.CurrPicIdx);
      continue;
    }
    CUVIDPARSERDISPINFO info = {};
    info.picture_index = pic.CurrPicIdx;
    info.progressive_frame = 1;
    if (Unlocked(lock, [&] { return params.pfnDisplayPicture(params.pUserData, &info); }) == 0) {
      return CUDA_SUCCESS;
    }
  }
  return CUDA_SUCCESS;
}

#undef FAKE_ENTER

}  // namespace

namespace {

// Bits of an RBSP, most significant first.
struct BitWriter {
  std::vector<uint8_t> bytes;
  int used = 8;  // bits used in the last byte
  void U(uint32_t value, int n) {
    for (int i = n - 1; i >= 0; --i) {
      if (used == 8) {
        bytes.push_back(0);
        used = 0;
      }
      bytes.back() |= static_cast<uint8_t>(((value >> i) & 1u) << (7 - used));
      ++used;
    }
  }
  void Ue(uint32_t value) {
    const uint32_t v = value + 1;
    int bits = 0;
    while ((v >> bits) > 1) ++bits;
    U(0, bits);
    U(v, bits + 1);
  }
};

// An HEVC SPS NAL unit (start code, header, emulation prevention) giving the
// coded size the fake parser reports: what a reader of the sample's SPS
// (codec::HevcCodedSize) finds before any decode.
std::vector<uint8_t> SpsNal(unsigned coded_width, unsigned coded_height, int chroma_format) {
  BitWriter w;
  w.U(0, 4);  // sps_video_parameter_set_id
  w.U(0, 3);  // sps_max_sub_layers_minus1
  w.U(1, 1);  // sps_temporal_id_nesting_flag
  w.U(1, 8);  // profile space, tier, profile idc (Main)
  w.U(0x60000000u, 32);  // compatibility flags
  w.U(0, 32);
  w.U(0, 16);
  w.U(93, 8);  // level 3.1
  w.Ue(0);     // sps_seq_parameter_set_id
  w.Ue(static_cast<uint32_t>(chroma_format));
  if (chroma_format == 3) w.U(0, 1);
  w.Ue(coded_width);
  w.Ue(coded_height);
  w.U(1, 1);  // rbsp stop bit (the rest of the SPS left out)
  std::vector<uint8_t> nal = {0, 0, 0, 1, 33 << 1, 1};
  int zeros = 0;
  for (uint8_t b : w.bytes) {
    if (zeros >= 2 && b <= 3) {
      nal.push_back(3);
      zeros = 0;
    }
    nal.push_back(b);
    zeros = b == 0 ? zeros + 1 : 0;
  }
  return nal;
}

}  // namespace

std::vector<uint8_t> FakeSampleBytes(const FakeSample& s) {
  std::vector<uint8_t> bytes = SpsNal((s.width + 7) / 8 * 8, (s.height + 7) / 8 * 8,
                                      s.chroma_format);
  const std::vector<uint8_t> picture = {'F', 'A', 'K', 'E',
          static_cast<uint8_t>(s.width & 0xFF), static_cast<uint8_t>(s.width >> 8),
          static_cast<uint8_t>(s.height & 0xFF), static_cast<uint8_t>(s.height >> 8),
          static_cast<uint8_t>(s.chroma_format), static_cast<uint8_t>(s.bit_depth_minus8),
          static_cast<uint8_t>(s.pictures), static_cast<uint8_t>(s.defer_display ? 1 : 0)};
  bytes.insert(bytes.end(), picture.begin(), picture.end());
  return bytes;
}

FakeNvdec::FakeNvdec() {
  g_fake = this;
  g_contexts_pushed = 0;
  cuda_.cuDriverGetVersion = FakeDriverGetVersion;
  cuda_.cuGetErrorName = FakeGetErrorName;
  cuda_.cuCtxPushCurrent = FakeCtxPush;
  cuda_.cuCtxPopCurrent = FakeCtxPop;
  cuda_.cuCtxSynchronize = FakeCtxSynchronize;
  cuda_.cuEventCreate = FakeEventCreate;
  cuda_.cuEventDestroy = FakeEventDestroy;
  cuda_.cuEventRecord = FakeEventRecord;
  cuda_.cuEventQuery = FakeEventQuery;
  cuda_.cuEventSynchronize = FakeEventSynchronize;
  cuda_.cuStreamSynchronize = FakeStreamSynchronize;
  nvdec_.cuvidGetDecoderCaps = FakeGetDecoderCaps;
  nvdec_.cuvidCreateDecoder = FakeCreateDecoder;
  nvdec_.cuvidDestroyDecoder = FakeDestroyDecoder;
  nvdec_.cuvidReconfigureDecoder = FakeReconfigureDecoder;
  nvdec_.cuvidDecodePicture = FakeDecodePicture;
  nvdec_.cuvidMapVideoFrame = FakeMapVideoFrame;
  nvdec_.cuvidGetDecodeStatus = FakeGetDecodeStatus;
  nvdec_.cuvidUnmapVideoFrame = FakeUnmapVideoFrame;
  nvdec_.cuvidCreateVideoParser = FakeCreateVideoParser;
  nvdec_.cuvidParseVideoData = FakeParseVideoData;
  nvdec_.cuvidDestroyVideoParser = FakeDestroyVideoParser;
}

FakeNvdec::~FakeNvdec() { g_fake = nullptr; }

bool FakeNvdec::ContextCurrent() const { return t_context_depth > 0; }

uint64_t FakeNvdec::Queue(CUstream stream) { return ++streams[stream].queued; }

void FakeNvdec::LaunchKernel(CUstream stream, unsigned long long luma) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  log.push_back(Str("kernel(stream=", Id(stream), ")"));
  auto it = frames.find(luma);
  if (it == frames.end()) {
    Violation("a kernel read a picture that is not mapped");
    return;
  }
  it->second.stream = stream;
  it->second.last_read = Queue(stream);
}

void FakeNvdec::CompleteStream(CUstream stream) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  streams[stream].completed = streams[stream].queued;
  progress.notify_all();
}

int FakeNvdec::waiting() const {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return waiters;
}

std::vector<std::string> FakeNvdec::call_names() const {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  std::vector<std::string> names;
  for (const std::string& call : log) {
    const std::string name = call.substr(0, call.find('('));
    if (name != "kernel" && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

std::map<std::string, int> FakeNvdec::live() const {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return {{"decoders", static_cast<int>(decoders.size())},
          {"parsers", static_cast<int>(parsers.size())},
          {"events", static_cast<int>(events.size())},
          {"mapped", static_cast<int>(frames.size())},
          {"contexts", g_contexts_pushed.load()}};
}

std::vector<std::string> FakeNvdec::problems() const {
  std::vector<std::string> out = violations();
  for (const auto& [what, count] : live()) {
    if (count != 0) out.push_back(what + ": " + std::to_string(count) + " left alive");
  }
  return out;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
