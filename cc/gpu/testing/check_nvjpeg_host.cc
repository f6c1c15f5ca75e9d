// The dry run's nvJPEG: the fake (fake_nvjpeg.h), which decodes real JPEG
// bytes with TurboJPEG into the host stand-in's "device" memory.
#include "cc/gpu/testing/extra_phases.h"
#include "cc/gpu/testing/fake_nvjpeg.h"

namespace tfg {
namespace gpu {
namespace testing {

Status LoadCheckNvjpeg(const PhaseArgs&, NvjpegApi* api, std::string* from) {
  static FakeNvjpeg* fake = new FakeNvjpeg();  // for the process: the table points into it
  *api = fake->api();
  *from = "fake nvJPEG (dry run)";
  return Status::Ok();
}

}  // namespace testing
}  // namespace gpu
}  // namespace tfg
