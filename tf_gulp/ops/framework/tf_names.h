// The TensorFlow names the kernel files of tf_gulp/ops use, declared once in
// namespace tf_gulp instead of a list of using-declarations atop each file:
// kernels and their tensors, and tf.data's dataset and iterator classes.
// Names one file alone uses stay in that file.
#ifndef TF_GULP_OPS_FRAMEWORK_TF_NAMES_H_
#define TF_GULP_OPS_FRAMEWORK_TF_NAMES_H_

#include "tensorflow/core/framework/dataset.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/partial_tensor_shape.h"
#include "tensorflow/core/framework/tensor.h"
#include "tensorflow/core/framework/tensor_shape.h"

namespace tf_gulp {

// Kernels.
using ::tensorflow::AsyncOpKernel;
using ::tensorflow::DataTypeVector;
using ::tensorflow::Node;
using ::tensorflow::OpKernel;
using ::tensorflow::OpKernelConstruction;
using ::tensorflow::OpKernelContext;
using ::tensorflow::PartialTensorShape;
using ::tensorflow::Tensor;
using ::tensorflow::TensorShape;
using ::tensorflow::tstring;

// tf.data.
using ::tensorflow::data::DatasetBase;
using ::tensorflow::data::DatasetOpKernel;
using ::tensorflow::data::IteratorContext;
using ::tensorflow::data::IteratorStateReader;
using ::tensorflow::data::IteratorStateWriter;
using ::tensorflow::data::SerializationContext;
using ::tensorflow::data::UnaryDatasetOpKernel;

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_FRAMEWORK_TF_NAMES_H_
