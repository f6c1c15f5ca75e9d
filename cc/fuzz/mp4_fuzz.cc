// Fuzz target: the MP4 box reader (cc/mp4/mp4_reader.h), both entry points
// (ParseMovie on a buffer, as decode_hevc does with a per-image sample;
// ReadMovie on a file, as bzna_track_index does with a container), then the
// HEVC sample -> Annex-B conversion of each HEVC track's first samples, and
// the Benzina entry index (cc/mp4/bzna_container.h) of what was read.
//
// Input: an MP4 file. Seeds: tests/data/hevc/*.mp4.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cc/fuzz/fuzz_common.h"
#include "cc/io/random_access_file.h"
#include "cc/mp4/bzna_container.h"
#include "cc/mp4/mp4_reader.h"

namespace {

// What the reader promises about an accepted movie: every sample inside the file.
void CheckMovie(const tfg::mp4::Movie& movie, uint64_t size) {
  for (const tfg::mp4::Track& t : movie.tracks) {
    FUZZ_CHECK(t.sample_offsets.size() == t.sample_sizes.size());
    for (size_t i = 0; i < t.num_samples(); ++i) {
      FUZZ_CHECK(t.sample_offsets[i] <= size && t.sample_sizes[i] <= size - t.sample_offsets[i]);
    }
    if (t.has_hevc_config) {
      FUZZ_CHECK(t.hevc.length_size == 1 || t.hevc.length_size == 2 || t.hevc.length_size == 4);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tfg;
  using namespace tfg::mp4;
  Movie movie;
  if (ParseMovie(data, size, "sample.mp4", &movie).ok()) {
    CheckMovie(movie, size);
    for (const Track& t : movie.tracks) {
      if (!t.has_hevc_config) continue;
      for (size_t i = 0; i < std::min<size_t>(t.num_samples(), 4); ++i) {
        std::string annex_b;
        if (!HevcSampleToAnnexB(t.hevc, data + t.sample_offsets[i], t.sample_sizes[i], "sample",
                                &annex_b)
                 .ok()) {
          continue;
        }
        // Start codes (4 bytes) replace the length prefixes (<= 4 bytes each).
        uint64_t ps_bytes = 0;
        for (const std::string& ps : t.hevc.parameter_sets) ps_bytes += 4 + ps.size();
        FUZZ_CHECK(annex_b.size() >= ps_bytes + t.sample_sizes[i]);
      }
    }
  }
  static fuzz::ScratchFile scratch;
  const std::string& path = scratch.Write(data, size);
  std::unique_ptr<RandomAccessFile> file;
  FUZZ_CHECK(RandomAccessFile::Open(path, &file).ok());
  Movie from_file;
  if (ReadMovie(*file, &from_file).ok()) {
    CheckMovie(from_file, size);
    EntryIndex index;
    if (BuildEntryIndex(from_file, &index).ok()) {
      // One range per entry, a target (8 bytes inside the file) or -1 for each.
      FUZZ_CHECK(index.offsets.size() == index.entries && index.sizes.size() == index.entries);
      FUZZ_CHECK(index.target_offsets.size() == index.entries && index.targets <= index.entries);
      for (uint64_t i = 0; i < index.entries; ++i) {
        const int64_t t = index.target_offsets[i];
        FUZZ_CHECK((i < index.targets) == (t >= 0));
        FUZZ_CHECK(t < 0 || (static_cast<uint64_t>(t) <= size && size - t >= kTargetBytes));
      }
    }
  }
  return 0;
}
