#include "cc/gpu/decode_hevc_warped_body.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "cc/codec/hevc_coded_size.h"

namespace tfg {
namespace gpu {

void LargestCodedSize(const std::vector<BatchPicture>& pictures, std::vector<Status>* statuses,
                      int* width, int* height) {
  statuses->resize(pictures.size());
  *width = *height = 0;
  for (size_t i = 0; i < pictures.size(); ++i) {
    int w = 0, h = 0;
    (*statuses)[i] = codec::HevcCodedSize(pictures[i].data, pictures[i].size, pictures[i].what,
                                          &w, &h);
    *width = std::max(*width, w);
    *height = std::max(*height, h);
  }
}

namespace {

// What the batch's tasks share.
struct Run {
  NvdecRgbDecoder* decoder = nullptr;
  std::shared_ptr<WarpedBatch> batch;
  BatchDone done;
  std::vector<Status> statuses;  // picture i's, written by the one task that takes it
  std::atomic<int64_t> next{0};
  std::atomic<int> tasks_left{0};
};

Status OnePicture(Run& run, int64_t i) {
  const WarpedBatch& b = *run.batch;
  const BatchPicture& p = b.pictures[i];
  bool planned = false;
  const Status decoded = DecodeWarped(
      run.decoder, p.data, p.size, b.stream, p.what.c_str(),
      [&](int width, int height, RegionWarp* warp, CUdeviceptr* dst) {
        planned = true;
        return b.plan(i, width, height, warp, dst);
      },
      b.colors.empty() ? nullptr : &b.colors[i]);
  if (!planned && (decoded.code() == StatusCode::kOutOfRange ||
                   decoded.code() == StatusCode::kUnavailable)) {
    return b.on_host ? b.on_host(i, decoded) : decoded;
  }
  return decoded;
}

// One task: pictures taken in batch order until none is left.
void Task(const std::shared_ptr<Run>& run) {
  const int64_t n = static_cast<int64_t>(run->batch->pictures.size());
  for (int64_t i = run->next++; i < n; i = run->next++) {
    if (run->statuses[i].ok()) run->statuses[i] = OnePicture(*run, i);
  }
  if (--run->tasks_left == 0) {
    BatchDone done = std::move(run->done);
    done(std::move(run->statuses));
  }
}

}  // namespace

void DecodeWarpedBatch(NvdecRgbDecoder* decoder, TaskThreads* threads,
                       std::shared_ptr<WarpedBatch> batch, BatchDone done) {
  auto run = std::make_shared<Run>();
  run->decoder = decoder;
  run->batch = std::move(batch);
  run->done = std::move(done);
  int max_w = 0, max_h = 0;
  LargestCodedSize(run->batch->pictures, &run->statuses, &max_w, &max_h);
  const size_t colors = run->batch->colors.size();
  if (colors != 0 && colors != run->batch->pictures.size()) {
    for (Status& s : run->statuses) {
      s = InvalidArgumentError(colors, " colour draws for ", run->batch->pictures.size(),
                               " pictures");
    }
  }
  decoder->RaiseMaxSize(max_w, max_h);
  const int64_t n = static_cast<int64_t>(run->batch->pictures.size());
  const int tasks = static_cast<int>(
      std::min<int64_t>(n, std::max(1, run->batch->in_flight)));
  if (tasks == 0) {
    threads->Schedule([run] { run->done(std::move(run->statuses)); });
    return;
  }
  run->tasks_left = tasks;
  for (int k = 0; k < tasks; ++k) threads->Schedule([run] { Task(run); });
}

}  // namespace gpu
}  // namespace tfg
