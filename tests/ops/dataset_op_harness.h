// Runs one of tf_gulp's dataset ops the way tf.data does, from C++: a graph holding the op, its
// cardinality, iterators, GetNext and iterator save/restore (SerializeIterator /
// DeserializeIterator), in a TensorFlow session of the installed TensorFlow.
//
// Why not TensorFlow's own DatasetOpsTestBase: its header (tensorflow/core/data/
// dataset_test_base.h) and the test libraries behind it are not in the pip package, and the pip
// package's libtensorflow_cc.so.2 does not export the C++ client API (ClientSession, Scope). It
// does export TensorFlow's C API (tensorflow/c/c_api.h), which this harness uses; the op library
// is loaded with TF_LoadLibrary, as Python's tf.load_op_library does.
#ifndef TF_GULP_TESTS_OPS_DATASET_OP_HARNESS_H_
#define TF_GULP_TESTS_OPS_DATASET_OP_HARNESS_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_tstring.h"

namespace tfg {
namespace testing {

// TensorFlow's error as an exception (gtest reports its message).
class TfError : public std::runtime_error {
 public:
  TfError(TF_Code code, const std::string& what) : std::runtime_error(what), code(code) {}
  TF_Code code;
};

class Status {
 public:
  Status() : s_(TF_NewStatus()) {}
  ~Status() { TF_DeleteStatus(s_); }
  TF_Status* get() { return s_; }
  void Check(const std::string& what) {
    if (TF_GetCode(s_) != TF_OK) throw TfError(TF_GetCode(s_), what + ": " + TF_Message(s_));
  }

 private:
  TF_Status* s_;
};

using TensorPtr = std::unique_ptr<TF_Tensor, decltype(&TF_DeleteTensor)>;

// The op library's path: TF_GULP_OPS_LIBRARY, else where Bazel puts it as the test's data file
// (relative to the runfiles root, the test's working directory; also the source tree's root after
// setup.py build_ext --inplace).
inline std::string OpLibraryPath() {
  const char* path = std::getenv("TF_GULP_OPS_LIBRARY");
  return path != nullptr ? path : "tf_gulp/ops/_tf_gulp_ops.so";
}

// Loads the op library once per process (its ops register with TensorFlow's global registry).
inline void LoadOpLibrary(const std::string& path) {
  static TF_Library* library = nullptr;
  if (library != nullptr) return;
  Status status;
  library = TF_LoadLibrary(path.c_str(), status.get());
  status.Check("TF_LoadLibrary(" + path + ")");
}

// A scalar string element's bytes (TF_STRING tensors hold TF_TStrings).
inline std::string ScalarString(TF_Tensor* t) {
  const auto* s = static_cast<const TF_TString*>(TF_TensorData(t));
  return std::string(TF_StringGetDataPointer(s), TF_StringGetSize(s));
}

// A graph with one dataset under test (built by the caller from this graph's inputs), maybe other
// datasets (its inputs, or datasets sharing a resource with it), and named iterators over them, run
// in one session. Each iterator is a resource of the session (IteratorV2 with a shared name).
class DatasetGraph {
 public:
  DatasetGraph() : graph_(TF_NewGraph()) {}
  ~DatasetGraph() {
    if (session_ != nullptr) {
      Status status;
      TF_CloseSession(session_, status.get());
      TF_DeleteSession(session_, status.get());
    }
    TF_DeleteGraph(graph_);
  }

  TF_Graph* graph() { return graph_; }

  TF_Output StringVector(const std::string& name, const std::vector<std::string>& values) {
    const int64_t dims[1] = {static_cast<int64_t>(values.size())};
    TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, values.size() * sizeof(TF_TString));
    auto* data = static_cast<TF_TString*>(TF_TensorData(t));
    for (size_t i = 0; i < values.size(); ++i) {
      TF_StringInit(&data[i]);
      TF_StringCopy(&data[i], values[i].data(), values[i].size());
    }
    return Const(name, TF_STRING, t);
  }

  TF_Output StringScalar(const std::string& name, const std::string& value) {
    TF_Tensor* t = TF_AllocateTensor(TF_STRING, nullptr, 0, sizeof(TF_TString));
    auto* data = static_cast<TF_TString*>(TF_TensorData(t));
    TF_StringInit(data);
    TF_StringCopy(data, value.data(), value.size());
    return Const(name, TF_STRING, t);
  }

