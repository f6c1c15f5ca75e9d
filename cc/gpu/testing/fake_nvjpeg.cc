#include "cc/gpu/testing/fake_nvjpeg.h"

#include <turbojpeg.h>

#include <algorithm>
#include <sstream>

#include "cc/codec/jpeg_markers.h"
#include "cc/codec/ycbcr.h"

namespace tfg {
namespace gpu {
namespace testing {

bool ReadJpegHeader(const unsigned char* data, size_t size, JpegHeader* header) {
  jpeg::FrameSegment frame;
  if (!jpeg::FindFrameHeader(data, size, &frame) || !frame.complete || frame.length < 6) {
    return false;
  }
  const unsigned char* p = frame.payload;
  header->sof = frame.marker;
  header->precision = p[0];
  header->height = (p[1] << 8) | p[2];
  header->width = (p[3] << 8) | p[4];
  header->components = p[5];
  if (header->components < 1 || header->components > 4 ||
      frame.length < 6 + 3 * static_cast<size_t>(header->components)) {
    return false;
  }
  for (int c = 0; c < header->components; ++c) {
    header->h[c] = p[7 + 3 * c] >> 4;
    header->v[c] = p[7 + 3 * c] & 15;
    if (header->h[c] < 1 || header->v[c] < 1) return false;
  }
  return header->width > 0 && header->height > 0;
}

namespace {

FakeNvjpeg*& Current() {
  static FakeNvjpeg* fake = nullptr;
  return fake;
}

template <typename... T>
std::string Str(const T&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// The component's plane size as nvJPEG reports it: ceil(size * factor / max).
void PlaneSize(const JpegHeader& h, int c, unsigned* w, unsigned* hh) {
  int hmax = 1, vmax = 1;
  for (int i = 0; i < h.components; ++i) {
    hmax = std::max(hmax, h.h[i]);
    vmax = std::max(vmax, h.v[i]);
  }
  *w = static_cast<unsigned>((h.width * h.h[c] + hmax - 1) / hmax);
  *hh = static_cast<unsigned>((h.height * h.v[c] + vmax - 1) / vmax);
}

bool HardwareTakes(const JpegHeader& h) {
  if (h.sof != 0xC0 && h.sof != 0xC1) return false;  // baseline / extended Huffman only
  if (h.precision != 8 || (h.components != 1 && h.components != 3)) return false;
  if (h.components == 3) {
    // 4:1:1 and 4:1:0: luma 4 times the chroma's width.
    if (h.h[0] == 4 * h.h[1]) return false;
  }
  return true;
}

int Status(FakeNvjpeg* f, const std::string& name, const std::string& args) {
  return f->Enter(name, args);
}

int CreateEx(int backend, void*, void*, unsigned flags, NvjpegHandle* handle) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegCreateEx", Str("backend=", backend, ", flags=", flags));
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  if (handle == nullptr) return NVJPEG_STATUS_INVALID_PARAMETER;
  if (backend == NVJPEG_BACKEND_HARDWARE && !f->hardware) return NVJPEG_STATUS_ARCH_MISMATCH;
  *handle = reinterpret_cast<NvjpegHandle>(f->next_object++);
  f->handles[*handle].backend = backend;
  return NVJPEG_STATUS_SUCCESS;
}

int Destroy(NvjpegHandle handle) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegDestroy", "");
  if (!f->handles.count(handle)) {
    f->Violation("nvjpegDestroy of an unknown handle");
    return NVJPEG_STATUS_INVALID_PARAMETER;
  }
  for (const auto& st : f->states) {
    if (st.second.handle == handle) f->Violation("a handle destroyed before its state");
  }
  for (const auto& p : f->parsed) {
    if (p.second.handle == handle) f->Violation("a handle destroyed before its jpeg stream");
  }
  f->handles.erase(handle);
  return s;
}

// nvjpeg*Create of an object of `handle`'s, kept in `objects` (states,
// parsed streams) until its destroy.
template <typename T, typename Objects>
int CreateObject(const char* call, NvjpegHandle handle, Objects FakeNvjpeg::*objects, T* out) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, call, "");
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  if (!f->handles.count(handle)) return NVJPEG_STATUS_INVALID_PARAMETER;
  *out = reinterpret_cast<T>(f->next_object++);
  (f->*objects)[*out].handle = handle;
  return NVJPEG_STATUS_SUCCESS;
}

// nvjpeg*Destroy of one: destroying what was never created (or twice) is a
// violation.
template <typename T, typename Objects>
int DestroyObject(const char* call, const char* kind, Objects FakeNvjpeg::*objects, T object) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  Status(f, call, "");
  if ((f->*objects).erase(object) == 0) f->Violation(Str(call, " of an unknown ", kind));
  return NVJPEG_STATUS_SUCCESS;
}

