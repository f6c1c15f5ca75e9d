// Prints, as one JSON line, which GPU path this machine can run and why
// (cc/gpu/gpu_runtime.h). tests/test_gpu_runtime.py runs it with stand-in
// driver libraries on LD_LIBRARY_PATH; tools/gpu_device_check.sh builds it too.
//   gpu_runtime_probe [--min-driver VERSION]
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cc/gpu/gpu_runtime.h"
#include "cc/util/json_text.h"

int main(int argc, char** argv) {
  int min_driver = tfg::gpu::kKernelsMinDriverVersion;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--min-driver") == 0) min_driver = std::atoi(argv[i + 1]);
  }
  tfg::gpu::GpuRuntime runtime;
  const tfg::Status status = tfg::gpu::LoadGpuRuntime(min_driver, &runtime);
  std::cout << "{\"path\": " << tfg::JsonQuoted(tfg::gpu::GpuPathName(runtime.path))
            << ", \"driver_version\": " << runtime.driver_version
            << ", \"ok\": " << (status.ok() ? "true" : "false")
            << ", \"message\": " << tfg::JsonQuoted(status.message()) << "}" << std::endl;
  return 0;
}
