#include "cc/mp4/bzna_container.h"

#include <nlohmann/json.hpp>

#include "cc/util/json_text.h"
#include "cc/util/printable_text.h"

namespace tfg {
namespace mp4 {
namespace {

// The split table's fields as the datasets read them: "classes" a list of
// strings, and each split ({"splits": {name: [start, stop]}, ...}) a
// range of entries of this file: one reaching past the last entry means the
// table or the tracks are damaged (a split nobody asks for would otherwise
// pass unnoticed until someone does).
Status CheckSplitTable(const Movie& movie, uint64_t entries) {
  if (!movie.has_split_table) return Status::Ok();
  nlohmann::json table;
  TFG_RETURN_IF_ERROR(ParseJson(movie.split_table, movie.name, &table));
  const std::string where =
      " in the split table (bzsp box at byte offset " + std::to_string(movie.split_table_offset) +
      ")";
  if (!table.is_object()) return Status::Ok();
  // "classes": the class names, label i's at index i (the datasets' class_names).
  if (table.contains("classes")) {
    const nlohmann::json& classes = table["classes"];
    if (!classes.is_array()) {
      return DataLossError(movie.name, ": \"classes\"", where,
                           " is not a list of class names");
    }
    for (size_t i = 0; i < classes.size(); ++i) {
      if (!classes[i].is_string()) {
        return DataLossError(movie.name, ": \"classes\"[", i, "]", where, " is ",
                             PrintableText(classes[i].dump()).substr(0, 40),
                             ", not a class name (a string)");
      }
    }
  }
  if (!table.contains("splits")) return Status::Ok();
  const nlohmann::json& splits = table["splits"];
  if (!splits.is_object()) {
    return DataLossError(movie.name, ": \"splits\"", where, " is not a JSON object");
  }
  for (auto it = splits.begin(); it != splits.end(); ++it) {
    const nlohmann::json& range = it.value();
    const std::string name = PrintableText(it.key());
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() ||
        !range[1].is_number_integer()) {
      return DataLossError(movie.name, ": split '", name, "'", where,
                           " is not a [start, stop] pair of entry indices");
    }
    // nlohmann reads every non-negative integer as unsigned: a signed one is
    // negative, as wrong as one past the last entry.
    const bool in_file = range[0].is_number_unsigned() && range[1].is_number_unsigned() &&
                         range[0].get<uint64_t>() <= range[1].get<uint64_t>() &&
                         range[1].get<uint64_t>() <= entries;
    if (!in_file) {
      return DataLossError(movie.name, ": split '", name, "' = [", range[0].dump(), ", ",
                           range[1].dump(), ")", where,
                           " is not within the file's ", entries, " entries");
    }
  }
  return Status::Ok();
}

}  // namespace

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
  TFG_RETURN_IF_ERROR(CheckSplitTable(movie, n));
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
