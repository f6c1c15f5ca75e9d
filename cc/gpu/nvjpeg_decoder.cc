#include "cc/gpu/nvjpeg_decoder.h"

#include <cstdio>
#include <utility>

namespace tfg {
namespace gpu {

const char* JpegRouteName(JpegRoute route) {
  switch (route) {
    case JpegRoute::kHardware: return "hardware";
    case JpegRoute::kCuda: return "cuda";
    case JpegRoute::kCpu: return "cpu";
  }
  return "unknown";
}

namespace {

std::string CallError(const char* call, int status) {
  return std::string(call) + " failed with " + NvjpegStatusName(status);
}

// log2 of how much a plane of `plane` samples is subsampled against `full`:
// the smallest s with ceil(full / 2^s) == plane.
int ShiftOf(unsigned full, unsigned plane) {
  for (int s = 0; s <= 3; ++s) {
    if (((full + (1u << s) - 1) >> s) == plane) return s;
  }
  return -1;
}

// nvJPEG's description of the planes a picture is decoded into (Y alone for gray).
NvjpegImage ImageOf(const codec::YcbcrPicture& p) {
  NvjpegImage image = {};
  image.channel[0] = const_cast<unsigned char*>(p.y);
  image.pitch[0] = static_cast<size_t>(p.y_stride);
  if (p.cb != nullptr) {
    image.channel[1] = const_cast<unsigned char*>(p.cb);
    image.pitch[1] = static_cast<size_t>(p.cb_stride);
    image.channel[2] = const_cast<unsigned char*>(p.cr);
    image.pitch[2] = static_cast<size_t>(p.cr_stride);
  }
  return image;
}

}  // namespace

NvjpegDecoder::NvjpegDecoder(const NvjpegApi& api, std::function<void(const std::string&)> log)
    : api_(api), log_(std::move(log)) {
  if (!log_) {
    log_ = [](const std::string& line) { std::fprintf(stderr, "tf_gulp: %s\n", line.c_str()); };
  }
}

NvjpegDecoder::~NvjpegDecoder() {
  if (parsed_ != nullptr) api_.nvjpegJpegStreamDestroy(parsed_);
  if (hw_state_ != nullptr) api_.nvjpegJpegStateDestroy(hw_state_);
  if (cuda_state_ != nullptr) api_.nvjpegJpegStateDestroy(cuda_state_);
  if (hw_handle_ != nullptr) api_.nvjpegDestroy(hw_handle_);
  if (cuda_handle_ != nullptr) api_.nvjpegDestroy(cuda_handle_);
}

void NvjpegDecoder::Note(const std::string& reason) {
  std::lock_guard<std::mutex> lock(log_mu_);
  if (!noted_.insert(reason).second) return;
  reasons_.push_back(reason);
  log_(reason);
}

std::vector<std::string> NvjpegDecoder::reasons() const {
  std::lock_guard<std::mutex> lock(log_mu_);
  return reasons_;
}

Status NvjpegDecoder::Init() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cuda_handle_ != nullptr) return Status::Ok();
  int s = api_.nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &cuda_handle_);
  if (s != NVJPEG_STATUS_SUCCESS) {
    cuda_handle_ = nullptr;
    return UnavailableError("nvJPEG unavailable, decoding JPEG on the CPU: ",
                            CallError("nvjpegCreateEx(default backend)", s));
  }
  s = api_.nvjpegJpegStateCreate(cuda_handle_, &cuda_state_);
  if (s != NVJPEG_STATUS_SUCCESS) {
    cuda_state_ = nullptr;
    return UnavailableError("nvJPEG unavailable, decoding JPEG on the CPU: ",
                            CallError("nvjpegJpegStateCreate", s));
  }
  s = api_.nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &hw_handle_);
  if (s == NVJPEG_STATUS_SUCCESS) {
    s = api_.nvjpegJpegStateCreate(hw_handle_, &hw_state_);
    if (s != NVJPEG_STATUS_SUCCESS) {
      hw_state_ = nullptr;
      api_.nvjpegDestroy(hw_handle_);
      hw_handle_ = nullptr;
    }
  } else {
    hw_handle_ = nullptr;
  }
  if (hw_handle_ == nullptr) {
    Note("nvJPEG: no hardware JPEG decoder on this GPU (" + std::string(NvjpegStatusName(s)) +
         "): every JPEG goes to nvJPEG's CUDA backend");
  }
  // The stream parser belongs to the handle whose support it is asked about.
  s = api_.nvjpegJpegStreamCreate(hw_handle_ ? hw_handle_ : cuda_handle_, &parsed_);
  if (s != NVJPEG_STATUS_SUCCESS) {
    parsed_ = nullptr;
    return UnavailableError("nvJPEG unavailable, decoding JPEG on the CPU: ",
                            CallError("nvjpegJpegStreamCreate", s));
  }
  return Status::Ok();
}

