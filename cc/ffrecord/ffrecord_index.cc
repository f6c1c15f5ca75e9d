#include "cc/ffrecord/ffrecord_index.h"


#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>

#include "cc/io/file_system.h"
#include "cc/io/format_sniffer.h"
#include "cc/util/crc32.h"

namespace tfg {
namespace ffrecord {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "FFRecord files are little-endian; this code copies tables directly");

std::string Hex(uint32_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return out.str();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status ReadFileIndexUnchecked(const RandomAccessFile& file, bool verify_meta_crc,
                              FileIndex* index, bool* legacy);

}  // namespace

Status ReadFileIndex(const RandomAccessFile& file, bool verify_meta_crc, FileIndex* index,
                     bool* legacy) {
  const Status status = ReadFileIndexUnchecked(file, verify_meta_crc, index, legacy);
  // Handed another format (a TFRecord, a .bzna...), the FFRecord reading fails on the record
  // count or an offset; the format sniffer says what the file is and what reads it instead.
  if (status.code() != StatusCode::kDataLoss) return status;
  return ExplainOpenFailure(status, file.path(), DataReader::kFFRecord);
}

bool HeaderBytes(int64_t n, uint64_t* bytes) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (n < 0 || static_cast<uint64_t>(n) > (kMax - kFixedHeaderBytes) / kHeaderBytesPerRecord) {
    return false;
  }
  *bytes = kFixedHeaderBytes + kHeaderBytesPerRecord * static_cast<uint64_t>(n);
  return true;
}

uint32_t MetadataChecksum(int64_t n, const uint32_t* checksums, const uint64_t* offsets) {
  uint32_t crc = Crc32(0, &n, sizeof(n));
  crc = Crc32(crc, checksums, sizeof(uint32_t) * static_cast<size_t>(n));
  return Crc32(crc, offsets, sizeof(uint64_t) * static_cast<size_t>(n));
}

Status VerifyMetadataChecksum(const FileIndex& index, bool* legacy) {
  if (legacy != nullptr) *legacy = index.meta_crc == 0;
  if (index.meta_crc == 0) return Status::Ok();  // written before the field existed
  const uint32_t computed =
      MetadataChecksum(index.num_records, index.checksums.data(), index.offsets.data());
  if (computed != index.meta_crc) {
    return DataLossError(index.path, ": metadata checksum mismatch: stored ", Hex(index.meta_crc),
                         " at offset 0, computed ", Hex(computed), " over bytes [4, ",
                         index.header_bytes(), "): the header (record count, checksum or "
                         "offset table) is corrupt");
  }
  return Status::Ok();
}

