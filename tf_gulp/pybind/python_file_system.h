// A cc/io FileSystem whose files are read through a Python object, so the
// TensorFlow-free core in tf_gulp._core reads gs://, s3://, ram://... paths
// the way the op library does through tensorflow::Env.
//
// _core links no TensorFlow: tf_gulp/_files.py hands it an object over
// tf.io.gfile (set_remote_file_system) the first time a Python reader meets a
// remote path, and every non-local path of the core (cc/io/file_system.h) is
// then served by it. The object's methods:
//   stat(path) -> (is_dir: bool, size: int, mtime_ns: int), FileNotFoundError
//                 when the path does not exist;
//   listdir(path) -> [names];
//   read(path, offset, size) -> bytes (fewer only at the end of the file).
// Each call takes the GIL; the core's callers release it while they run.
#ifndef TF_GULP_PYBIND_PYTHON_FILE_SYSTEM_H_
#define TF_GULP_PYBIND_PYTHON_FILE_SYSTEM_H_

#include <pybind11/pybind11.h>

namespace tf_gulp {
namespace pybind {

// Installs `impl` as the core's file system for every non-local path
// (process-wide; a later call replaces it).
void SetPythonRemoteFileSystem(pybind11::object impl);

}  // namespace pybind
}  // namespace tf_gulp

#endif  // TF_GULP_PYBIND_PYTHON_FILE_SYSTEM_H_
