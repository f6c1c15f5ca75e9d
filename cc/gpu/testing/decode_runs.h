// The device check's timed decode runs (throughput and profile phases): a set
// of HEVC pictures decoded by `sessions` threads through NvdecRgbDecoder (the
// ops' path), decode alone or decode + decode_hevc_warped's fused warp, with
// the pool's counters (NvdecPool::Stats) read around the clock.
//
// What runs before the clock (why the first GPU run misled itself): the
// decoders' maximum is the set's largest *coded* size (the SPS's, not a
// sample entry's or an index's displayed size), and every session decodes
// one picture of every coded size of the set, so no create or destroy is left
// for the timed loop; the runs report the counts inside it to prove it.
//
// On the dry run there is no NVDEC: the same runs go to the fake driver
// (testing/fake_nvdec.h) with fake pictures of each sample's coded size, so
// the counts are the pool's real ones and the times mean nothing.
#ifndef TF_GULP_CC_GPU_TESTING_DECODE_RUNS_H_
#define TF_GULP_CC_GPU_TESTING_DECODE_RUNS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cc/gpu/nvdec_api.h"
#include "cc/gpu/nvdec_pool.h"
#include "cc/gpu/testing/check_driver.h"
#include "cc/util/status.h"

namespace tfg {
namespace gpu {
namespace testing {

class FakeNvdec;
}  // namespace testing
class NvdecRgbDecoder;
namespace testing {

// A picture's coded size (its SPS's pic_width/height_in_luma_samples).
struct HevcSize {
  int coded_width = 0, coded_height = 0;
};

struct RunSample {
  std::string set, file;
  int width = 0, height = 0;  // displayed, as the index lists it
  HevcSize size;              // from the picture's SPS
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> fake_bytes;  // the fake driver's picture of the same coded size
};

// Reads `dir`/index.txt ("file width height": set `default_set`) or, with
// `with_set_column`, "set file width height" lines; every picture's coded
// size from its SPS. Errors name the file.
Status LoadRunSamples(const std::string& dir, bool with_set_column, const std::string& default_set,
                      std::vector<RunSample>* out);

// Pictures of one set, in index order.
std::vector<const RunSample*> SetOf(const std::vector<RunSample>& all, const std::string& set);

// The fake's second CUDA context (the dry run's model of a second context on
// the same GPU): its streams are the handles from kFakeSecondContextStreams up.
const CUcontext kFakeSecondContext = reinterpret_cast<CUcontext>(0xC1);
constexpr intptr_t kFakeSecondContextStreams = 0x7000;

// What decodes: the real driver (NVDEC) or the dry run's fake.
class DecodeSource {
 public:
  // The real driver: `context` is the device check's, streams from `d`.
  static std::unique_ptr<DecodeSource> Real(const CheckDriver& d, CUcontext context);
  // The fake driver with `engines` NVDEC engines (one per process at a time).
  static std::unique_ptr<DecodeSource> Fake(int engines);
  ~DecodeSource();

  bool fake() const { return fake_ != nullptr; }
  std::string name() const { return NameOf(fake()); }
  static std::string NameOf(bool fake);
  // The fake driver (the dry run's), or nullptr.
  FakeNvdec* fake_driver() const { return fake_.get(); }
  const CudaApi& cuda() const { return cuda_; }
  const NvdecApi& nvdec() const { return nvdec_; }
  CUcontext context() const { return context_; }
  const void* fatbin() const { return fatbin_; }
  size_t fatbin_size() const { return fatbin_size_; }
  bool can_warp() const { return !fake(); }  // the fake's surfaces are no memory
  // Makes the source's context current on the calling thread (a worker
  // thread's driver calls outside the pool need one; the fake needs none).
  void MakeCurrent() const;
  Status MakeStream(CUstream* stream) const;
  void DestroyStream(CUstream stream) const;
  const std::vector<uint8_t>& BytesOf(const RunSample& s) const {
    return fake() ? s.fake_bytes : s.bytes;
  }
  // The fake's broken rules and leaks so far (empty on the real driver).
  std::vector<std::string> problems() const;

 private:
  DecodeSource() = default;
  const CheckDriver* d_ = nullptr;
  std::unique_ptr<FakeNvdec> fake_;
  CudaApi cuda_;
  NvdecApi nvdec_;
  CUcontext context_ = nullptr;
  const void* fatbin_ = nullptr;
  size_t fatbin_size_ = 0;
  mutable int next_stream_ = 0;
};

struct TimedRun {
  int images = 0;
  double images_per_s = 0;
  double second_half_images_per_s = 0;  // the run's second half alone
  NvdecPoolStats warmup, timed, second_half;
};

// `images` pictures cycling over `set`, over `sessions` threads (one stream
// each), decode alone or decode + the fused warp into `out_size`² float
// outputs at `d_out` (256 slots; `warp` needs source.can_warp()).
Status TimedDecodeRun(const DecodeSource& source, const std::vector<const RunSample*>& set,
                      int sessions, int images, bool warp, CUdeviceptr d_out, int out_size,
                      TimedRun* run);

// One picture through `decoder` as the ops run it: decode alone (released at
// once), or decode + the fused warp of the whole displayed picture scaled to
// `out_size`² float RGB at `dst`.
Status DecodeOne(NvdecRgbDecoder& decoder, const DecodeSource& source, const RunSample& s,
                 CUstream stream, bool warp, CUdeviceptr dst, int out_size);

// {"create": {"calls": n, "ms": t}, ...} for every NvdecPoolCall.
std::string StatsJson(const NvdecPoolStats& stats);

}  // namespace testing
}  // namespace gpu
}  // namespace tfg

#endif  // TF_GULP_CC_GPU_TESTING_DECODE_RUNS_H_
