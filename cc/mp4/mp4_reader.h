// A small ISO-BMFF (MP4) reader for the Benzina layout: the tracks of a movie,
// found by their `hdlr` name, with each sample's byte range and the HEVC
// decoder configuration (hvcC) of HEVC tracks.
//
// Parsed boxes: moov / trak / tkhd / mdia / hdlr / minf / stbl / stsd (hvc1 or
// hev1 sample entry with hvcC and clap) / stsz / stsc / stco / co64; everything
// else is skipped by its size. Every size, count and offset is checked against
// its parent box and the file before use (without overflow), so a lying file is
// a DataLoss error naming the file, the box and the byte offset, never a read
// out of bounds or an absurd allocation. TensorFlow-free.
#ifndef TF_GULP_CC_MP4_MP4_READER_H_
#define TF_GULP_CC_MP4_MP4_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/io/random_access_file.h"
#include "cc/util/status.h"

namespace tfg {
namespace mp4 {

// The HEVCDecoderConfigurationRecord (hvcC) parts a decoder needs.
struct HevcConfig {
  int length_size = 4;  // bytes of each NAL unit's length prefix (1, 2 or 4)
  int chroma_format = 1;
  int bit_depth_luma = 8;
  int bit_depth_chroma = 8;
  // VPS, SPS, PPS (and SEI) NAL units, without start codes, in hvcC order.
  std::vector<std::string> parameter_sets;
};

// The clean aperture (clap) box: width/height and the offset of its centre
// from the coded frame's centre, in pixels.
struct CleanAperture {
  bool present = false;
  double width = 0, height = 0, horiz_offset = 0, vert_offset = 0;
};

struct Track {
  uint32_t track_id = 0;
  std::string handler_type;  // e.g. "vide", "meta"
  std::string name;          // hdlr name, without its NUL
  double width = 0, height = 0;  // tkhd (16.16 fixed point)
  std::string sample_entry;      // first stsd entry's type, e.g. "hvc1"
  int coded_width = 0, coded_height = 0;  // of a visual sample entry
  bool has_hevc_config = false;
  HevcConfig hevc;
  // The whole hvcC box (header included) as a byte range of the file (or
  // buffer), for writers that copy it into another file; 0/0 without one.
  uint64_t hvcc_offset = 0, hvcc_size = 0;
  uint64_t trak_offset = 0;  // of the trak box, for messages
  CleanAperture clap;
  // Absolute byte ranges of the samples in the file (or buffer).
  std::vector<uint64_t> sample_offsets;
  std::vector<uint64_t> sample_sizes;

  size_t num_samples() const { return sample_sizes.size(); }
};

struct Movie {
  std::string name;  // the file (or "<what> in <file>") for messages
  uint64_t size = 0;
  std::vector<Track> tracks;
  uint64_t moov_offset = 0, moov_size = 0;  // the moov box (header included)
  // The payload of moov/udta/bzsp (tf_gulp's split table, JSON), when the
  // file has one, and its byte offset. Checked to be a JSON object.
  bool has_split_table = false;
  std::string split_table;
  uint64_t split_table_offset = 0;

  // The first track whose hdlr name is `name`; nullptr when none.
  const Track* FindTrack(const std::string& name) const;
  // Same, but NotFound naming the file and the tracks it has.
  Status GetTrack(const std::string& name, const Track** track) const;
};

// A box found by ListBoxes: its type and byte ranges (offsets into the buffer).
struct BoxRange {
  std::string type;
  uint64_t begin = 0;    // the header
  uint64_t payload = 0;  // the first byte after the header
  uint64_t end = 0;
};

// The boxes one after the other in data[begin, end) (children of a box, or
// the top level of a file): every size checked against `end`. DataLoss naming
// `name` and the byte offset otherwise.
Status ListBoxes(const uint8_t* data, uint64_t begin, uint64_t end,
                 const std::string& name, std::vector<BoxRange>* boxes);

// Parses an MP4 held in memory (e.g. one per-image sample). `name` is used in
// error messages. Sample ranges are offsets into `data`.
Status ParseMovie(const uint8_t* data, uint64_t size, const std::string& name,
                  Movie* movie);

// Parses an MP4 file: top-level box headers are read one by one, then the
// moov box is read whole (bounded by the file's size).
Status ReadMovie(const RandomAccessFile& file, Movie* movie);

// A sample of an HEVC track as an Annex-B byte stream: a start code and each
// parameter set of `config`, then a start code and each NAL unit of `sample`
// (length-prefixed NAL units). DataLoss (naming `what`) when a length runs
// past the sample or is zero.
Status HevcSampleToAnnexB(const HevcConfig& config, const uint8_t* sample,
                          uint64_t size, const std::string& what,
                          std::string* annex_b);

}  // namespace mp4
}  // namespace tfg

#endif  // TF_GULP_CC_MP4_MP4_READER_H_
