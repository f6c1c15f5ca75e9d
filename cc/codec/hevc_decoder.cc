#include "cc/codec/hevc_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

namespace tfg {
namespace codec {
namespace {

std::string AvError(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof(buf));
  return buf;
}

// Y'CbCr -> R'G'B' coefficients for one matrix and range.
struct ColorMatrix {
  float y_offset, y_scale, c_scale;
  float r_cr, g_cb, g_cr, b_cb;
};

ColorMatrix MatrixFor(const AVFrame* f) {
  double kr = 0.299, kb = 0.114;  // BT.601 (also for unspecified)
  if (f->colorspace == AVCOL_SPC_BT709) {
    kr = 0.2126;
    kb = 0.0722;
  } else if (f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL) {
    kr = 0.2627;
    kb = 0.0593;
  }
  const double kg = 1.0 - kr - kb;
  const bool full = f->color_range == AVCOL_RANGE_JPEG ||
                    f->format == AV_PIX_FMT_YUVJ420P || f->format == AV_PIX_FMT_YUVJ422P ||
                    f->format == AV_PIX_FMT_YUVJ444P;
  ColorMatrix m;
  m.y_offset = full ? 0.f : 16.f;
  m.y_scale = full ? 1.f : 255.f / 219.f;
  m.c_scale = full ? 1.f : 255.f / 224.f;
  m.r_cr = static_cast<float>(2 * (1 - kr));
  m.b_cb = static_cast<float>(2 * (1 - kb));
  m.g_cb = static_cast<float>(2 * kb * (1 - kb) / kg);
  m.g_cr = static_cast<float>(2 * kr * (1 - kr) / kg);
  return m;
}

inline uint8_t Clamp255(float v) {
  v = std::floor(v + 0.5f);
  return static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
}

// Where output coordinate i (luma grid) samples the chroma plane of `n`
// samples subsampled by 2^shift: bilinear taps and weight.
struct Tap {
  int i0, i1;
  float a;
};

std::vector<Tap> Taps(int begin, int count, int shift, int n, bool bilinear) {
  std::vector<Tap> taps(count);
  for (int k = 0; k < count; ++k) {
    const int i = begin + k;
    if (!bilinear || shift == 0) {
      const int c = std::min(i >> shift, n - 1);
      taps[k] = {c, c, 0.f};
      continue;
    }
    const double pos = (i + 0.5) / (1 << shift) - 0.5;
    const double f = std::floor(pos);
    const int i0 = static_cast<int>(f);
    taps[k] = {std::clamp(i0, 0, n - 1), std::clamp(i0 + 1, 0, n - 1),
               static_cast<float>(pos - f)};
  }
  return taps;
}

}  // namespace

Status ParseChromaUpsampling(const std::string& name, ChromaUpsampling* mode) {
  if (name == "bilinear") {
    *mode = ChromaUpsampling::kBilinear;
  } else if (name == "nearest") {
    *mode = ChromaUpsampling::kNearest;
  } else {
    return InvalidArgumentError("chroma_upsampling must be \"bilinear\" or \"nearest\", got \"",
                                name, "\"");
  }
  return Status::Ok();
}

struct HevcDecoder::Impl {
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  std::vector<uint8_t> padded;
  bool have_frame = false;

  ~Impl() {
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&ctx);
  }
};

HevcDecoder::HevcDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HevcDecoder::~HevcDecoder() = default;

Status HevcDecoder::Create(int threads, std::unique_ptr<HevcDecoder>* decoder) {
  av_log_set_level(AV_LOG_FATAL);  // errors come back as statuses, not stderr noise
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
  if (codec == nullptr) return InternalError("libavcodec has no HEVC decoder");
  auto impl = std::make_unique<Impl>();
  impl->ctx = avcodec_alloc_context3(codec);
  impl->frame = av_frame_alloc();
  impl->packet = av_packet_alloc();
  if (!impl->ctx || !impl->frame || !impl->packet) return InternalError("libavcodec: out of memory");
  impl->ctx->thread_count = std::max(0, threads);
  impl->ctx->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  impl->ctx->err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER;
  const int err = avcodec_open2(impl->ctx, codec, nullptr);
  if (err < 0) return InternalError("libavcodec: cannot open the HEVC decoder: ", AvError(err));
  decoder->reset(new HevcDecoder(std::move(impl)));
  return Status::Ok();
}

Status HevcDecoder::ForThisThread(int threads, HevcDecoder** decoder) {
  thread_local std::unique_ptr<HevcDecoder> cached;
  thread_local int cached_threads = -1;
  if (!cached || cached_threads != threads) {
    cached.reset();
    TFG_RETURN_IF_ERROR(Create(threads, &cached));
    cached_threads = threads;
  }
  *decoder = cached.get();
  return Status::Ok();
}

