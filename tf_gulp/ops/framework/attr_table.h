// An op's attrs written once: a struct of fields and one table that names
// each field's attr and its registration (type, allowed values, minimum,
// default). The op registration, the kernel constructor's GetAttr calls and
// the dataset's graph node (AsGraphDefInternal) are all derived from it, so
// an attr cannot be registered under one name and read or saved under
// another, nor forgotten in one of the three.
//
// A table is a static member template of the struct:
//
//   struct MyAttrs {
//     int64_t batch_size = 0;
//     template <typename Self, typename Visit>
//     static void ForEachAttr(Self& a, Visit&& visit) {
//       visit("batch_size", "int >= 0 = 0", a.batch_size);
//     }
//   };
//
// `visit(name, type, field[, doc])`: `name` is a string literal (graph nodes
// keep a view of it), `type` what follows "name: " in the registration
// (anything that converts to absl::string_view, so computed defaults are
// fine), `field` the member that holds the value (any type
// OpKernelConstruction::GetAttr and DatasetGraphDefBuilder::BuildAttrValue
// take: int64_t for int, bool, float, std::string, and std::vector of those
// for list attrs). A table may visit another struct's table
// (SourceAttrs::ForEachAttr) to share attrs.
//
// `doc`, one line, makes the attr a user's option: the registration carries
// it as the attr's description, and Python (tf_gulp/_options.py) makes of
// every attr with one a keyword argument of the source's class of the same
// name, default and checks, and a row of the reference page's option table.
// Attrs without one are set by the class's own code. A doc that starts with
// TF_GULP_NONE_IS_OFF is an option whose default means "off": Python shows
// that default as None and refuses it as a value.
#ifndef TF_GULP_OPS_FRAMEWORK_ATTR_TABLE_H_
#define TF_GULP_OPS_FRAMEWORK_ATTR_TABLE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tensorflow/core/framework/attr_value.pb.h"
#include "tensorflow/core/framework/attr_value_util.h"
#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_def_util.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace tf_gulp {

// A dataset graph node's attrs, as DatasetGraphDefBuilder::AddDataset takes them.
using GraphAttrs = std::vector<std::pair<absl::string_view, ::tensorflow::AttrValue>>;

// An op registration with a table's attrs added, going on as REGISTER_OP's
// does (Input, Output, SetShapeFn, ... then Doc). Its Doc appends the
// table's doc lines ("name: doc", the form OpDefBuilder's doc parser gives to
// the attr's description); without a Doc they are the whole doc.
class AttrOpBuilder {
 public:
  explicit AttrOpBuilder(const char* name) : op_(name) {}

  template <typename Attrs>
  AttrOpBuilder& AddAttrs() {
    Attrs defaults;
    Attrs::ForEachAttr(defaults, [this](const char* name, absl::string_view type, const auto&,
                                        absl::string_view doc = {}) {
      op_.Attr(absl::StrCat(name, ": ", type));
      if (!doc.empty()) absl::StrAppend(&attr_docs_, name, ": ", doc, "\n");
    });
    return *this;
  }

  template <typename... A>
  AttrOpBuilder& Input(A&&... a) { op_.Input(std::forward<A>(a)...); return *this; }
  template <typename... A>
  AttrOpBuilder& Output(A&&... a) { op_.Output(std::forward<A>(a)...); return *this; }
  template <typename... A>
  AttrOpBuilder& Attr(A&&... a) { op_.Attr(std::forward<A>(a)...); return *this; }
  AttrOpBuilder& SetIsStateful() { op_.SetIsStateful(); return *this; }
  template <typename F>
  AttrOpBuilder& SetShapeFn(F&& fn) { op_.SetShapeFn(std::forward<F>(fn)); return *this; }
  AttrOpBuilder& Doc(absl::string_view text) {
    op_.Doc(absl::StrCat(text, "\n", attr_docs_));
    documented_ = true;
    return *this;
  }

  // What TF_INIT_ON_STARTUP_IF's `<<` calls: registers the op.
  ::tensorflow::InitOnStartupMarker operator()() {
    if (!documented_ && !attr_docs_.empty()) op_.Doc(absl::StrCat("\n\n", attr_docs_));
    return op_();
  }

 private:
  ::tensorflow::register_op::OpDefBuilderWrapper op_;
  std::string attr_docs_;
  bool documented_ = false;
};

