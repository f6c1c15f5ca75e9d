// The interface of the FFRecordDataset op, shared by its registration
// (ffrecord_ops.cc) and its kernel (ffrecord_dataset_op.cc): its name and its
// attrs, each written once (framework/attr_table.h).
#ifndef TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_
#define TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "cc/io/batch_reader.h"
#include "tf_gulp/ops/framework/source_attrs.h"

namespace tf_gulp {

inline constexpr char kFFRecordDatasetOp[] = "TfGulp>FFRecordDataset";

// "{'auto', 'io_uring', 'pread'} = 'auto'": the names are cc/io's one list
// (tfg::kIoEngines), also what FileReader accepts.
inline std::string IoEngineAttrType() {
  std::string names;
  for (tfg::IoEngine engine : tfg::kIoEngines) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", "'", tfg::IoEngineName(engine), "'");
  }
  return absl::StrCat("{", names, "} = '", tfg::IoEngineName(tfg::IoEngine::kAuto), "'");
}

// Everything FFRecordDataset's attrs say, as the kernel reads them. Python's
// wrappers read the allowed values, minimums and defaults from the
// registration this table makes (tf_gulp/ops/op_attrs.py): they are written
// only here.
struct FFRecordDatasetAttrs {
  int64_t batch_size = 0;  // 0: one record per element
  bool drop_remainder = false;
  bool shuffle = false;
  int64_t seed = 0;
  bool check_data = true;
  int64_t queue_depth = 0;  // 0: the batch size (or the unbatched group)
  std::string io_engine;
  bool direct_io = false;
  // Each element also carries its epoch and its records' indices (the key of
  // their random augmentation, e.g. decode_jpeg_warped's epoch and elements):
  // outputs (epoch, index, record), a dict's keys in sorted order.
  bool keys = false;
  // Dataset.shard's and the epoch counter's (source_attrs.h): the iterator's
  // element e (a record, or a batch) is the epoch's element shard.Global(e).
  SourceAttrs source;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    visit("batch_size", "int >= 0 = 0", a.batch_size);
    visit("drop_remainder", "bool = false", a.drop_remainder);
    visit("shuffle", "bool = false", a.shuffle);
    visit("seed", "int = 0", a.seed);
    visit("check_data", "bool = true", a.check_data);
    // 0: the batch size; at most tfg::kMaxQueueDepth (checked by the kernel).
    visit("queue_depth", "int >= 0 = 0", a.queue_depth);
    visit("io_engine", IoEngineAttrType(), a.io_engine);
    visit("direct_io", "bool = false", a.direct_io);
    visit("keys", "bool = false", a.keys);
    SourceAttrs::ForEachAttr(a.source, visit);
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_