int StateCreate(NvjpegHandle handle, NvjpegState* state) {
  return CreateObject("nvjpegJpegStateCreate", handle, &FakeNvjpeg::states, state);
}

int StateDestroy(NvjpegState state) {
  return DestroyObject("nvjpegJpegStateDestroy", "state", &FakeNvjpeg::states, state);
}

int StreamCreate(NvjpegHandle handle, NvjpegStream* stream) {
  return CreateObject("nvjpegJpegStreamCreate", handle, &FakeNvjpeg::parsed, stream);
}

int StreamDestroy(NvjpegStream stream) {
  return DestroyObject("nvjpegJpegStreamDestroy", "stream", &FakeNvjpeg::parsed, stream);
}

int StreamParse(NvjpegHandle handle, const unsigned char* data, size_t length, int, int,
                NvjpegStream stream) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegJpegStreamParse", Str("bytes=", length));
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  auto it = f->parsed.find(stream);
  if (it == f->parsed.end()) return NVJPEG_STATUS_INVALID_PARAMETER;
  if (it->second.handle != handle) {
    f->Violation("a jpeg stream parsed with a handle other than its creator's");
    return NVJPEG_STATUS_INVALID_PARAMETER;
  }
  it->second.valid = false;
  JpegHeader h;
  if (data == nullptr || !ReadJpegHeader(data, length, &h)) return NVJPEG_STATUS_BAD_JPEG;
  if (h.sof >= 0xC9) return NVJPEG_STATUS_JPEG_NOT_SUPPORTED;  // arithmetic coding
  it->second.valid = true;
  it->second.header = h;
  return NVJPEG_STATUS_SUCCESS;
}

const FakeNvjpeg::Parsed* ParsedOf(FakeNvjpeg* f, NvjpegStream stream, const char* call) {
  auto it = f->parsed.find(stream);
  if (it == f->parsed.end() || !it->second.valid) {
    f->Violation(Str(call, " on a stream that holds no parsed JPEG"));
    return nullptr;
  }
  return &it->second;
}

// An nvjpegJpegStreamGet* call on a parsed stream: `read` fills the outputs
// from its header (a status: INVALID_PARAMETER for a bad argument); else the
// call's own status, failed or not (FailCall).
template <typename Read>
int StreamGet(const char* call, const std::string& args, NvjpegStream stream, Read read) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, call, args);
  const FakeNvjpeg::Parsed* p = ParsedOf(f, stream, call);
  if (p == nullptr) return NVJPEG_STATUS_INVALID_PARAMETER;
  const int read_status = read(p->header);
  return read_status != NVJPEG_STATUS_SUCCESS ? read_status : s;
}

int GetEncoding(NvjpegStream stream, int* encoding) {
  return StreamGet("nvjpegJpegStreamGetJpegEncoding", "", stream, [&](const JpegHeader& h) {
    *encoding = h.sof <= 0xC2 ? h.sof : NVJPEG_ENCODING_UNKNOWN;
    return NVJPEG_STATUS_SUCCESS;
  });
}

int GetFrameDimensions(NvjpegStream stream, unsigned* width, unsigned* height) {
  return StreamGet("nvjpegJpegStreamGetFrameDimensions", "", stream, [&](const JpegHeader& h) {
    *width = static_cast<unsigned>(h.width);
    *height = static_cast<unsigned>(h.height);
    return NVJPEG_STATUS_SUCCESS;
  });
}

int GetComponentsNum(NvjpegStream stream, unsigned* components) {
  return StreamGet("nvjpegJpegStreamGetComponentsNum", "", stream, [&](const JpegHeader& h) {
    *components = static_cast<unsigned>(h.components);
    return NVJPEG_STATUS_SUCCESS;
  });
}

int GetComponentDimensions(NvjpegStream stream, unsigned component, unsigned* width,
                           unsigned* height) {
  return StreamGet("nvjpegJpegStreamGetComponentDimensions", Str("component=", component), stream,
                   [&](const JpegHeader& h) {
                     if (component >= static_cast<unsigned>(h.components)) {
                       return NVJPEG_STATUS_INVALID_PARAMETER;
                     }
                     PlaneSize(h, static_cast<int>(component), width, height);
                     return NVJPEG_STATUS_SUCCESS;
                   });
}

