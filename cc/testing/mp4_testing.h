// Test helpers: build small ISO-BMFF files box by box (big-endian fields).
#ifndef TF_GULP_CC_TESTING_MP4_TESTING_H_
#define TF_GULP_CC_TESTING_MP4_TESTING_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tfg {
namespace testing {

inline std::string Be(uint64_t v, int bytes) {
  std::string s(bytes, '\0');
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xff);
  return s;
}

inline std::string Mp4Box(const std::string& type, const std::string& payload) {
  return Be(8 + payload.size(), 4) + type + payload;
}

// A box with a 64-bit size field.
inline std::string Mp4LargeBox(const std::string& type, const std::string& payload) {
  return Be(1, 4) + type + Be(16 + payload.size(), 8) + payload;
}

inline std::string Mp4FullBox(const std::string& type, const std::string& payload) {
  return Mp4Box(type, Be(0, 4) + payload);
}

struct TestTrack {
  std::string name;
  std::vector<uint64_t> sizes;
  std::vector<uint64_t> chunk_offsets;
  bool co64 = false;
  uint32_t samples_per_chunk = 0;  // 0: no stsc box
  uint32_t width = 0, height = 0;  // tkhd, pixels
};

inline std::string Mp4Trak(const TestTrack& t, uint32_t id) {
  std::string tkhd = Be(id, 4 + 4 + 4) + Be(0, 4) + Be(0, 4) + std::string(8 + 8 + 36, '\0') +
                     Be(uint64_t{t.width} << 16, 4) + Be(uint64_t{t.height} << 16, 4);
  tkhd = Mp4FullBox("tkhd", tkhd);  // v0: creation, modification, id, reserved, duration, ...
  std::string hdlr = Mp4FullBox("hdlr", Be(0, 4) + "meta" + std::string(12, '\0') + t.name +
                                            std::string(1, '\0'));
  std::string stsz = Be(0, 4) + Be(t.sizes.size(), 4);
  for (uint64_t s : t.sizes) stsz += Be(s, 4);
  std::string stco = Be(t.chunk_offsets.size(), 4);
  for (uint64_t o : t.chunk_offsets) stco += Be(o, t.co64 ? 8 : 4);
  std::string stbl = Mp4FullBox("stsd", Be(0, 4)) + Mp4FullBox("stsz", stsz) +
                     Mp4FullBox(t.co64 ? "co64" : "stco", stco);
  if (t.samples_per_chunk) {
    stbl += Mp4FullBox("stsc", Be(1, 4) + Be(1, 4) + Be(t.samples_per_chunk, 4) + Be(1, 4));
  }
  std::string minf = Mp4Box("minf", Mp4Box("stbl", stbl));
  return Mp4Box("trak", tkhd + Mp4Box("mdia", hdlr + minf));
}

inline std::string Mp4Moov(const std::vector<TestTrack>& tracks) {
  std::string body = Mp4FullBox("mvhd", std::string(96, '\0'));
  uint32_t id = 1;
  for (const TestTrack& t : tracks) body += Mp4Trak(t, id++);
  return Mp4Box("moov", body);
}

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_CC_TESTING_MP4_TESTING_H_
