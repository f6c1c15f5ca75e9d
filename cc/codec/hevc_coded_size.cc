#include "cc/codec/hevc_coded_size.h"

#include <vector>

namespace tfg {
namespace codec {
namespace {

constexpr int kSpsNalType = 33;

// Reads an RBSP (emulation prevention bytes removed) bit by bit; reading past
// the end sets `overrun` and yields zeros.
class Bits {
 public:
  explicit Bits(std::vector<uint8_t> rbsp) : rbsp_(std::move(rbsp)) {}
  uint32_t U(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const size_t byte = pos_ >> 3;
      uint32_t bit = 0;
      if (byte < rbsp_.size()) {
        bit = (rbsp_[byte] >> (7 - (pos_ & 7))) & 1u;
      } else {
        overrun = true;
      }
      ++pos_;
      v = (v << 1) | bit;
    }
    return v;
  }
  // Exp-Golomb ue(v); at most 31 leading zeros (larger is not an HEVC size).
  uint32_t Ue() {
    int zeros = 0;
    while (U(1) == 0) {
      if (overrun || ++zeros > 31) {
        overrun = true;
        return 0;
      }
    }
    return ((1u << zeros) - 1) + U(zeros);
  }
  bool overrun = false;

 private:
  std::vector<uint8_t> rbsp_;
  size_t pos_ = 0;
};

// profile_tier_level(1, max_sub_layers_minus1) of H.265 7.3.3: skipped.
void SkipProfileTierLevel(Bits* b, int max_sub_layers_minus1) {
  b->U(8);   // general profile space, tier, profile idc
  b->U(32);  // general profile compatibility flags
  b->U(32);  // progressive, interlaced, non-packed, frame-only + 43 constraint bits + 1
  b->U(16);
  b->U(8);   // general level idc
  std::vector<bool> profile(max_sub_layers_minus1), level(max_sub_layers_minus1);
  for (int i = 0; i < max_sub_layers_minus1; ++i) {
    profile[i] = b->U(1) != 0;
    level[i] = b->U(1) != 0;
  }
  if (max_sub_layers_minus1 > 0) {
    for (int i = max_sub_layers_minus1; i < 8; ++i) b->U(2);
  }
  for (int i = 0; i < max_sub_layers_minus1; ++i) {
    if (profile[i]) {
      b->U(32);
      b->U(32);
      b->U(24);  // 88 bits: as the general profile
    }
    if (level[i]) b->U(8);
  }
}

}  // namespace

Status HevcCodedSize(const uint8_t* data, size_t size, const std::string& what, int* width,
                     int* height) {
  // NAL units start after 00 00 01; the SPS's payload runs to the next start code.
  for (size_t i = 0; i + 3 < size; ++i) {
    if (data[i] != 0 || data[i + 1] != 0 || data[i + 2] != 1) continue;
    const size_t nal = i + 3;
    if (((data[nal] >> 1) & 0x3F) != kSpsNalType) continue;
    std::vector<uint8_t> rbsp;
    int zeros = 0;
    for (size_t k = nal + 2; k < size; ++k) {  // after the two-byte NAL header
      if (zeros >= 2 && data[k] == 3) {  // emulation prevention byte
        zeros = 0;
        continue;
      }
      if (zeros >= 2 && data[k] <= 1) break;  // the next start code
      zeros = data[k] == 0 ? zeros + 1 : 0;
      rbsp.push_back(data[k]);
    }
    Bits b(std::move(rbsp));
    b.U(4);  // sps_video_parameter_set_id
    const int max_sub_layers_minus1 = static_cast<int>(b.U(3));
    b.U(1);  // sps_temporal_id_nesting_flag
    SkipProfileTierLevel(&b, max_sub_layers_minus1);
    b.Ue();  // sps_seq_parameter_set_id
    const uint32_t chroma_format_idc = b.Ue();
    if (chroma_format_idc == 3) b.U(1);  // separate_colour_plane_flag
    const uint32_t w = b.Ue(), h = b.Ue();
    if (b.overrun || w == 0 || h == 0 || w > 65535 || h > 65535) {
      return DataLossError(what, ": the HEVC sequence parameter set at byte ", nal,
                           " ends before its picture size (or gives none)");
    }
    *width = static_cast<int>(w);
    *height = static_cast<int>(h);
    return Status::Ok();
  }
  return DataLossError(what, ": no HEVC sequence parameter set in the sample's ", size,
                       " bytes");
}

}  // namespace codec
}  // namespace tfg