int GetSamplePrecision(NvjpegStream stream, unsigned* precision) {
  return StreamGet("nvjpegJpegStreamGetSamplePrecision", "", stream, [&](const JpegHeader& h) {
    *precision = static_cast<unsigned>(h.precision);
    return NVJPEG_STATUS_SUCCESS;
  });
}

int BatchedSupported(NvjpegHandle handle, NvjpegStream stream, int* is_supported) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegDecodeBatchedSupported", "");
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  const FakeNvjpeg::Parsed* p = ParsedOf(f, stream, "nvjpegDecodeBatchedSupported");
  if (p == nullptr) return NVJPEG_STATUS_INVALID_PARAMETER;
  if (p->handle != handle) {
    f->Violation("nvjpegDecodeBatchedSupported with a stream of another handle");
    return NVJPEG_STATUS_INVALID_PARAMETER;
  }
  const bool hw = f->handles[handle].backend == NVJPEG_BACKEND_HARDWARE;
  *is_supported = hw && HardwareTakes(p->header) ? 0 : 1;  // 0: supported
  return NVJPEG_STATUS_SUCCESS;
}

FakeNvjpeg::State* StateOf(FakeNvjpeg* f, NvjpegHandle handle, NvjpegState state,
                           const char* call) {
  auto it = f->states.find(state);
  if (it == f->states.end()) {
    f->Violation(Str(call, " with an unknown state"));
    return nullptr;
  }
  if (it->second.handle != handle) {
    f->Violation(Str(call, " with a state of another handle"));
    return nullptr;
  }
  return &it->second;
}

int BatchedInitialize(NvjpegHandle handle, NvjpegState state, int batch_size, int threads,
                      int format) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegDecodeBatchedInitialize",
                 Str("batch=", batch_size, ", threads=", threads, ", format=", format));
  FakeNvjpeg::State* st = StateOf(f, handle, state, "nvjpegDecodeBatchedInitialize");
  if (st == nullptr) return NVJPEG_STATUS_INVALID_PARAMETER;
  st->batch_size = 0;
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  if (batch_size < 1 || threads < 1 || (format != NVJPEG_OUTPUT_YUV && format != NVJPEG_OUTPUT_Y))
    return NVJPEG_STATUS_INVALID_PARAMETER;
  st->batch_size = batch_size;
  return NVJPEG_STATUS_SUCCESS;
}

int DecodeBatched(NvjpegHandle handle, NvjpegState state, const unsigned char* const* data,
                  const size_t* lengths, NvjpegImage* destinations, CUstream stream) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  FakeNvjpeg::State* st = StateOf(f, handle, state, "nvjpegDecodeBatched");
  const int n = st ? st->batch_size : 0;
  int s = Status(f, "nvjpegDecodeBatched", Str("batch=", n, ", stream=", stream));
  if (st == nullptr) return NVJPEG_STATUS_INVALID_PARAMETER;
  if (n == 0) {
    f->Violation("nvjpegDecodeBatched without a (re)initialized batch");
    return NVJPEG_STATUS_INVALID_PARAMETER;
  }
  // A failed batch leaves the state to be initialized again.
  st->batch_size = 0;
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  if (f->handles[handle].backend != NVJPEG_BACKEND_HARDWARE) {
    f->Violation("nvjpegDecodeBatched on a non-hardware handle (this project batches on the "
                 "hardware only)");
  }
  for (int i = 0; i < n; ++i) {
    JpegHeader h;
    if (!ReadJpegHeader(data[i], lengths[i], &h)) return NVJPEG_STATUS_BAD_JPEG;
    if (!HardwareTakes(h)) return NVJPEG_STATUS_JPEG_NOT_SUPPORTED;
  }
  for (int i = 0; i < n; ++i) {
    JpegHeader h;
    ReadJpegHeader(data[i], lengths[i], &h);
    const int format = h.components == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_YUV;
    s = f->DecodeInto(data[i], lengths[i], format, destinations[i], stream);
    if (s != NVJPEG_STATUS_SUCCESS) return s;
  }
  st->batch_size = n;
  return NVJPEG_STATUS_SUCCESS;
}

