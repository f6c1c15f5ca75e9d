// The attrs every positional source dataset has besides its own options
// (positional_source_dataset.h): Dataset.shard's, the epoch counter's and the
// shuffle's.
// One table, visited by each source's own (see attr_table.h), so they are
// registered, read and serialized the same way by every source; Python finds
// the sources by them (tf_gulp/ops/op_attrs.py: source_ops).
#ifndef TF_GULP_OPS_FRAMEWORK_SOURCE_ATTRS_H_
#define TF_GULP_OPS_FRAMEWORK_SOURCE_ATTRS_H_

#include <string>

#include "cc/util/shard.h"
#include "tf_gulp/ops/framework/core_status.h"
#include "tf_gulp/ops/framework/epoch_counter.h"

namespace tf_gulp {

struct SourceAttrs {
  // Only these positions of each epoch's order are read (Dataset.shard).
  tfg::Shard shard;
  std::string epoch_counter;  // see epoch_counter.h
  // The epoch of the first pass (Python's `epoch=`): pass p is epoch
  // first_epoch + p, so a dataset made at epoch e starts where one made at 0
  // is after e passes, reading nothing of the epochs before (epoch_cursor.h).
  int64_t first_epoch = 0;
  // The order of each epoch's elements: shuffled, a function of (seed, epoch)
  // (cc/util/record_order.h), or storage order.
  bool shuffle = false;
  int64_t seed = 0;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    // Dataset.shard(num_shards, shard_index), applied before anything is read.
    visit("num_shards", "int = 1", a.shard.num_shards);
    visit("shard_index", "int = 0", a.shard.index);
    // The name of the epoch counter shared by every re-creation of one Python
    // dataset (epoch_counter.h); "" for a counter private to the dataset.
    visit(kEpochCounterAttr, "string = ''", a.epoch_counter);
    visit("first_epoch", "int >= 0 = 0", a.first_epoch);
    visit("shuffle", "bool = false", a.shuffle,
          "visit the elements in a new random order each epoch, a function of (seed, epoch)");
    // Python's seed= (None: a random one) is the class's keyword, not this attr.
    visit("seed", "int = 0", a.seed);
  }

  // What an attr cannot check: the index within the shards.
  absl::Status Validate() const { return ToTfStatus(shard.Validate()); }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_SOURCE_ATTRS_H_
