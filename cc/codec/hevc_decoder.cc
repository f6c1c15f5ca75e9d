#include "cc/codec/hevc_decoder.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cc/codec/ycbcr.h"
#include "cc/util/parse_choice.h"

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

// The frame's signalled matrix and range (unspecified: BT.601, limited).
YcbcrMatrix MatrixFor(const AVFrame* f) {
  YcbcrStandard standard = YcbcrStandard::kBt601;
  if (f->colorspace == AVCOL_SPC_BT709) {
    standard = YcbcrStandard::kBt709;
  } else if (f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL) {
    standard = YcbcrStandard::kBt2020;
  }
  const bool full = f->color_range == AVCOL_RANGE_JPEG ||
                    f->format == AV_PIX_FMT_YUVJ420P || f->format == AV_PIX_FMT_YUVJ422P ||
                    f->format == AV_PIX_FMT_YUVJ444P;
  return MakeYcbcrMatrix(standard, full);
}

}  // namespace

Status ParseChromaUpsampling(const std::string& name, ChromaUpsampling* mode) {
  return ParseChoice<ChromaUpsampling>(
      "chroma_upsampling", name,
      {{"bilinear", ChromaUpsampling::kBilinear}, {"nearest", ChromaUpsampling::kNearest}}, mode);
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
  // FFmpeg's gray (HEVC 4:0:0) is one plane without AV_PIX_FMT_FLAG_PLANAR: accepted as the
  // one-component planar picture it is.
  const bool planar8 = desc != nullptr && !(desc->flags & AV_PIX_FMT_FLAG_RGB) &&
                       desc->comp[0].depth == 8 &&
                       ((desc->nb_components == 3 && (desc->flags & AV_PIX_FMT_FLAG_PLANAR)) ||
                        (desc->nb_components == 1 && desc->comp[0].plane == 0 &&
                         desc->comp[0].step == 1));
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
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
  YcbcrPicture picture;
  picture.width = f->width;
  picture.height = f->height;
  picture.y = f->data[0];
  picture.y_stride = f->linesize[0];
  picture.matrix = MatrixFor(f);
  if (desc->nb_components == 3) {  // else gray: cb stays null
    picture.cb = f->data[1];
    picture.cr = f->data[2];
    picture.cb_stride = f->linesize[1];
    picture.cr_stride = f->linesize[2];
    picture.chroma_step = 1;
    picture.shift_x = desc->log2_chroma_w;
    picture.shift_y = desc->log2_chroma_h;
    picture.chroma_width = AV_CEIL_RSHIFT(f->width, desc->log2_chroma_w);
    picture.chroma_height = AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
  }
  RegionToRgb(picture, x, y, w, h, mode == ChromaUpsampling::kBilinear, dst);
  return Status::Ok();
}

}  // namespace codec
}  // namespace tfg
