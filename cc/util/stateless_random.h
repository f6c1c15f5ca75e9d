// Counter-based random numbers: a value is a pure function of its key.
//
// tf_gulp derives every random decision (shuffle order, frame offsets) from
// (seed, epoch, element index), so results do not depend on thread timing and
// a restored iterator makes exactly the decisions the original would have.
// SplitMix64 is small, fast and well mixed, which is all this needs.
#ifndef TF_GULP_CC_UTIL_STATELESS_RANDOM_H_
#define TF_GULP_CC_UTIL_STATELESS_RANDOM_H_

#include <cstdint>
#include <initializer_list>

namespace tfg {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hashes a list of integers into one 64-bit key.
inline uint64_t HashKey(std::initializer_list<uint64_t> parts) {
  uint64_t h = 0x6a09e667f3bcc909ULL;
  for (uint64_t p : parts) h = SplitMix64(h ^ SplitMix64(p));
  return h;
}

// A stream of numbers for one key; deterministic, cheap to create.
class KeyedRandom {
 public:
  explicit KeyedRandom(uint64_t key) : state_(key) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return SplitMix64(state_);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift reduction).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_STATELESS_RANDOM_H_