Status HevcDecoder::Decode(const uint8_t* annex_b, size_t size, const std::string& what) {
  Impl& d = *impl_;
  d.have_frame = false;
  if (size > static_cast<size_t>(INT32_MAX) - AV_INPUT_BUFFER_PADDING_SIZE) {
    return InvalidArgumentError(what, ": sample too large (", size, " bytes)");
  }
  d.padded.assign(annex_b, annex_b + size);
  d.padded.resize(size + AV_INPUT_BUFFER_PADDING_SIZE, 0);
  av_packet_unref(d.packet);
  d.packet->data = d.padded.data();
  d.packet->size = static_cast<int>(size);
  d.packet->flags = AV_PKT_FLAG_KEY;

  Status status;
  int err = avcodec_send_packet(d.ctx, d.packet);
  if (err < 0) {
    status = DataLossError(what, ": not a decodable HEVC picture (", AvError(err), ")");
  }
  if (status.ok()) {
    err = avcodec_send_packet(d.ctx, nullptr);  // drain: this is the only picture
    if (err < 0 && err != AVERROR_EOF) {
      status = DataLossError(what, ": HEVC decoding failed (", AvError(err), ")");
    }
  }
  int frames = 0;
  while (status.ok()) {
    av_frame_unref(d.frame);
    err = avcodec_receive_frame(d.ctx, d.frame);
    if (err == AVERROR_EOF || err == AVERROR(EAGAIN)) break;
    if (err < 0) {
      status = DataLossError(what, ": HEVC decoding failed (", AvError(err), ")");
      break;
    }
    ++frames;
    if (d.frame->decode_error_flags != 0 || (d.frame->flags & AV_FRAME_FLAG_CORRUPT)) {
      status = DataLossError(what, ": the HEVC picture is damaged (truncated bitstream?)");
    }
    break;  // keep the first picture
  }
  // Ready for the next picture whatever happened (also after a drain).
  avcodec_flush_buffers(d.ctx);
  if (!status.ok()) return status;
  if (frames == 0) {
    return DataLossError(what, ": no picture decoded (not HEVC, or a truncated bitstream)");
  }
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(d.frame->format));
  const bool planar8 = desc != nullptr && (desc->flags & AV_PIX_FMT_FLAG_PLANAR) &&
                       !(desc->flags & AV_PIX_FMT_FLAG_RGB) && desc->comp[0].depth == 8 &&
                       (desc->nb_components == 1 || desc->nb_components == 3);
  if (!planar8) {
    return InvalidArgumentError(what, ": unsupported decoded pixel format ",
                                desc ? desc->name : "?", " (8-bit planar Y'CbCr or gray only)");
  }
  d.have_frame = true;
  return Status::Ok();
}

int HevcDecoder::width() const { return impl_->have_frame ? impl_->frame->width : 0; }
int HevcDecoder::height() const { return impl_->have_frame ? impl_->frame->height : 0; }

Status HevcDecoder::ToRgb(int x, int y, int w, int h, ChromaUpsampling mode,
                          uint8_t* dst) const {
  const Impl& d = *impl_;
  if (!d.have_frame) return InternalError("HevcDecoder::ToRgb without a decoded picture");
  const AVFrame* f = d.frame;
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || x > f->width - w || y > f->height - h) {
    return InvalidArgumentError("region ", w, "x", h, "+", x, "+", y, " is outside the ",
                                f->width, "x", f->height, " picture");
  }
  const ColorMatrix m = MatrixFor(f);
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
  const uint8_t* Y = f->data[0];
  const int ys = f->linesize[0];
  if (desc->nb_components == 1) {
    for (int r = 0; r < h; ++r) {
      const uint8_t* row = Y + static_cast<ptrdiff_t>(y + r) * ys + x;
      uint8_t* out = dst + static_cast<size_t>(r) * w * 3;
      for (int c = 0; c < w; ++c) {
        const uint8_t v = Clamp255((row[c] - m.y_offset) * m.y_scale);
        out[3 * c] = out[3 * c + 1] = out[3 * c + 2] = v;
      }
    }
    return Status::Ok();
  }
  const int sx = desc->log2_chroma_w, sy = desc->log2_chroma_h;
  const int cw = AV_CEIL_RSHIFT(f->width, sx), ch = AV_CEIL_RSHIFT(f->height, sy);
  const bool bilinear = mode == ChromaUpsampling::kBilinear;
  const std::vector<Tap> cols = Taps(x, w, sx, cw, bilinear);
  const std::vector<Tap> rows = Taps(y, h, sy, ch, bilinear);
  const uint8_t* Cb = f->data[1];
  const uint8_t* Cr = f->data[2];
  const int cs_b = f->linesize[1], cs_r = f->linesize[2];
  for (int r = 0; r < h; ++r) {
    const uint8_t* yrow = Y + static_cast<ptrdiff_t>(y + r) * ys + x;
    const Tap& tr = rows[r];
    const uint8_t* b0 = Cb + static_cast<ptrdiff_t>(tr.i0) * cs_b;
    const uint8_t* b1 = Cb + static_cast<ptrdiff_t>(tr.i1) * cs_b;
    const uint8_t* r0 = Cr + static_cast<ptrdiff_t>(tr.i0) * cs_r;
    const uint8_t* r1 = Cr + static_cast<ptrdiff_t>(tr.i1) * cs_r;
    uint8_t* out = dst + static_cast<size_t>(r) * w * 3;
    const float ay = tr.a;
    for (int c = 0; c < w; ++c) {
      const Tap& tc = cols[c];
      const float ax = tc.a;
      const float cb = (1 - ay) * ((1 - ax) * b0[tc.i0] + ax * b0[tc.i1]) +
                       ay * ((1 - ax) * b1[tc.i0] + ax * b1[tc.i1]);
      const float cr = (1 - ay) * ((1 - ax) * r0[tc.i0] + ax * r0[tc.i1]) +
                       ay * ((1 - ax) * r1[tc.i0] + ax * r1[tc.i1]);
      const float yy = (yrow[c] - m.y_offset) * m.y_scale;
      const float u = (cb - 128.f) * m.c_scale, v = (cr - 128.f) * m.c_scale;
      out[3 * c] = Clamp255(yy + m.r_cr * v);
      out[3 * c + 1] = Clamp255(yy - m.g_cb * u - m.g_cr * v);
      out[3 * c + 2] = Clamp255(yy + m.b_cb * u);
    }
  }
  return Status::Ok();
}

}  // namespace codec
}  // namespace tfg
