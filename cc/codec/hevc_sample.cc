#include "cc/codec/hevc_sample.h"

#include <cmath>

#include "cc/util/printable_text.h"

namespace tfg {
namespace codec {
namespace {

// The rectangle of the decoded picture that `clean` asks for: the clean
// aperture (clap box, else the tkhd size when it is within the frame) or the
// full coded frame.
Status Region(const mp4::Track& t, bool clean, int frame_w, int frame_h,
              const std::string& what, PictureRegion* r) {
  r->x = 0;
  r->y = 0;
  r->width = frame_w;
  r->height = frame_h;
  if (!clean) return Status::Ok();
  if (t.clap.present) {
    const double cw = std::round(t.clap.width), ch = std::round(t.clap.height);
    const double x0 = std::round((frame_w - t.clap.width) / 2 + t.clap.horiz_offset);
    const double y0 = std::round((frame_h - t.clap.height) / 2 + t.clap.vert_offset);
    if (!(cw >= 1 && ch >= 1 && x0 >= 0 && y0 >= 0 && x0 + cw <= frame_w &&
          y0 + ch <= frame_h)) {
      return DataLossError(what, ": clean aperture ", t.clap.width, "x", t.clap.height,
                           " (offset ", t.clap.horiz_offset, ", ", t.clap.vert_offset,
                           ") is outside the ", frame_w, "x", frame_h, " picture");
    }
    r->x = static_cast<int>(x0);
    r->y = static_cast<int>(y0);
    r->width = static_cast<int>(cw);
    r->height = static_cast<int>(ch);
    return Status::Ok();
  }
  const int tw = static_cast<int>(std::round(t.width));
  const int th = static_cast<int>(std::round(t.height));
  if (tw >= 1 && th >= 1 && tw <= frame_w && th <= frame_h) {
    r->width = tw;
    r->height = th;
  }
  return Status::Ok();
}

}  // namespace

std::string HevcSampleName(const std::string& label, size_t size) {
  if (!label.empty()) return label;
  return "HEVC MP4 sample (" + std::to_string(size) + " bytes)";
}

Status ParseHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                       const std::string& what, ParsedHevcSample* sample) {
  TFG_RETURN_IF_ERROR(mp4::ParseMovie(data, size, what, &sample->movie));
  const auto& tracks = sample->movie.tracks;
  const mp4::Track* track = sample->movie.FindTrack(track_name);
  if (track == nullptr) {  // another muxer's name (FFmpeg: "VideoHandler"): first HEVC track
    for (const auto& t : tracks) {
      if (t.has_hevc_config) {
        track = &t;
        break;
      }
    }
  }
  if (track == nullptr) {
    return DataLossError(what, ": no track named '", track_name, "' and no HEVC track");
  }
  if (!track->has_hevc_config) {
    return DataLossError(what, ": track '", track->name, "' is not HEVC (sample entry '",
                         PrintableText(track->sample_entry), "', no hvcC)");
  }
  if (track->num_samples() < 1) {
    return DataLossError(what, ": track '", track->name, "' has no sample");
  }
  sample->track = static_cast<int>(track - tracks.data());
  return mp4::HevcSampleToAnnexB(track->hevc, data + track->sample_offsets[0],
                                 track->sample_sizes[0], what, &sample->annex_b);
}

Status HevcSampleRegion(const ParsedHevcSample& sample, bool clean, int frame_w, int frame_h,
                        const std::string& what, PictureRegion* region) {
  return Region(sample.picture_track(), clean, frame_w, frame_h, what, region);
}

Status DecodeParsedHevcSample(const ParsedHevcSample& sample, bool clean, int threads,
                              const std::string& what, HevcDecoder** decoder,
                              PictureRegion* region) {
  TFG_RETURN_IF_ERROR(HevcDecoder::ForThisThread(threads, decoder));
  TFG_RETURN_IF_ERROR((*decoder)->Decode(reinterpret_cast<const uint8_t*>(sample.annex_b.data()),
                                         sample.annex_b.size(), what));
  return Region(sample.picture_track(), clean, (*decoder)->width(), (*decoder)->height(), what,
                region);
}

Status DecodeHevcSample(const uint8_t* data, size_t size, const std::string& track_name,
                        bool clean, int threads, const std::string& what,
                        HevcDecoder** decoder, PictureRegion* region) {
  ParsedHevcSample sample;
  TFG_RETURN_IF_ERROR(ParseHevcSample(data, size, track_name, what, &sample));
  return DecodeParsedHevcSample(sample, clean, threads, what, decoder, region);
}

}  // namespace codec
}  // namespace tfg