  TF_Output Int64Scalar(const std::string& name, int64_t value) {
    TF_Tensor* t = TF_AllocateTensor(TF_INT64, nullptr, 0, sizeof(int64_t));
    *static_cast<int64_t*>(TF_TensorData(t)) = value;
    return Const(name, TF_INT64, t);
  }

  // A dataset op named `name` that iterators may name (AddIterator) or other datasets take as an
  // input (its handle: the returned output), with components of `dtypes`.
  TF_Output AddDataset(const std::string& name, const std::string& op_type,
                       const std::vector<TF_Output>& inputs, const std::vector<TF_DataType>& dtypes,
                       const std::function<void(TF_OperationDescription*)>& set_attrs) {
    TF_OperationDescription* d = TF_NewOperation(graph_, op_type.c_str(), name.c_str());
    for (const TF_Output& in : inputs) TF_AddInput(d, in);
    set_attrs(d);
    datasets_.emplace_back(name, Dataset{Finish(d, op_type), dtypes});
    return {datasets_.back().second.op, 0};
  }

  // RangeDataset(0, stop) named "range": int64 scalars 0, 1, ..., stop - 1, an input for the
  // datasets that transform one.
  TF_Output AddRange(int64_t stop) {
    return AddDataset(
        "range", "RangeDataset",
        {Int64Scalar("start", 0), Int64Scalar("stop", stop), Int64Scalar("step", 1)}, {TF_INT64},
        [](TF_OperationDescription* d) { SetElementSpec(d, {TF_INT64}); });
  }

  // The dataset op `op_type` with `inputs` and attrs set by `set_attrs`, whose elements have
  // components of `dtypes` (the iterators take any shapes: the op's own are checked by the test).
  void SetDataset(const std::string& op_type, const std::vector<TF_Output>& inputs,
                  const std::vector<TF_DataType>& dtypes,
                  const std::function<void(TF_OperationDescription*)>& set_attrs) {
    dataset_ = AddDataset(kDataset, op_type, inputs, dtypes, set_attrs).oper;
    TF_OperationDescription* c = TF_NewOperation(graph_, "DatasetCardinality", "dataset_cardinality");
    TF_AddInput(c, {dataset_, 0});
    cardinality_ = Finish(c, "DatasetCardinality");
  }

  // An iterator named `name` over the dataset `dataset` (default: the one under test), with its
  // GetNext, save and restore-from ops.
  void AddIterator(const std::string& name, const std::string& dataset = kDataset) {
    Iterator it;
    const Dataset& ds = FindDataset(dataset);
    it.dtypes = ds.dtypes;
    TF_OperationDescription* d = TF_NewOperation(graph_, "IteratorV2", name.c_str());
    TF_SetAttrString(d, "shared_name", name.data(), name.size());
    TF_SetAttrString(d, "container", "", 0);
    SetElementSpec(d, it.dtypes);
    it.resource = Finish(d, "IteratorV2");
    d = TF_NewOperation(graph_, "MakeIterator", (name + "_make").c_str());
    TF_AddInput(d, {ds.op, 0});
    TF_AddInput(d, {it.resource, 0});
    it.make = Finish(d, "MakeIterator");
    d = TF_NewOperation(graph_, "IteratorGetNext", (name + "_next").c_str());
    TF_AddInput(d, {it.resource, 0});
    SetElementSpec(d, it.dtypes);
    it.next = Finish(d, "IteratorGetNext");
    d = TF_NewOperation(graph_, "SerializeIterator", (name + "_save").c_str());
    TF_AddInput(d, {it.resource, 0});
    it.save = Finish(d, "SerializeIterator");
    iterators_.emplace_back(name, it);
  }

  // `to` restored from `from`'s state as of the restore, in one step: the state never leaves the
  // session (the C API cannot feed a variant tensor back). For a state taken at one moment and
  // restored later or elsewhere, SaveCheckpoint and RestoreCheckpoint write it to a file.
  void AddRestore(const std::string& to, const std::string& from) {
    TF_OperationDescription* d =
        TF_NewOperation(graph_, "DeserializeIterator", (to + "_from_" + from).c_str());
    TF_AddInput(d, {Find(to).resource, 0});
    TF_AddInput(d, {Find(from).save, 0});
    restores_.emplace_back(to + "<" + from, Finish(d, "DeserializeIterator"));
  }

