// Test helpers: FFRecord file bytes built field by field (independently of
// FFRecordWriter, so tests can compare the writer against them), and the
// byte offsets of header fields for corrupting files on purpose.
#ifndef TF_GULP_CC_TESTING_FFRECORD_TESTING_H_
#define TF_GULP_CC_TESTING_FFRECORD_TESTING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cc/util/crc32.h"

namespace tfg {
namespace testing {

template <typename T>
void PutLE(std::string* out, size_t at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    (*out)[at + i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
  }
}

// The bytes of an FFRecord file holding `records`. With `meta_crc` false the
// metadata checksum is left 0, as in files written before it existed.
inline std::string BuildFFRecord(const std::vector<std::string>& records, bool meta_crc = true) {
  const uint64_t n = records.size();
  const uint64_t header = 12 + 12 * n;
  std::string out(header, '\0');
  PutLE<uint64_t>(&out, 4, n);
  uint64_t offset = header;
  for (uint64_t i = 0; i < n; ++i) {
    PutLE<uint32_t>(&out, 12 + 4 * i, Crc32(0, records[i].data(), records[i].size()));
    PutLE<uint64_t>(&out, 12 + 4 * n + 8 * i, offset);
    offset += records[i].size();
  }
  if (meta_crc) PutLE<uint32_t>(&out, 0, Crc32(0, out.data() + 4, header - 4));
  for (const auto& r : records) out += r;
  return out;
}

// Byte offsets of record i's checksum and offset fields in a file of n records.
inline uint64_t ChecksumField(uint64_t n, uint64_t i) { return 12 + 4 * i; }
inline uint64_t OffsetField(uint64_t n, uint64_t i) { return 12 + 4 * n + 8 * i; }

// Recomputes the metadata checksum after a test edited the header.
inline void ResealHeader(std::string* file) {
  uint64_t n;
  std::memcpy(&n, file->data() + 4, 8);
  PutLE<uint32_t>(file, 0, Crc32(0, file->data() + 4, 8 + 12 * n));
}

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_CC_TESTING_FFRECORD_TESTING_H_
