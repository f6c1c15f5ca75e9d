// CRC-32 as zlib computes it (the IEEE 802.3 polynomial, reflected, the
// running value starting at 0), so values match zlib.crc32 and every file
// format that stores zlib CRCs (FFRecord among them).
//
// The work is done by libdeflate, which uses the CPU's carry-less multiply
// instructions (PCLMULQDQ / VPCLMULQDQ on x86, PMULL on ARM) when present,
// unlike zlib's table-driven loop, so that checking every byte read costs
// less than reading it.
#ifndef TF_GULP_CC_UTIL_CRC32_H_
#define TF_GULP_CC_UTIL_CRC32_H_

#include <cstddef>
#include <cstdint>

namespace tfg {

// Extends `crc` (0 for a fresh checksum) with `n` bytes at `data`:
// Crc32(Crc32(0, a), b) == Crc32(0, a + b).
uint32_t Crc32(uint32_t crc, const void* data, size_t n);

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_CRC32_H_