  // The output_types and output_shapes attrs of an op yielding elements of `dtypes` (shapes of
  // unknown rank: compatible with any), as iterators and unary dataset ops take them.
  static void SetElementSpec(TF_OperationDescription* d, const std::vector<TF_DataType>& dtypes) {
    const int n = static_cast<int>(dtypes.size());
    TF_SetAttrTypeList(d, "output_types", dtypes.data(), n);
    std::vector<const int64_t*> dims(n, nullptr);
    std::vector<int> num_dims(n, -1);
    TF_SetAttrShapeList(d, "output_shapes", dims.data(), num_dims.data(), n);
  }

  // Writes iterator `from`'s state as of now to the checkpoint `path` (a tensor bundle, as
  // tf.train.Checkpoint writes one), for RestoreCheckpoint later: in this graph, or in another
  // DatasetGraph's fresh session (a restarted process). The ops are added on first use.
  void SaveCheckpoint(const std::string& from, const std::string& path) {
    const std::string name = from + "_checkpoint_" + std::to_string(checkpoints_++);
    TF_OperationDescription* d = CheckpointOp("SaveV2", name, path);
    TF_Output state = {Find(from).save, 0};
    TF_AddInputList(d, &state, 1);
    RunTarget(Finish(d, "SaveV2"));
  }

  // Restores iterator `to` (made already) from the checkpoint SaveCheckpoint wrote to `path`.
  void RestoreCheckpoint(const std::string& to, const std::string& path) {
    const std::string name = to + "_restore_" + std::to_string(checkpoints_++);
    TF_OperationDescription* d = CheckpointOp("RestoreV2", name, path);
    const TF_DataType variant = TF_VARIANT;
    TF_SetAttrTypeList(d, "dtypes", &variant, 1);
    TF_Operation* state = Finish(d, "RestoreV2");
    d = TF_NewOperation(graph_, "DeserializeIterator", (name + "_deserialize").c_str());
    TF_AddInput(d, {Find(to).resource, 0});
    TF_AddInput(d, {state, 0});
    RunTarget(Finish(d, "DeserializeIterator"));
  }

  int64_t Cardinality() {
    TensorPtr t = RunOutput(cardinality_);
    return *static_cast<const int64_t*>(TF_TensorData(t.get()));
  }

  void MakeIterator(const std::string& name) { RunTarget(Find(name).make); }

  void Restore(const std::string& to, const std::string& from) {
    for (auto& r : restores_) {
      if (r.first == to + "<" + from) return RunTarget(r.second);
    }
    throw std::logic_error("no restore " + to + " <- " + from);
  }

  // The next element's components, or false at the end of the sequence (OutOfRange).
  bool GetNext(const std::string& name, std::vector<TensorPtr>* element) {
    try {
      Iterator& it = Find(name);
      *element = RunOutputs(it.next, static_cast<int>(it.dtypes.size()));
      return true;
    } catch (const TfError& e) {
      if (e.code == TF_OUT_OF_RANGE) return false;
      throw;
    }
  }

  // Component `component` (a scalar string) of up to `n` elements (fewer at the end).
  std::vector<std::string> NextStrings(const std::string& name, int n, int component = 0) {
    std::vector<std::string> out;
    std::vector<TensorPtr> element;
    while (static_cast<int>(out.size()) < n && GetNext(name, &element)) {
      out.push_back(ScalarString(element[component].get()));
    }
    return out;
  }

  // Component `component` (int64, any shape) of up to `n` elements (fewer at the end), each as its
  // values in row-major order.
  std::vector<std::vector<int64_t>> NextInt64s(const std::string& name, int n, int component = 0) {
    std::vector<std::vector<int64_t>> out;
    std::vector<TensorPtr> element;
    while (static_cast<int>(out.size()) < n && GetNext(name, &element)) {
      TF_Tensor* t = element[component].get();
      if (TF_TensorType(t) != TF_INT64) throw std::logic_error("component is not int64");
      const auto* v = static_cast<const int64_t*>(TF_TensorData(t));
      out.emplace_back(v, v + TF_TensorElementCount(t));
    }
    return out;
  }

 private:
  static constexpr char kDataset[] = "dataset";
  static constexpr char kCheckpointKey[] = "iterator";

  struct Dataset {
    TF_Operation* op = nullptr;
    std::vector<TF_DataType> dtypes;
  };

  struct Iterator {
    TF_Operation* resource = nullptr;
    TF_Operation* make = nullptr;
    TF_Operation* next = nullptr;
    TF_Operation* save = nullptr;
    std::vector<TF_DataType> dtypes;  // its dataset's
  };

