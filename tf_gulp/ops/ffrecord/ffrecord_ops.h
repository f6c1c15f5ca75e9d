// The interface of the FFRecordDataset op, shared by its registration
// (ffrecord_ops.cc) and its kernel (ffrecord_dataset_op.cc): its name and its
// attrs, each written once (framework/attr_table.h).
#ifndef TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_
#define TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "cc/io/batch_reader.h"
#include "tf_gulp/ops/framework/attr_table.h"
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

// Everything FFRecordDataset's attrs say, as the kernel reads them; the
// attrs with a doc line are tf_gulp.FFRecordDataset's options (Python reads
// them from the registration: tf_gulp/_options.py).
struct FFRecordDatasetAttrs {
  int64_t batch_size = 0;  // 0: one record per element
  bool drop_remainder = false;
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
    visit("batch_size", "int >= 0 = 0", a.batch_size,
          TF_GULP_NONE_IS_OFF "each element a vector of this many records, read in one submission");
    visit("drop_remainder", "bool = false", a.drop_remainder,
          "drop a short last batch; the batch dimension becomes static");
    visit("check_data", "bool = true", a.check_data,
          "verify each file's metadata checksum when made and each record's CRC-32 when read");
    // 0: the batch size; at most tfg::kMaxQueueDepth (checked by the kernel).
    visit("queue_depth", "int >= 0 = 0", a.queue_depth,
          TF_GULP_NONE_IS_OFF "most reads in flight (None: the batch size; 32 without batches)");
    visit("io_engine", IoEngineAttrType(), a.io_engine,
          "io_uring when the kernel allows it ('auto'), or one of them");
    visit("direct_io", "bool = false", a.direct_io,
          "read with O_DIRECT, bypassing the page cache (local files only)");
    visit("keys", "bool = false", a.keys,
          "elements are {epoch, index, record}: the key of each record's random augmentation");
    SourceAttrs::ForEachAttr(a.source, visit);
  }
};

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FFRECORD_FFRECORD_OPS_H_
