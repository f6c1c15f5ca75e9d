// The interface of the epoch and cardinality ops, shared by their
// registrations (epoch_ops.cc) and their kernels (epoch_dataset_op.cc,
// epoch_counts_dataset_op.cc, known_cardinality_dataset_op.cc): their names
// and attrs, each written once (framework/attr_table.h).
#ifndef TF_GULP_OPS_EPOCH_EPOCH_OPS_H_
#define TF_GULP_OPS_EPOCH_EPOCH_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tf_gulp/ops/framework/epoch_counter.h"

namespace tf_gulp {

inline constexpr char kEpochDatasetOp[] = "TfGulp>EpochDataset";
inline constexpr char kEpochCountsDatasetOp[] = "TfGulp>EpochCountsDataset";
inline constexpr char kKnownCardinalityDatasetOp[] = "TfGulp>KnownCardinalityDataset";

struct EpochDatasetAttrs {
  std::string epoch_counter;  // see epoch_counter.h; no default: always drawn
  // -1: one element, the epoch; n >= 0: [epoch, position], one split per
  // position under tf.data service.
  int64_t elements = -1;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit(kEpochCounterAttr, "string", a.epoch_counter);
    visit("elements", "int = -1", a.elements);
  }
};

struct EpochCountsDatasetAttrs {
  // The counters whose counts every checkpoint carries, matched by position.
  std::vector<std::string> epoch_counters;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("epoch_counters", "list(string) >= 0", a.epoch_counters);
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_EPOCH_EPOCH_OPS_H_
