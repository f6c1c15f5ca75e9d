#include "cc/gpu/proof/proof_decode.h"

#include "cc/gpu/gpu_runtime.h"
#include "cc/gpu/nvdec_pool.h"

namespace tfg {
namespace gpu {
namespace proof {

RuntimeReport ProbeRuntime() {
  GpuRuntime runtime;
  const Status status = LoadGpuRuntime(kKernelsMinDriverVersion, &runtime);
  return {GpuPathName(runtime.path), runtime.driver_version, status.message()};
}

struct Decoder::Impl {
  GpuRuntime runtime;
  std::unique_ptr<NvdecPool> pool;
};

Status Decoder::Create(void* context, int sessions, int surfaces, int max_size,
                       std::unique_ptr<Decoder>* decoder) {
  std::unique_ptr<Decoder> d(new Decoder);
  d->impl_.reset(new Impl);
  TFG_RETURN_IF_ERROR(LoadGpuRuntime(kKernelsMinDriverVersion, &d->impl_->runtime));
  NvdecPoolOptions options;
  options.sessions = sessions;
  options.surfaces = surfaces;
  options.max_width = options.max_height = max_size;
  TFG_RETURN_IF_ERROR(NvdecPool::Create(&d->impl_->runtime.cuda, &d->impl_->runtime.nvdec,
                                        static_cast<CUcontext>(context), options,
                                        &d->impl_->pool));
  *decoder = std::move(d);
  return Status::Ok();
}

Decoder::~Decoder() = default;

int Decoder::sessions() const { return impl_->pool->sessions(); }

Status Decoder::Decode(const uint8_t* data, size_t size, void* stream, const char* what,
                       NvdecPicture* picture) {
  return impl_->pool->Decode(data, size, static_cast<CUstream>(stream), what, picture);
}

Status Decoder::Release(const NvdecPicture& picture, void* stream) {
  return impl_->pool->Release(picture, static_cast<CUstream>(stream));
}

}  // namespace proof
}  // namespace gpu
}  // namespace tfg