// The table `Attrs` without the attrs of the table `Without` (visited by it):
// e.g. a source's options without its SourceAttrs, for an op that computes
// from the options alone and must not pass for a source.
template <typename Attrs, typename Without>
struct AttrsWithout : Attrs {
  template <typename Self, typename Visit>
  static void ForEachAttr(Self& a, Visit&& visit) {
    Attrs::ForEachAttr(a, [&](const char* name, absl::string_view type, auto& field,
                              absl::string_view doc = {}) {
      if (!Has(name)) visit(name, type, field, doc);
    });
  }

 private:
  static bool Has(absl::string_view name) {
    Without without;
    bool found = false;
    Without::ForEachAttr(without, [&](const char* n, absl::string_view, const auto&,
                                      absl::string_view = {}) { found |= n == name; });
    return found;
  }
};

// Reads every attr of the table `Table` in a kernel's constructor into
// `attrs` (a struct of the table's fields, or one derived from it).
template <typename Table, typename Struct>
absl::Status ReadTableAttrs(::tensorflow::OpKernelConstruction* ctx, Struct* attrs) {
  absl::Status status;
  Table::ForEachAttr(*attrs, [&](const char* name, absl::string_view, auto& field,
                                 absl::string_view = {}) {
    if (status.ok()) status = ctx->GetAttr(name, &field);
  });
  return status;
}

// Reads every attr of the table in a kernel's constructor.
template <typename Attrs>
absl::Status ReadAttrs(::tensorflow::OpKernelConstruction* ctx, Attrs* attrs) {
  return ReadTableAttrs<Attrs>(ctx, attrs);
}

// The names of the attrs of the table `Table` whose value in `attrs` is not
// the default op `op` registers for it (e.g. options given that another
// option makes meaningless, named as the registration names them).
template <typename Table, typename Struct>
absl::Status NonDefaultAttrs(absl::string_view op, const Struct& attrs,
                             std::vector<absl::string_view>* names) {
  const ::tensorflow::OpDef* def = nullptr;
  TF_RETURN_IF_ERROR(::tensorflow::OpRegistry::Global()->LookUpOpDef(std::string(op), &def));
  absl::Status status;
  Table::ForEachAttr(attrs, [&](const char* name, absl::string_view, const auto& field,
                                absl::string_view = {}) {
    const ::tensorflow::OpDef::AttrDef* attr = ::tensorflow::FindAttr(name, *def);
    if (attr == nullptr || !attr->has_default_value()) {
      status.Update(absl::InternalError(absl::StrCat(op, " registers no default for ", name)));
      return;
    }
    ::tensorflow::AttrValue value;
    ::tensorflow::SetAttrValue(field, &value);
    if (!::tensorflow::AreAttrValuesEqual(value, attr->default_value())) names->push_back(name);
  });
  return status;
}

// Appends every attr of the table to a dataset's graph node attrs.
template <typename Attrs>
void AddAttrs(const Attrs& attrs, ::tensorflow::data::DatasetBase::DatasetGraphDefBuilder* b,
              GraphAttrs* out) {
  Attrs::ForEachAttr(attrs, [&](const char* name, absl::string_view, const auto& field,
                                absl::string_view = {}) {
    ::tensorflow::AttrValue value;
    b->BuildAttrValue(field, &value);
    out->emplace_back(name, std::move(value));
  });
}

}  // namespace tf_gulp

// REGISTER_OP with the attrs of the table of `Attrs` already added; the
// registration goes on as REGISTER_OP's does:
//   TF_GULP_REGISTER_OP_WITH_ATTRS("TfGulp>X", XAttrs).Input("path: string")...
// (Attrs and inputs are kept in separate lists of the OpDef, so adding the
// attrs first changes nothing.)
#define TF_GULP_REGISTER_OP_WITH_ATTRS(name, Attrs) \
  TF_NEW_ID_FOR_INIT(TF_GULP_REGISTER_OP_WITH_ATTRS_IMPL, name, Attrs)
#define TF_GULP_REGISTER_OP_WITH_ATTRS_IMPL(ctr, name, Attrs)                    \
  TF_ATTRIBUTE_ANNOTATE("tf:op")                                                 \
  static ::tensorflow::InitOnStartupMarker const tf_gulp_register_op##ctr       \
      TF_ATTRIBUTE_UNUSED = TF_INIT_ON_STARTUP_IF(SHOULD_REGISTER_OP(name)) << \
                            ::tf_gulp::AttrOpBuilder(name).AddAttrs<Attrs>()

// The start of a doc line (see above) for an option whose default means "off"
// (clip_len 0: no clips): Python's keyword takes None for it.
#define TF_GULP_NONE_IS_OFF "[None is off] "

#endif  // TF_GULP_OPS_FRAMEWORK_ATTR_TABLE_H_
