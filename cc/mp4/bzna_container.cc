#include "cc/mp4/bzna_container.h"

namespace tfg {
namespace mp4 {

Status BuildEntryIndex(const Movie& movie, EntryIndex* index) {
  const Track* input = nullptr;
  const Track* targets = nullptr;
  TFG_RETURN_IF_ERROR(movie.GetTrack(kInputTrack, &input));
  TFG_RETURN_IF_ERROR(movie.GetTrack(kTargetTrack, &targets));
  const uint64_t n = input->num_samples();
  const uint64_t t = targets->num_samples();
  if (t > n) {
    // Benzina's toolchain stops writing targets at the first entry without
    // one, so fewer targets than entries is a layout; more is a broken file.
    return InvalidArgumentError(movie.name, ": the ", kTargetTrack, " track has ", t,
                                " samples, more than the ", n, " of the ", kInputTrack,
                                " track (it may be shorter, never longer)");
  }
  for (uint64_t i = 0; i < t; ++i) {
    if (targets->sample_sizes[i] != kTargetBytes) {
      return DataLossError(movie.name, ": ", kTargetTrack, " sample ", i, " at byte offset ",
                           targets->sample_offsets[i], " has ", targets->sample_sizes[i],
                           " bytes; targets are ", kTargetBytes, "-byte integers");
    }
  }
  index->file = movie.name;
  index->entries = n;
  index->targets = t;
  index->offsets = input->sample_offsets;
  index->sizes = input->sample_sizes;
  index->target_offsets.assign(n, -1);
  for (uint64_t i = 0; i < t; ++i) {
    index->target_offsets[i] = static_cast<int64_t>(targets->sample_offsets[i]);
  }
  return Status::Ok();
}

Status ReadEntryIndex(const RandomAccessFile& file, EntryIndex* index) {
  Movie movie;
  TFG_RETURN_IF_ERROR(ReadMovie(file, &movie));
  return BuildEntryIndex(movie, index);
}

}  // namespace mp4
}  // namespace tfg
