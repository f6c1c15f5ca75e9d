#include "tf_gulp/ops/decode_hevc_sample.h"

#include <cmath>

#include "cc/util/printable_text.h"

namespace tf_gulp {

tfg::Status ParseHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                            const std::string& label, HevcSample* sample) {
  sample->what = label.empty()
                     ? std::string("HEVC MP4 sample (") + std::to_string(size) + " bytes)"
                     : label;
  const std::string& what = sample->what;
  TFG_RETURN_IF_ERROR(tfg::mp4::ParseMovie(data, size, what, &sample->movie));
  const auto& tracks = sample->movie.tracks;
  const tfg::mp4::Track* track = sample->movie.FindTrack(track_name);
  if (track == nullptr) {  // another muxer's name (FFmpeg: "VideoHandler"): first HEVC track
    for (const auto& t : tracks) {
      if (t.has_hevc_config) {
        track = &t;
        break;
      }
    }
  }
  if (track == nullptr) {
    return tfg::DataLossError(what, ": no track named '", track_name, "' and no HEVC track");
  }
  if (!track->has_hevc_config) {
    return tfg::DataLossError(what, ": track '", track->name, "' is not HEVC (sample entry '",
                              tfg::PrintableText(track->sample_entry), "', no hvcC)");
  }
  if (track->num_samples() < 1) {
    return tfg::DataLossError(what, ": track '", track->name, "' has no sample");
  }
  sample->track = static_cast<int>(track - tracks.data());
  return tfg::mp4::HevcSampleToAnnexB(track->hevc, data + track->sample_offsets[0],
                                      track->sample_sizes[0], what, &sample->annex_b);
}

tfg::Status HevcCropRegion(const HevcSample& sample, bool clean, int frame_w, int frame_h,
                           int* x, int* y, int* w, int* h) {
  const tfg::mp4::Track& t = sample.movie.tracks[sample.track];
  *x = 0;
  *y = 0;
  *w = frame_w;
  *h = frame_h;
  if (!clean) return tfg::Status::Ok();
  if (t.clap.present) {
    const double cw = std::round(t.clap.width), ch = std::round(t.clap.height);
    const double x0 = std::round((frame_w - t.clap.width) / 2 + t.clap.horiz_offset);
    const double y0 = std::round((frame_h - t.clap.height) / 2 + t.clap.vert_offset);
    if (!(cw >= 1 && ch >= 1 && x0 >= 0 && y0 >= 0 && x0 + cw <= frame_w &&
          y0 + ch <= frame_h)) {
      return tfg::DataLossError(sample.what, ": clean aperture ", t.clap.width, "x",
                                t.clap.height, " (offset ", t.clap.horiz_offset, ", ",
                                t.clap.vert_offset, ") is outside the ", frame_w, "x", frame_h,
                                " picture");
    }
    *x = static_cast<int>(x0);
    *y = static_cast<int>(y0);
    *w = static_cast<int>(cw);
    *h = static_cast<int>(ch);
    return tfg::Status::Ok();
  }
  const int tw = static_cast<int>(std::round(t.width));
  const int th = static_cast<int>(std::round(t.height));
  if (tw >= 1 && th >= 1 && tw <= frame_w && th <= frame_h) {
    *w = tw;
    *h = th;
  }
  return tfg::Status::Ok();
}

tfg::Status DecodeHevcOnCpu(
    const HevcSample& sample, bool clean, tfg::codec::ChromaUpsampling chroma, int threads,
    const std::function<tfg::Status(int h, int w, uint8_t** rgb)>& allocate) {
  tfg::codec::HevcDecoder* decoder = nullptr;
  TFG_RETURN_IF_ERROR(tfg::codec::HevcDecoder::ForThisThread(threads, &decoder));
  TFG_RETURN_IF_ERROR(decoder->Decode(reinterpret_cast<const uint8_t*>(sample.annex_b.data()),
                                      sample.annex_b.size(), sample.what));
  int x, y, w, h;
  TFG_RETURN_IF_ERROR(
      HevcCropRegion(sample, clean, decoder->width(), decoder->height(), &x, &y, &w, &h));
  uint8_t* rgb = nullptr;
  TFG_RETURN_IF_ERROR(allocate(h, w, &rgb));
  return decoder->ToRgb(x, y, w, h, chroma, rgb);
}

}  // namespace tf_gulp