namespace {

Status ReadFileIndexUnchecked(const RandomAccessFile& file, bool verify_meta_crc,
                              FileIndex* index, bool* legacy) {
  const std::string& path = file.path();
  const uint64_t size = file.size();
  index->path = path;
  index->file_size = size;
  if (size < kFixedHeaderBytes) {
    return DataLossError(path, ": not an FFRecord file (or truncated): ", size,
                         " bytes is shorter than the ", kFixedHeaderBytes, "-byte header");
  }
  unsigned char fixed[kFixedHeaderBytes];
  TFG_RETURN_IF_ERROR(file.ReadAt(0, sizeof(fixed), fixed));
  uint32_t meta_crc;
  int64_t n;
  std::memcpy(&meta_crc, fixed, 4);
  std::memcpy(&n, fixed + 4, 8);
  uint64_t header_bytes = 0;
  if (!HeaderBytes(n, &header_bytes) || header_bytes > size) {
    std::ostringstream need;
    if (n < 0) {
      need << "a negative record count";
    } else if (header_bytes == 0) {
      need << "more bytes than any file can hold";
    } else {
      need << header_bytes << " bytes of header";
    }
    return DataLossError(path, ": not an FFRecord file (or truncated, or its header is corrupt): "
                         "the record count at offset 4 is ", n, ", which needs ", need.str(),
                         ", but the file has ", size, " bytes");
  }
  index->meta_crc = meta_crc;
  index->num_records = n;
  index->checksums.resize(static_cast<size_t>(n));
  index->offsets.resize(static_cast<size_t>(n) + 1);
  if (n > 0) {
    TFG_RETURN_IF_ERROR(file.ReadAt(kFixedHeaderBytes, 4 * static_cast<size_t>(n),
                                    index->checksums.data()));
    TFG_RETURN_IF_ERROR(file.ReadAt(kFixedHeaderBytes + 4 * static_cast<uint64_t>(n),
                                    8 * static_cast<size_t>(n), index->offsets.data()));
  }
  index->offsets[static_cast<size_t>(n)] = size;
  if (legacy != nullptr) *legacy = meta_crc == 0;
  if (verify_meta_crc) TFG_RETURN_IF_ERROR(VerifyMetadataChecksum(*index));

  for (int64_t i = 0; i < n; ++i) {
    const uint64_t offset = index->offsets[i];
    // Offsets are stored as int64; a negative one reads as a huge uint64 and
    // is reported as past the end.
    const auto shown = static_cast<int64_t>(offset);
    if (offset > size) {
      return DataLossError(path, ": record ", i, ": offset ", shown, " (stored at byte ",
                           index->offset_field_offset(i), ") is past the end of the file (",
                           size, " bytes): the file is truncated or its header is corrupt");
    }
    if (offset < header_bytes) {
      return DataLossError(path, ": record ", i, ": offset ", shown, " (stored at byte ",
                           index->offset_field_offset(i), ") points into the header, which ends "
                           "at byte ", header_bytes, ": the header is corrupt");
    }
    if (i > 0 && offset < index->offsets[i - 1]) {
      return DataLossError(path, ": record ", i, ": offset ", shown, " (stored at byte ",
                           index->offset_field_offset(i), ") is before record ", i - 1,
                           "'s offset ", index->offsets[i - 1],
                           ": offsets must not decrease; the header is corrupt");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ExpandPaths(const std::vector<std::string>& paths, std::vector<std::string>* files) {
  files->clear();
  if (paths.empty()) return InvalidArgumentError("no FFRecord files or directories given");
  for (const std::string& path : paths) {
    if (path.empty()) return InvalidArgumentError("an FFRecord path is the empty string");
    FileInfo info;
    const Status found_path = StatPath(path, &info);
    if (found_path.code() == StatusCode::kNotFound) {
      return NotFoundError(path, ": no such FFRecord file or directory");
    }
    TFG_RETURN_IF_ERROR(found_path);
    if (!info.is_directory) {
      files->push_back(path);
      continue;
    }
    std::vector<std::string> names;
    const Status listed = ListDirectory(path, &names);
    if (!listed.ok()) {
      return InvalidArgumentError(path, ": cannot list directory: ", listed.message());
    }
    std::vector<std::string> found;
    for (const std::string& name : names) {
      if (!EndsWith(name, ".ffr")) continue;
      // Every *.ffr file is a part of the dataset: one that cannot be read
      // (a dangling symbolic link, a FIFO, a device) is an error, never
      // silently left out (the dataset would be smaller without a word).
      const std::string child_path = JoinPath(path, name);
      FileInfo child;
      const Status child_stat = StatPath(child_path, &child);
      if (child_stat.code() == StatusCode::kNotFound) {
        return NotFoundError(child_path, ": cannot read this part of directory ", path,
                             ": a dangling symbolic link or a file that was removed");
      }
      if (!child_stat.ok()) {
        return InvalidArgumentError(child_path, ": cannot stat this part of directory ", path,
                                    ": ", child_stat.message());
      }
      if (child.is_directory) continue;  // not recursive: subdirectories are not parts
      if (!child.is_regular) {
        return InvalidArgumentError(child_path, ": is ", child.kind,
                                    ", expected a regular FFRecord file (in directory ", path,
                                    ")");
      }
      found.push_back(child_path);
    }
    if (found.empty()) {
      return ExplainOpenFailure(NotFoundError(path, ": directory holds no .ffr files"), path,
                                DataReader::kFFRecord);
    }
    std::sort(found.begin(), found.end());
    files->insert(files->end(), found.begin(), found.end());
  }
  return Status::Ok();
}

}  // namespace ffrecord
}  // namespace tfg
