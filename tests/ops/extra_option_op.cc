// For tests/test_option_tables.py: GulpDataset's attr table and one option
// more, declared in this table only, registered by the same macro. The test
// finds the option in the Python signature, its check and the docs' table.
// (A registration alone, no kernel: the test never runs the op.)
#include <cstdint>

#include "tf_gulp/ops/framework/attr_table.h"
#include "tf_gulp/ops/gulp/gulp_ops.h"

namespace {

struct ExtraGulpAttrs : tf_gulp::GulpDatasetAttrs {
  int64_t extra_option = 3;

  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    tf_gulp::GulpDatasetAttrs::ForEachAttr(a, visit);
    visit("extra_option", "int >= 2 = 3", a.extra_option, "an option only this table declares");
  }
};

TF_GULP_REGISTER_OP_WITH_ATTRS("TfGulpTest>ExtraGulpDataset", ExtraGulpAttrs)
    .Input("directory: string")
    .Output("handle: variant")
    .SetIsStateful()
    .Doc("A test op: GulpDataset's options and one more.");

}  // namespace
