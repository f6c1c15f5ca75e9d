// Batched positional reads: many (file, offset, length, destination) reads
// handed to the kernel together, completed in any order.
//
// Two engines:
//   - io_uring (liburing): every read of a batch is queued in the submission
//     ring and submitted with one system call; the kernel runs them
//     concurrently (page-cache hits complete during the submit, misses go to
//     the block device together, so a cold random batch costs about one
//     device round trip per queue depth, not one per read). Optionally
//     (page_cache_first), reads are first copied out of the page cache with
//     preadv2(RWF_NOWAIT) while batches are found there;
//   - pread: one pread(2) loop per read, spread over a caller-supplied
//     scheduler when one is given. Portable, and what `auto` falls back to
//     when io_uring is unavailable (old kernels, seccomp filters that block
//     io_uring_setup, kernel.io_uring_disabled).
//
// Reads land directly in the caller's buffers; nothing is copied. A reader is
// not thread-safe (it owns one ring); make one per thread or iterator.
#ifndef TF_GULP_CC_IO_BATCH_READER_H_
#define TF_GULP_CC_IO_BATCH_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cc/util/parallel_for.h"
#include "cc/util/status.h"

namespace tfg {

enum class IoEngine { kAuto, kIoUring, kPread };

// Every engine, in the order options list them. Their names (IoEngineName)
// are the one list of io_engine values: ParseIoEngine accepts them and the
// FFRecordDataset op registers them as its attr's allowed values.
inline constexpr IoEngine kIoEngines[] = {IoEngine::kAuto, IoEngine::kIoUring,
                                          IoEngine::kPread};

// The most reads one reader keeps in flight (BatchReaderOptions::queue_depth):
// an io_uring's submission ring is at most this deep.
inline constexpr int kMaxQueueDepth = 4096;

// One of IoEngineName's names ("auto", "io_uring" or "pread").
Status ParseIoEngine(const std::string& name, IoEngine* engine);
const char* IoEngineName(IoEngine engine);

// True when this process can create an io_uring (checked once, cached).
bool IoUringAvailable();

struct ReadRequest {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
  char* dst = nullptr;  // room for `length` bytes
  // false: reaching end of file before `length` bytes is data loss.
  // true: it ends the read successfully (O_DIRECT reads of a block-rounded
  // range whose end lies past the end of the file).
  bool stop_at_eof = false;
  // false for O_DIRECT descriptors: their reads never come from the page
  // cache, so the io_uring engine does not try a page-cache copy first.
  bool buffered = true;
};

struct BatchReaderOptions {
  IoEngine engine = IoEngine::kAuto;
  // Most reads in flight at once (io_uring: also the ring size, rounded up to
  // a power of two by the kernel). A batch larger than this is streamed
  // through: a new read is queued as soon as one completes.
  int queue_depth = 64;
  // io_uring engine: while recent batches were found in the page cache, copy
  // each read out of it first with preadv2(RWF_NOWAIT) (which never waits for
  // the device) and queue only what is missing. A page-cache hit then costs a
  // plain pread instead of a ring round trip; once batches miss the cache,
  // reads go straight to the ring (retrying the cache now and then). Off by
  // default: on Linux 6.18 a warm 4 KiB read cost more CPU this way than
  // through the ring (batches of 64 and 256; docs/benchmarks.md, "Where
  // FFRecordDataset's CPU goes"), though kernels whose ring hands buffered
  // reads to worker threads may differ.
  bool page_cache_first = false;
};

// Where the pread engine may run reads in parallel; ignored by io_uring.
struct ReadParallelism {
  const Scheduler* scheduler = nullptr;
  int max_parallelism = 1;
};

class BatchReader {
 public:
  // Called once per request when it has completed, from the thread calling
  // Read (io_uring) or from the scheduler's threads (pread with a scheduler,
  // possibly several at once). `bytes_read` is `length` unless the request
  // had stop_at_eof and met the end of the file.
  using DoneCallback =
      std::function<void(size_t index, const Status& status, uint64_t bytes_read)>;

  static Status Create(const BatchReaderOptions& options,
                       std::unique_ptr<BatchReader>* reader);
  virtual ~BatchReader() = default;

  virtual IoEngine engine() const = 0;
  int queue_depth() const { return queue_depth_; }

  // Reads every request in full (retrying short reads and EINTR/EAGAIN) and
  // reports each through `done`. Returns when all have completed.
  virtual void Read(const ReadRequest* requests, size_t n, const DoneCallback& done,
                    const ReadParallelism& parallelism = {}) = 0;

 protected:
  explicit BatchReader(int queue_depth) : queue_depth_(queue_depth) {}
  const int queue_depth_;
};

// The pread loop for one request: exactly `length` bytes (or up to end of
// file with stop_at_eof). Shared by the pread engine and the io_uring
// engine's last-resort path.
Status PreadFully(const ReadRequest& request, uint64_t* bytes_read);

}  // namespace tfg

#endif  // TF_GULP_CC_IO_BATCH_READER_H_