  TF_Output Const(const std::string& name, TF_DataType dtype, TF_Tensor* value) {
    TF_OperationDescription* d = TF_NewOperation(graph_, "Const", name.c_str());
    Status status;
    TF_SetAttrTensor(d, "value", value, status.get());
    TF_DeleteTensor(value);
    status.Check("Const " + name);
    TF_SetAttrType(d, "dtype", dtype);
    return {Finish(d, "Const"), 0};
  }

  // A SaveV2 or RestoreV2 op of the one iterator state at `path`, its inputs (prefix, tensor
  // names, slices) added; the caller adds the rest and finishes it.
  TF_OperationDescription* CheckpointOp(const char* type, const std::string& name,
                                        const std::string& path) {
    TF_Output prefix = StringScalar(name + "_path", path);
    TF_Output names = StringVector(name + "_names", {kCheckpointKey});
    TF_Output slices = StringVector(name + "_slices", {""});
    TF_OperationDescription* d = TF_NewOperation(graph_, type, name.c_str());
    TF_AddInput(d, prefix);
    TF_AddInput(d, names);
    TF_AddInput(d, slices);
    return d;
  }

  TF_Operation* Finish(TF_OperationDescription* d, const std::string& what) {
    Status status;
    TF_Operation* op = TF_FinishOperation(d, status.get());
    status.Check(what);
    return op;
  }

  const Dataset& FindDataset(const std::string& name) {
    for (auto& ds : datasets_) {
      if (ds.first == name) return ds.second;
    }
    throw std::logic_error("no dataset " + name);
  }

  Iterator& Find(const std::string& name) {
    for (auto& it : iterators_) {
      if (it.first == name) return it.second;
    }
    throw std::logic_error("no iterator " + name);
  }

  TF_Session* Session() {
    if (session_ == nullptr) {
      Status status;
      TF_SessionOptions* options = TF_NewSessionOptions();
      session_ = TF_NewSession(graph_, options, status.get());
      TF_DeleteSessionOptions(options);
      status.Check("TF_NewSession");
    }
    return session_;
  }

  TensorPtr RunOutput(TF_Operation* op) { return std::move(RunOutputs(op, 1)[0]); }

  std::vector<TensorPtr> RunOutputs(TF_Operation* op, int n) {
    Status status;
    std::vector<TF_Output> outputs;
    for (int i = 0; i < n; ++i) outputs.push_back({op, i});
    std::vector<TF_Tensor*> values(n, nullptr);
    TF_SessionRun(Session(), nullptr, nullptr, nullptr, 0, outputs.data(), values.data(), n, nullptr,
                  0, nullptr, status.get());
    std::vector<TensorPtr> out;
    for (TF_Tensor* v : values) out.emplace_back(v, TF_DeleteTensor);
    status.Check(TF_OperationName(op));
    return out;
  }

  void RunTarget(TF_Operation* op) {
    Status status;
    TF_SessionRun(Session(), nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, &op, 1, nullptr,
                  status.get());
    status.Check(TF_OperationName(op));
  }

  TF_Graph* graph_;
  TF_Session* session_ = nullptr;
  TF_Operation* dataset_ = nullptr;
  TF_Operation* cardinality_ = nullptr;
  std::vector<std::pair<std::string, Dataset>> datasets_;
  std::vector<std::pair<std::string, Iterator>> iterators_;
  std::vector<std::pair<std::string, TF_Operation*>> restores_;
  int checkpoints_ = 0;  // checkpoint ops added (their names)
};

// Elements of int64 components, one vector per element (what the pass-through datasets' tests
// compare), and those of a RangeDataset(begin, end): {begin}, ..., {end - 1}.
using Int64Elements = std::vector<std::vector<int64_t>>;

inline Int64Elements RangeElements(int64_t begin, int64_t end) {
  Int64Elements out;
  for (int64_t i = begin; i < end; ++i) out.push_back({i});
  return out;
}

// The op tests' fixture: the op library loaded (once per process) before each test.
class OpLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { LoadOpLibrary(OpLibraryPath()); }
};

// `step` (a graph's Cardinality, a restore, ...) fails with a TfError whose message holds
// `text` and, unless `code` is TF_OK (any code), whose code is `code`.
template <typename Step>
void ExpectTfError(Step&& step, const std::string& text, TF_Code code = TF_OK) {
  try {
    step();
  } catch (const TfError& e) {
    if (code != TF_OK) EXPECT_EQ(e.code, code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    return;
  }
  ADD_FAILURE() << "no error; expected one saying \"" << text << "\"";
}

}  // namespace testing
}  // namespace tfg

#endif  // TF_GULP_TESTS_OPS_DATASET_OP_HARNESS_H_