int Decode(NvjpegHandle handle, NvjpegState state, const unsigned char* data, size_t length,
           int format, NvjpegImage* destination, CUstream stream) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  int s = Status(f, "nvjpegDecode", Str("bytes=", length, ", format=", format, ", stream=",
                                        stream));
  if (StateOf(f, handle, state, "nvjpegDecode") == nullptr) {
    return NVJPEG_STATUS_INVALID_PARAMETER;
  }
  if (s != NVJPEG_STATUS_SUCCESS) return s;
  JpegHeader h;
  if (!ReadJpegHeader(data, length, &h)) return NVJPEG_STATUS_BAD_JPEG;
  if (h.sof >= 0xC9 || h.precision != 8 || h.components == 4) {
    return NVJPEG_STATUS_JPEG_NOT_SUPPORTED;
  }
  return f->DecodeInto(data, length, format, *destination, stream);
}

const char* ErrorName(CUresult, const char** name) {
  *name = "CUDA_ERROR_FAKE";
  return nullptr;
}

CUresult CUDAAPI GetErrorName(CUresult r, const char** name) {
  ErrorName(r, name);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI StreamGetCtx(CUstream stream, CUcontext* context) {
  if (stream != kJpegStream && stream != kOtherJpegStream) return static_cast<CUresult>(1);
  *context = kJpegContext;
  return CUDA_SUCCESS;
}

thread_local int pushed = 0;
CUresult CUDAAPI CtxPush(CUcontext) {
  ++pushed;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI CtxPop(CUcontext* context) {
  if (pushed == 0) Current()->Violation("cuCtxPopCurrent without a push");
  --pushed;
  if (context != nullptr) *context = kJpegContext;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI ModuleLoadData(CUmodule* module, const void* image) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  f->log.push_back("cuModuleLoadData");
  if (image != kFakeJpegFatbin) return static_cast<CUresult>(1);
  *module = reinterpret_cast<CUmodule>(0xD7);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI ModuleGetFunction(CUfunction* function, CUmodule, const char* name) {
  FakeNvjpeg* f = Current();
  std::lock_guard<std::recursive_mutex> lock(f->mutex);
  for (size_t i = 0; i < f->kernel_names.size(); ++i) {
    if (f->kernel_names[i] == name) {
      *function = reinterpret_cast<CUfunction>(0xF0 + i);
      return CUDA_SUCCESS;
    }
  }
  return static_cast<CUresult>(500);
}

CUresult CUDAAPI LaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, unsigned, CUstream stream,
                              void** args, void**) {
  FakeNvjpeg* f = Current();
  FakeNvjpeg::Kernel kernel;
  {
    std::lock_guard<std::recursive_mutex> lock(f->mutex);
    const size_t i = reinterpret_cast<size_t>(function) - 0xF0;
    if (i >= f->kernel_names.size()) return static_cast<CUresult>(1);
    if (pushed == 0) f->Violation("a kernel launched without a context pushed");
    const int s = f->Enter("cuLaunchKernel", f->kernel_names[i]);
    if (s != 0) return static_cast<CUresult>(s);
    if (f->kernel_names[i] != "tfg_color_levels") {  // it reads only its output slot
      const auto* picture = static_cast<const codec::YcbcrPicture*>(args[0]);
      f->KernelRead(stream, picture->y);
    }
    kernel = f->kernels[f->kernel_names[i]];
  }
  if (kernel) kernel(stream, args, LaunchDims{gx, gy, gz, bx, by, bz});
  return CUDA_SUCCESS;
}

}  // namespace

FakeNvjpeg::FakeNvjpeg(std::map<std::string, Kernel> k) : kernels(std::move(k)) {
  for (const auto& kernel : kernels) kernel_names.push_back(kernel.first);
  Current() = this;
  api_.nvjpegCreateEx = CreateEx;
  api_.nvjpegDestroy = Destroy;
  api_.nvjpegJpegStateCreate = StateCreate;
  api_.nvjpegJpegStateDestroy = StateDestroy;
  api_.nvjpegJpegStreamCreate = StreamCreate;
  api_.nvjpegJpegStreamDestroy = StreamDestroy;
  api_.nvjpegJpegStreamParse = StreamParse;
  api_.nvjpegJpegStreamGetJpegEncoding = GetEncoding;
  api_.nvjpegJpegStreamGetFrameDimensions = GetFrameDimensions;
  api_.nvjpegJpegStreamGetComponentsNum = GetComponentsNum;
  api_.nvjpegJpegStreamGetComponentDimensions = GetComponentDimensions;
  api_.nvjpegJpegStreamGetSamplePrecision = GetSamplePrecision;
  api_.nvjpegDecodeBatchedSupported = BatchedSupported;
  api_.nvjpegDecodeBatchedInitialize = BatchedInitialize;
  api_.nvjpegDecodeBatched = DecodeBatched;
  api_.nvjpegDecode = Decode;
  cuda_.cuGetErrorName = GetErrorName;
  cuda_.cuStreamGetCtx = StreamGetCtx;
  cuda_.cuCtxPushCurrent = CtxPush;
  cuda_.cuCtxPopCurrent = CtxPop;
  cuda_.cuModuleLoadData = ModuleLoadData;
  cuda_.cuModuleGetFunction = ModuleGetFunction;
  cuda_.cuLaunchKernel = LaunchKernel;
}

FakeNvjpeg::~FakeNvjpeg() { Current() = nullptr; }

int FakeNvjpeg::DecodeInto(const unsigned char* data, size_t size, int format,
                           const NvjpegImage& image, CUstream stream) {
  JpegHeader h;
  if (!ReadJpegHeader(data, size, &h)) return NVJPEG_STATUS_BAD_JPEG;
  const int planes = format == NVJPEG_OUTPUT_Y || h.components == 1 ? 1 : 3;
  unsigned char* dst[3] = {nullptr, nullptr, nullptr};
  int strides[3] = {0, 0, 0};
  for (int c = 0; c < planes; ++c) {
    unsigned w = 0, hh = 0;
    PlaneSize(h, c, &w, &hh);
    if (image.channel[c] == nullptr || image.pitch[c] < w) {
      Violation(Str("a destination plane ", c, " null or with pitch ", image.pitch[c],
                    " < width ", w));
      return NVJPEG_STATUS_INVALID_PARAMETER;
    }
    dst[c] = image.channel[c];
    strides[c] = static_cast<int>(image.pitch[c]);
  }
  tjhandle tj = tjInitDecompress();
  // TurboJPEG writes planes padded to whole chroma samples (a 157-wide 4:2:0
  // luma plane is 158 wide), nvJPEG exactly the planes' sizes: decode into
  // padded buffers, copy the planes out. Accurate integer IDCT: the engines
  // compute theirs their own way; comparisons allow for it (2 levels).
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  int r = tjDecompressHeader3(tj, data, static_cast<unsigned long>(size), &width, &height,
                              &subsamp, &colorspace);
  std::vector<std::vector<unsigned char>> padded(3);
  unsigned char* tmp[3] = {nullptr, nullptr, nullptr};
  int tmp_strides[3] = {0, 0, 0};
  if (r == 0) {
    for (int c = 0; c < (subsamp == TJSAMP_GRAY ? 1 : 3); ++c) {
      tmp_strides[c] = tjPlaneWidth(c, width, subsamp);
      padded[c].resize(static_cast<size_t>(tmp_strides[c]) * tjPlaneHeight(c, height, subsamp));
      tmp[c] = padded[c].data();
    }
    r = tjDecompressToYUVPlanes(tj, data, static_cast<unsigned long>(size), tmp, width,
                                tmp_strides, height, TJFLAG_ACCURATEDCT);
  }
  // TurboJPEG's warnings (e.g. premature end of data) are errors here, as nvJPEG
  // reports a truncated stream.
  tjDestroy(tj);
  if (r != 0 || (planes == 3) != (subsamp != TJSAMP_GRAY)) return NVJPEG_STATUS_BAD_JPEG;
  for (int c = 0; c < planes; ++c) {
    unsigned w = 0, hh = 0;
    PlaneSize(h, c, &w, &hh);
    for (unsigned y = 0; y < hh; ++y) {
      std::copy_n(padded[c].data() + static_cast<size_t>(y) * tmp_strides[c], w,
                  dst[c] + static_cast<size_t>(y) * strides[c]);
    }
  }
  std::lock_guard<std::recursive_mutex> lock(mutex);
  decoded[dst[0]].stream = stream;
  return NVJPEG_STATUS_SUCCESS;
}

void FakeNvjpeg::KernelRead(CUstream stream, const void* luma) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  log.push_back(Str("kernel(stream=", stream, ")"));
  auto it = decoded.find(luma);
  if (it == decoded.end()) {
    Violation("a kernel read planes no decode wrote");
  } else if (it->second.stream != stream) {
    Violation("a kernel read planes decoded on another stream (no ordering between them)");
  }
}

std::vector<std::string> FakeNvjpeg::problems() const {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  std::vector<std::string> all = broken;
  if (!handles.empty()) all.push_back(Str("handles: ", handles.size(), " left alive"));
  if (!states.empty()) all.push_back(Str("states: ", states.size(), " left alive"));
  if (!parsed.empty()) all.push_back(Str("jpeg streams: ", parsed.size(), " left alive"));
  return all;
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
