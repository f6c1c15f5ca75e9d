#include "cc/gpu/testing/hevc_coded_size.h"

#include <vector>

namespace tfg {
namespace gpu {
namespace testing {
namespace {

// Bits of an RBSP (emulation prevention bytes removed).
class Bits {
 public:
  explicit Bits(std::vector<uint8_t> rbsp) : rbsp_(std::move(rbsp)) {}
  bool ok() const { return ok_; }
  uint32_t U(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (pos_ >= rbsp_.size() * 8) {
        ok_ = false;
        return 0;
      }
      v = v << 1 | ((rbsp_[pos_ / 8] >> (7 - pos_ % 8)) & 1);
      ++pos_;
    }
    return v;
  }
  void Skip(size_t n) {
    pos_ += n;
    if (pos_ > rbsp_.size() * 8) ok_ = false;
  }
  uint32_t Ue() {
    int zeros = 0;
    while (ok_ && U(1) == 0) {
      if (++zeros > 31) ok_ = false;
    }
    return ok_ ? (1u << zeros) - 1 + U(zeros) : 0;
  }

 private:
  std::vector<uint8_t> rbsp_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace

Status ReadHevcSize(const uint8_t* data, size_t size, const char* what, HevcSize* out) {
  for (size_t i = 0; i + 3 < size; ++i) {
    if (!(data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1)) continue;
    const size_t nal = i + 3;
    if (((data[nal] >> 1) & 0x3F) != 33) continue;  // SPS_NUT
    std::vector<uint8_t> rbsp;
    int zeros = 0;
    for (size_t k = nal + 2; k < size; ++k) {
      if (zeros >= 2 && data[k] == 3) {  // emulation prevention
        zeros = 0;
        continue;
      }
      if (zeros >= 2 && data[k] <= 1) break;  // the next start code
      zeros = data[k] == 0 ? zeros + 1 : 0;
      rbsp.push_back(data[k]);
    }
    Bits b(std::move(rbsp));
    b.U(4);                                  // sps_video_parameter_set_id
    const int sub_layers = static_cast<int>(b.U(3));  // sps_max_sub_layers_minus1
    b.U(1);                                  // temporal_id_nesting
    b.Skip(88);                              // general profile
    b.U(8);                                  // general_level_idc
    bool profile[8] = {}, level[8] = {};
    for (int k = 0; k < sub_layers; ++k) {
      profile[k] = b.U(1);
      level[k] = b.U(1);
    }
    if (sub_layers > 0) {
      for (int k = sub_layers; k < 8; ++k) b.U(2);
    }
    for (int k = 0; k < sub_layers; ++k) {
      if (profile[k]) b.Skip(88);
      if (level[k]) b.U(8);
    }
    b.Ue();                                  // sps_seq_parameter_set_id
    const uint32_t chroma = b.Ue();
    if (chroma == 3) b.U(1);                 // separate_colour_plane_flag
    const uint32_t w = b.Ue(), h = b.Ue();
    uint32_t left = 0, right = 0, top = 0, bottom = 0;
    if (b.U(1)) {                            // conformance_window_flag
      left = b.Ue(); right = b.Ue(); top = b.Ue(); bottom = b.Ue();
    }
    if (!b.ok() || w == 0 || h == 0 || w > 16888 || h > 16888) {
      return DataLossError(what, ": the sequence parameter set at byte ", i,
                           " ends early or gives no picture size");
    }
    // Conformance window offsets count chroma samples (SubWidthC/SubHeightC).
    const uint32_t sx = chroma == 1 || chroma == 2 ? 2 : 1, sy = chroma == 1 ? 2 : 1;
    out->coded_width = static_cast<int>(w);
    out->coded_height = static_cast<int>(h);
    out->display_width = static_cast<int>(w - sx * (left + right));
    out->display_height = static_cast<int>(h - sy * (top + bottom));
    return Status::Ok();
  }
  return DataLossError(what, ": no HEVC sequence parameter set in its ", size, " bytes");
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
