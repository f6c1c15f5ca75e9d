#include "cc/util/record_order.h"

#include "cc/util/stateless_random.h"

namespace tfg {

IndexPermutation::IndexPermutation(uint64_t n, uint64_t key) : n_(n) {
  // Smallest even bit count 2h with 2^(2h) >= n (h >= 1): the domain is less
  // than 4n, so cycle walking takes fewer than 4 steps on average.
  int bits = 0;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  half_bits_ = bits <= 2 ? 1 : (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int r = 0; r < kRounds; ++r) {
    round_keys_[r] = HashKey({key, static_cast<uint64_t>(r), 0x66667265636f7264ULL});
  }
}

uint64_t IndexPermutation::Encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t f = SplitMix64(round_keys_[r] ^ right) & half_mask_;
    const uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t IndexPermutation::operator()(uint64_t i) const {
  // Encrypt is a bijection on [0, 2^(2h)); following it from i until the
  // value falls back into [0, n) gives a bijection on [0, n) (the walk ends:
  // i's cycle returns to i).
  uint64_t x = Encrypt(i);
  while (x >= n_) x = Encrypt(x);
  return x;
}

RecordOrder::RecordOrder(int64_t num_records, bool shuffle, uint64_t seed, int64_t epoch)
    : shuffle_(shuffle),
      permutation_(static_cast<uint64_t>(num_records < 0 ? 0 : num_records),
                   HashKey({seed, static_cast<uint64_t>(epoch)})) {}

}  // namespace tfg