Status NvjpegDecoder::Inspect(const JpegInput& in, DecodedJpeg* out,
                              std::vector<unsigned>* widths, std::vector<unsigned>* heights) {
  NvjpegHandle handle = hw_handle_ ? hw_handle_ : cuda_handle_;
  int s = api_.nvjpegJpegStreamParse(handle, in.data, in.size, 0, 0, parsed_);
  if (s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED) {
    Note("nvJPEG: a JPEG encoding it does not decode (e.g. arithmetic coding) goes to the CPU");
    out->route = JpegRoute::kCpu;
    return OutOfRangeError(in.what, ": nvJPEG does not decode this JPEG's encoding");
  }
  if (s != NVJPEG_STATUS_SUCCESS) {
    return DataLossError(in.what, ": not a readable JPEG (", CallError("nvjpegJpegStreamParse", s),
                         ")");
  }
  unsigned components = 0, precision = 0, width = 0, height = 0;
  int encoding = 0;
  s = api_.nvjpegJpegStreamGetComponentsNum(parsed_, &components);
  if (s == NVJPEG_STATUS_SUCCESS) s = api_.nvjpegJpegStreamGetSamplePrecision(parsed_, &precision);
  if (s == NVJPEG_STATUS_SUCCESS) s = api_.nvjpegJpegStreamGetJpegEncoding(parsed_, &encoding);
  if (s == NVJPEG_STATUS_SUCCESS) {
    s = api_.nvjpegJpegStreamGetFrameDimensions(parsed_, &width, &height);
  }
  if (s != NVJPEG_STATUS_SUCCESS) {
    return InternalError(in.what, ": ", CallError("reading nvJPEG's parsed header", s));
  }
  out->width = static_cast<int>(width);
  out->height = static_cast<int>(height);
  out->route = JpegRoute::kCpu;
  if (components == 4) {
    Note("nvJPEG: CMYK/YCCK (4-component) JPEGs go to the CPU");
    return OutOfRangeError(in.what, ": a 4-component (CMYK/YCCK) JPEG");
  }
  if (components != 1 && components != 3) {
    Note("nvJPEG: JPEGs of 2 components go to the CPU");
    return OutOfRangeError(in.what, ": a JPEG of ", components, " components");
  }
  if (precision != 8) {
    Note("nvJPEG: JPEGs of other than 8 bits per sample (e.g. 12-bit) go to the CPU");
    return OutOfRangeError(in.what, ": a ", precision, "-bit JPEG");
  }
  widths->assign(components, 0);
  heights->assign(components, 0);
  for (unsigned c = 0; c < components; ++c) {
    s = api_.nvjpegJpegStreamGetComponentDimensions(parsed_, c, &(*widths)[c], &(*heights)[c]);
    if (s != NVJPEG_STATUS_SUCCESS) {
      return InternalError(in.what, ": ", CallError("nvjpegJpegStreamGetComponentDimensions", s));
    }
  }
  codec::YcbcrPicture& p = out->planes;
  p.width = out->width;
  p.height = out->height;
  p.matrix = codec::MakeYcbcrMatrix(codec::YcbcrStandard::kBt601, true);  // JFIF
  if (components == 3) {
    p.shift_x = ShiftOf(width, (*widths)[1]);
    p.shift_y = ShiftOf(height, (*heights)[1]);
    if (p.shift_x < 0 || p.shift_y < 0 || (*widths)[2] != (*widths)[1] ||
        (*heights)[2] != (*heights)[1]) {
      Note("nvJPEG: JPEGs whose chroma planes are not a 1/2^n subsampling go to the CPU");
      return OutOfRangeError(in.what, ": chroma planes of ", (*widths)[1], "x", (*heights)[1],
                             " and ", (*widths)[2], "x", (*heights)[2], " for a ", width, "x",
                             height, " picture");
    }
  }
  out->route = JpegRoute::kCuda;
  if (hw_handle_ != nullptr) {
    int unsupported = 1;
    s = api_.nvjpegDecodeBatchedSupported(hw_handle_, parsed_, &unsupported);
    if (s == NVJPEG_STATUS_SUCCESS && unsupported == 0) {
      out->route = JpegRoute::kHardware;
    } else {
      Note(encoding == NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN
               ? "nvJPEG: progressive JPEGs go to nvJPEG's CUDA backend (the hardware decodes "
                 "baseline only)"
               : "nvJPEG: JPEGs the hardware decoder refuses (e.g. 4:1:1, 4:1:0 chroma) go to "
                 "nvJPEG's CUDA backend");
    }
  }
  return Status::Ok();
}

