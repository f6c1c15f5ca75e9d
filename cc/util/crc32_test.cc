#include "cc/util/crc32.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tfg {
namespace {

// Bitwise reference: the polynomial division spelled out, one bit at a time.
uint32_t SlowCrc32(const std::string& s) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST(Crc32Test, KnownValues) {
  EXPECT_EQ(Crc32(0, "", 0), 0u);
  EXPECT_EQ(Crc32(0, "123456789", 9), 0xcbf43926u);  // the standard check value
  // FFRecord's reference fixture: the sample "A" is stored with this CRC.
  EXPECT_EQ(Crc32(0, "A", 1), 0xd3d99e8bu);
}

TEST(Crc32Test, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  std::string data;
  for (int i = 0; i < 600; ++i) data.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= data.size(); len += 37) {
      const std::string part = data.substr(start, len);
      EXPECT_EQ(Crc32(0, part.data(), part.size()), SlowCrc32(part)) << start << "+" << len;
    }
  }
}

TEST(Crc32Test, ChainsLikeZlib) {
  const std::string a = "hello, ", b = "world";
  EXPECT_EQ(Crc32(Crc32(0, a.data(), a.size()), b.data(), b.size()),
            Crc32(0, (a + b).data(), a.size() + b.size()));
}

}  // namespace
}  // namespace tfg
