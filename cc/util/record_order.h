// The order in which a dataset visits its records in one epoch, as a pure
// function of (number of records, seed, epoch, position).
//
// Shuffling does not materialize a permutation: position p maps to record
// Permute(p) through a keyed Feistel network over the smallest power-of-four
// domain that holds n, with cycle walking to stay inside [0, n). That takes
// O(1) memory for any n (a billion-record dataset needs no 8 GB order table),
// makes skipping to any position O(1), and lets a restored iterator or a
// tf.data service worker compute exactly the same order.
#ifndef TF_GULP_CC_UTIL_RECORD_ORDER_H_
#define TF_GULP_CC_UTIL_RECORD_ORDER_H_

#include <cstdint>

namespace tfg {

// A pseudo-random permutation of [0, n) chosen by `key`.
class IndexPermutation {
 public:
  IndexPermutation(uint64_t n, uint64_t key);
  uint64_t n() const { return n_; }
  // Maps i in [0, n) to a distinct value in [0, n).
  uint64_t operator()(uint64_t i) const;

 private:
  uint64_t Encrypt(uint64_t x) const;

  static constexpr int kRounds = 6;
  uint64_t n_;
  int half_bits_;
  uint64_t half_mask_;
  uint64_t round_keys_[kRounds];
};

// Record order of one epoch: identity without shuffling.
class RecordOrder {
 public:
  RecordOrder(int64_t num_records, bool shuffle, uint64_t seed, int64_t epoch);
  int64_t size() const { return static_cast<int64_t>(permutation_.n()); }
  int64_t operator[](int64_t position) const {
    return shuffle_ ? static_cast<int64_t>(permutation_(static_cast<uint64_t>(position)))
                    : position;
  }

 private:
  bool shuffle_;
  IndexPermutation permutation_;
};

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_RECORD_ORDER_H_