Status NvjpegDecoder::DecodeOnCuda(const JpegInput& in, DecodedJpeg* out, CUstream stream) {
  const codec::YcbcrPicture& p = out->planes;
  NvjpegImage image = ImageOf(p);
  const int format = p.cb != nullptr ? NVJPEG_OUTPUT_YUV : NVJPEG_OUTPUT_Y;
  const int s = api_.nvjpegDecode(cuda_handle_, cuda_state_, in.data, in.size, format, &image,
                                  stream);
  if (s == NVJPEG_STATUS_SUCCESS) return Status::Ok();
  if (s == NVJPEG_STATUS_BAD_JPEG || s == NVJPEG_STATUS_INCOMPLETE_BITSTREAM) {
    return DataLossError(in.what, ": a damaged JPEG (", CallError("nvjpegDecode", s), ")");
  }
  if (s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED) {
    out->route = JpegRoute::kCpu;
    return OutOfRangeError(in.what, ": ", CallError("nvjpegDecode", s));
  }
  return InternalError(in.what, ": ", CallError("nvjpegDecode", s));
}

void NvjpegDecoder::DecodeBatch(const std::vector<JpegInput>& inputs, CUstream stream,
                                const PlaneAllocator& allocate, std::vector<DecodedJpeg>* out,
                                std::vector<Status>* statuses) {
  std::lock_guard<std::mutex> lock(mu_);
  out->assign(inputs.size(), DecodedJpeg());
  statuses->assign(inputs.size(), Status::Ok());
  if (cuda_handle_ == nullptr) {
    for (auto& s : *statuses) s = InternalError("NvjpegDecoder used before Init");
    return;
  }
  std::vector<size_t> hardware;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<unsigned> widths, heights;
    DecodedJpeg& d = (*out)[i];
    Status& st = (*statuses)[i];
    st = Inspect(inputs[i], &d, &widths, &heights);
    if (!st.ok()) continue;
    size_t bytes = 0;
    for (size_t c = 0; c < widths.size(); ++c) bytes += size_t{widths[c]} * heights[c];
    CUdeviceptr base = 0;
    st = allocate(bytes, &base);
    if (!st.ok()) continue;
    codec::YcbcrPicture& p = d.planes;
    p.y = reinterpret_cast<const uint8_t*>(base);
    p.y_stride = widths[0];
    if (widths.size() == 3) {
      p.cb = p.y + size_t{widths[0]} * heights[0];
      p.cr = p.cb + size_t{widths[1]} * heights[1];
      p.cb_stride = widths[1];
      p.cr_stride = widths[2];
      p.chroma_step = 1;
      p.chroma_width = static_cast<int>(widths[1]);
      p.chroma_height = static_cast<int>(heights[1]);
    }
    if (d.route == JpegRoute::kHardware) {
      hardware.push_back(i);
    } else {
      st = DecodeOnCuda(inputs[i], &d, stream);
    }
  }
  if (hardware.empty()) return;
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  std::vector<NvjpegImage> images;
  for (size_t i : hardware) {
    NvjpegImage image = ImageOf((*out)[i].planes);
    data.push_back(inputs[i].data);
    lengths.push_back(inputs[i].size);
    images.push_back(image);
  }
  const int n = static_cast<int>(hardware.size());
  int s = NVJPEG_STATUS_SUCCESS;
  if (hw_batch_size_ != n) {
    // YUV for gray pictures too: nvJPEG then writes the luma plane only.
    s = api_.nvjpegDecodeBatchedInitialize(hw_handle_, hw_state_, n, 1, NVJPEG_OUTPUT_YUV);
    hw_batch_size_ = s == NVJPEG_STATUS_SUCCESS ? n : 0;
  }
  if (s == NVJPEG_STATUS_SUCCESS) {
    s = api_.nvjpegDecodeBatched(hw_handle_, hw_state_, data.data(), lengths.data(),
                                 images.data(), stream);
  }
  if (s == NVJPEG_STATUS_SUCCESS) return;
  // A failed batch leaves the state to be initialized again (nvJPEG's rule);
  // its pictures are decoded one by one so that a damaged one is named.
  hw_batch_size_ = 0;
  Note(std::string("nvJPEG: a hardware batch failed (") + NvjpegStatusName(s) +
       "); its pictures were decoded one by one on nvJPEG's CUDA backend");
  for (size_t i : hardware) {
    (*out)[i].route = JpegRoute::kCuda;
    (*statuses)[i] = DecodeOnCuda(inputs[i], &(*out)[i], stream);
  }
}

}  // namespace gpu
}  // namespace tfg
