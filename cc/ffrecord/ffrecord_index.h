// The header of an FFRecord file (HFAiLab's format), parsed and validated.
//
// Layout, all little-endian:
//
//   offset      size  field
//   0           4     meta_crc: CRC-32 (zlib) of bytes [4, 12 + 12 N)
//   4           8     N, the number of records (int64)
//   12          4 N   CRC-32 of each record (uint32)
//   12 + 4 N    8 N   absolute file offset of each record (int64)
//   12 + 12 N   ...   the records back to back, no padding
//
// Record i runs from offsets[i] to offsets[i + 1]; the last one runs to the
// end of the file. meta_crc == 0 marks files written before the metadata
// checksum existed: they are accepted with a warning, unchecked.
//
// Every number read from the file is checked against the file's real size
// before it is used, so a truncated, corrupt or foreign file is an error that
// names the file and the byte offset, never a huge allocation or a crash.
#ifndef TF_GULP_CC_FFRECORD_FFRECORD_INDEX_H_
#define TF_GULP_CC_FFRECORD_FFRECORD_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cc/io/random_access_file.h"
#include "cc/util/status.h"

namespace tfg {
namespace ffrecord {

// Bytes before the checksum table: meta_crc and N.
constexpr uint64_t kFixedHeaderBytes = 12;
// Bytes per record in the header: a CRC-32 and an offset.
constexpr uint64_t kHeaderBytesPerRecord = 12;

// 12 + 12 n, or false when that does not fit in an int64 (n must be >= 0).
bool HeaderBytes(int64_t n, uint64_t* bytes);

// The metadata checksum: CRC-32 of N's 8 bytes, then the checksum table, then
// the offset table, exactly as they are stored.
uint32_t MetadataChecksum(int64_t n, const uint32_t* checksums, const uint64_t* offsets);

struct FileIndex {
  std::string path;
  uint64_t file_size = 0;
  uint32_t meta_crc = 0;  // as stored; 0 in files older than the field
  int64_t num_records = 0;
  std::vector<uint32_t> checksums;  // num_records
  std::vector<uint64_t> offsets;    // num_records + 1; the last is file_size

  uint64_t header_bytes() const { return kFixedHeaderBytes + kHeaderBytesPerRecord * num_records; }
  uint64_t length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  // All records' bytes, the header excluded.
  uint64_t record_bytes() const { return offsets.empty() ? 0 : offsets.back() - offsets.front(); }
  // Where record i's checksum and offset are stored in the file.
  uint64_t checksum_field_offset(int64_t i) const { return kFixedHeaderBytes + 4 * i; }
  uint64_t offset_field_offset(int64_t i) const {
    return kFixedHeaderBytes + 4 * num_records + 8 * i;
  }
};

// Reads and validates `file`'s header. With `verify_meta_crc` the metadata
// checksum is compared (files whose meta_crc is 0 are accepted and
// `*legacy` is set: they predate the checksum). Always checked: the file
// holds the header N promises, offsets do not decrease, lie after the header
// and inside the file. Errors are DataLoss naming the file and byte offset.
Status ReadFileIndex(const RandomAccessFile& file, bool verify_meta_crc, FileIndex* index,
                     bool* legacy = nullptr);

// Recomputes the metadata checksum of an index read earlier (for validate()).
Status VerifyMetadataChecksum(const FileIndex& index, bool* legacy = nullptr);

// Expands `paths` into the list of FFRecord files to read, in order: a file is
// taken as it is; a directory contributes its `*.ffr` regular files (not
// recursive) sorted by name. A missing path or a directory without `.ffr`
// files is NotFound; an empty list is InvalidArgument. A `*.ffr` entry of a
// directory that is a dangling symbolic link (NotFound) or neither a regular
// file nor a directory (InvalidArgument: a FIFO, a device) is an error naming
// it, so that a part of the dataset is never silently left out.
Status ExpandPaths(const std::vector<std::string>& paths, std::vector<std::string>* files);

}  // namespace ffrecord
}  // namespace tfg

#endif  // TF_GULP_CC_FFRECORD_FFRECORD_INDEX_H_
