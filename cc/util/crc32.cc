#include "cc/util/crc32.h"

#include <libdeflate.h>

#include <algorithm>

namespace tfg {

uint32_t Crc32(uint32_t crc, const void* data, size_t n) {
  // libdeflate takes the length as size_t already; the loop only keeps each
  // call to a bounded size so a pathological length cannot overflow anything
  // inside the library on 32-bit size_t builds.
  const auto* p = static_cast<const unsigned char*>(data);
  constexpr size_t kStep = size_t{1} << 30;
  while (n > 0) {
    const size_t len = std::min(n, kStep);
    crc = libdeflate_crc32(crc, p, len);
    p += len;
    n -= len;
  }
  return crc;
}

}  // namespace tfg
