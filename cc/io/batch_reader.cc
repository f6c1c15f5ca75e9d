#include "cc/io/batch_reader.h"

#include <liburing.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "cc/util/parse_choice.h"

namespace tfg {
namespace {

// One read(2)/io_uring read moves at most this much; longer requests continue
// where the previous piece stopped (the SQE length field is 32 bits, and
// Linux caps a single read near 2 GiB anyway).
constexpr uint64_t kMaxPiece = uint64_t{1} << 30;

Status EndOfFileError(const ReadRequest& r, uint64_t got) {
  return DataLossError("unexpected end of file at offset ", r.offset + got, " reading ",
                       r.length, " bytes at offset ", r.offset, " (got ", got, ")");
}

Status ReadError(const ReadRequest& r, uint64_t got, int err) {
  return DataLossError("read of ", r.length, " bytes at offset ", r.offset,
                       " failed after ", got, " bytes: ", std::strerror(err));
}

class PreadReader : public BatchReader {
 public:
  explicit PreadReader(int queue_depth) : BatchReader(queue_depth) {}

  IoEngine engine() const override { return IoEngine::kPread; }

  void Read(const ReadRequest* requests, size_t n, const DoneCallback& done,
            const ReadParallelism& parallelism) override {
    auto one = [&](int64_t i) {
      uint64_t got = 0;
      Status s = PreadFully(requests[i], &got);
      done(static_cast<size_t>(i), s, got);
    };
    const int threads = std::min(parallelism.max_parallelism, queue_depth_);
    if (parallelism.scheduler != nullptr && *parallelism.scheduler && threads > 1 && n > 1) {
      ParallelFor(static_cast<int64_t>(n), threads, *parallelism.scheduler, one);
    } else {
      for (size_t i = 0; i < n; ++i) one(static_cast<int64_t>(i));
    }
  }
};

class IoUringReader : public BatchReader {
 public:
  IoUringReader(int queue_depth, bool page_cache_first)
      : BatchReader(queue_depth), page_cache_first_(page_cache_first) {}
  ~IoUringReader() override {
    if (initialized_) io_uring_queue_exit(&ring_);
  }

  // Returns io_uring_queue_init's result (0 or -errno).
  int Init() {
    // COOP_TASKRUN: completions are processed when we enter the kernel anyway,
    // without interrupting the thread (kernel 5.19+; retried without it).
    const unsigned entries = static_cast<unsigned>(queue_depth_);
    int ret = io_uring_queue_init(entries, &ring_, IORING_SETUP_COOP_TASKRUN);
    if (ret == -EINVAL) ret = io_uring_queue_init(entries, &ring_, 0);
    initialized_ = ret == 0;
    return ret;
  }

  IoEngine engine() const override { return IoEngine::kIoUring; }

  void Read(const ReadRequest* requests, size_t n, const DoneCallback& done,
            const ReadParallelism& parallelism) override;

 private:
  // Completes every request that is not finished yet with pread, after the
  // ring failed in a way retrying cannot fix.
  void FinishWithPread(const ReadRequest* requests, size_t n, const DoneCallback& done);
  // Copies what the page cache holds of each buffered request (RWF_NOWAIT);
  // completes the requests it satisfied. Returns how many it satisfied.
  size_t CopyFromPageCache(const ReadRequest* requests, size_t n, const DoneCallback& done);

  io_uring ring_;
  bool initialized_ = false;
  // After a submission error the ring may hold entries that must never reach
  // the kernel: from then on every read goes through pread.
  bool broken_ = false;
  bool page_cache_first_;
  bool nowait_supported_ = true;
  // Batches to go before the page cache is tried again after a miss.
  int page_cache_skip_ = 0;
  // Per Read call; kept to reuse their memory.
  std::vector<uint64_t> progress_;   // bytes read so far, per request
  std::vector<uint8_t> state_;       // 0 waiting, 1 in the kernel, 2 finished
  std::vector<size_t> again_;        // started requests that need another piece
  std::vector<std::pair<size_t, Status>> completed_;
};

void IoUringReader::FinishWithPread(const ReadRequest* requests, size_t n,
                                    const DoneCallback& done) {
  for (size_t i = 0; i < n; ++i) {
    if (state_[i] == 2) continue;
    ReadRequest rest = requests[i];
    rest.offset += progress_[i];
    rest.dst += progress_[i];
    rest.length -= progress_[i];
    uint64_t got = 0;
    Status s = PreadFully(rest, &got);
    state_[i] = 2;
    done(i, s, progress_[i] + got);
  }
}

size_t IoUringReader::CopyFromPageCache(const ReadRequest* requests, size_t n,
                                        const DoneCallback& done) {
  size_t satisfied = 0;
  for (size_t i = 0; i < n; ++i) {
    const ReadRequest& r = requests[i];
    if (!r.buffered || r.length == 0) continue;
    iovec iov{r.dst, static_cast<size_t>(std::min(r.length, kMaxPiece))};
    const ssize_t got = ::preadv2(r.fd, &iov, 1, static_cast<off_t>(r.offset), RWF_NOWAIT);
    if (got < 0) {
      if (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS) {
        nowait_supported_ = false;  // e.g. a file system without RWF_NOWAIT
        return satisfied;
      }
      continue;  // EAGAIN (not cached) or a real error: the ring reads it and reports it
    }
    progress_[i] = static_cast<uint64_t>(got);  // 0 or partial: the ring does the rest
    if (progress_[i] == r.length) {
      state_[i] = 2;
      done(i, Status::Ok(), progress_[i]);
      ++satisfied;
    }
  }
  return satisfied;
}

void IoUringReader::Read(const ReadRequest* requests, size_t n, const DoneCallback& done,
                         const ReadParallelism&) {
  progress_.assign(n, 0);
  state_.assign(n, 0);
  again_.clear();
  completed_.clear();
  if (broken_) {
    FinishWithPread(requests, n, done);
    return;
  }
  size_t finished = 0;
  if (page_cache_first_ && nowait_supported_ && n > 0) {
    if (page_cache_skip_ > 0) {
      --page_cache_skip_;
    } else {
      finished = CopyFromPageCache(requests, n, done);
      // Mostly misses: go straight to the ring for a while.
      if (finished * 2 < n) page_cache_skip_ = 8;
    }
  }
  size_t next_new = 0;   // first request never queued
  int in_kernel = 0;     // queued in the ring (submitted or not), not yet reaped
  while (finished < n) {
    // 1. Fill the ring: continuations first, then new requests.
    int queued = 0;
    while (in_kernel < queue_depth_) {
      size_t i;
      if (!again_.empty()) {
        i = again_.back();
        again_.pop_back();
      } else if (next_new < n) {
        i = next_new++;
        if (state_[i] == 2) continue;  // copied from the page cache
        if (requests[i].length == 0) {
          state_[i] = 2;
          completed_.emplace_back(i, Status::Ok());
          continue;
        }
      } else {
        break;
      }
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) {  // ring full of unsubmitted entries: submit first
        again_.push_back(i);
        break;
      }
      const ReadRequest& r = requests[i];
      const uint64_t at = progress_[i];
      const unsigned len = static_cast<unsigned>(std::min(r.length - at, kMaxPiece));
      io_uring_prep_read(sqe, r.fd, r.dst + at, len, r.offset + at);
      io_uring_sqe_set_data64(sqe, i);
      state_[i] = 1;
      ++in_kernel;
      ++queued;
    }
    // 2. Hand the queued reads to the kernel, without waiting.
    while (io_uring_sq_ready(&ring_) > 0) {
      const int ret = io_uring_submit(&ring_);
      if (ret >= 0 || ret == -EINTR) continue;
      if (ret == -EAGAIN || ret == -EBUSY) {
        // Kernel resources or the completion queue are full: drain some.
        if (in_kernel > static_cast<int>(io_uring_sq_ready(&ring_))) break;
        std::this_thread::yield();
        continue;
      }
      // The ring is unusable. Wait for what the kernel already has (it writes
      // into the caller's buffers), then finish everything with pread.
      broken_ = true;
      int waiting = in_kernel - static_cast<int>(io_uring_sq_ready(&ring_));
      while (waiting > 0) {
        io_uring_cqe* cqe = nullptr;
        if (io_uring_wait_cqe(&ring_, &cqe) != 0) break;
        const size_t i = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
        if (cqe->res > 0) progress_[i] += static_cast<uint64_t>(cqe->res);
        io_uring_cqe_seen(&ring_, cqe);
        --waiting;
      }
      for (auto& c : completed_) done(c.first, c.second, progress_[c.first]);
      FinishWithPread(requests, n, done);
      return;
    }
    // 3. Report what completed, while the kernel works on the rest.
    for (auto& c : completed_) {
      done(c.first, c.second, progress_[c.first]);
      ++finished;
    }
    completed_.clear();
    if (finished == n) break;
    if (in_kernel == 0) continue;
    // 4. Wait for at least one completion, then take every one available.
    io_uring_cqe* cqe = nullptr;
    int ret = io_uring_wait_cqe(&ring_, &cqe);
    if (ret == -EINTR || ret == -EAGAIN) continue;
    if (ret != 0) {
      // Cannot wait: nothing more can come from this ring in a safe way.
      broken_ = true;
      FinishWithPread(requests, n, done);
      return;
    }
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      --in_kernel;
      const size_t i = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
      const ReadRequest& r = requests[i];
      const int res = cqe->res;
      if (res < 0) {
        if (res == -EINTR || res == -EAGAIN) {
          again_.push_back(i);
        } else {
          state_[i] = 2;
          completed_.emplace_back(i, ReadError(r, progress_[i], -res));
        }
      } else if (res == 0) {
        state_[i] = 2;
        completed_.emplace_back(
            i, r.stop_at_eof ? Status::Ok() : EndOfFileError(r, progress_[i]));
      } else {
        progress_[i] += static_cast<uint64_t>(res);
        if (progress_[i] >= r.length) {
          state_[i] = 2;
          completed_.emplace_back(i, Status::Ok());
        } else {
          again_.push_back(i);  // short read: continue where it stopped
        }
      }
    }
    io_uring_cq_advance(&ring_, seen);
  }
}

bool ProbeIoUring() {
  io_uring ring;
  if (io_uring_queue_init(2, &ring, 0) != 0) return false;
  io_uring_queue_exit(&ring);
  return true;
}

}  // namespace

Status ParseIoEngine(const std::string& name, IoEngine* engine) {
  std::vector<std::pair<const char*, IoEngine>> choices;
  for (IoEngine e : kIoEngines) choices.emplace_back(IoEngineName(e), e);
  return ParseChoice("io_engine", name, choices, engine);
}

const char* IoEngineName(IoEngine engine) {
  switch (engine) {
    case IoEngine::kAuto:
      return "auto";
    case IoEngine::kIoUring:
      return "io_uring";
    case IoEngine::kPread:
      return "pread";
  }
  return "?";
}

bool IoUringAvailable() {
  static const bool available = ProbeIoUring();
  return available;
}

Status PreadFully(const ReadRequest& r, uint64_t* bytes_read) {
  uint64_t got = 0;
  while (got < r.length) {
    const size_t len = static_cast<size_t>(std::min(r.length - got, kMaxPiece));
    const ssize_t ret = ::pread(r.fd, r.dst + got, len, static_cast<off_t>(r.offset + got));
    if (ret < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      *bytes_read = got;
      return ReadError(r, got, errno);
    }
    if (ret == 0) {
      *bytes_read = got;
      return r.stop_at_eof ? Status::Ok() : EndOfFileError(r, got);
    }
    got += static_cast<uint64_t>(ret);
  }
  *bytes_read = got;
  return Status::Ok();
}

Status BatchReader::Create(const BatchReaderOptions& options,
                           std::unique_ptr<BatchReader>* reader) {
  if (options.queue_depth < 1 || options.queue_depth > kMaxQueueDepth) {
    return InvalidArgumentError("queue depth must be in [1, ", kMaxQueueDepth, "], got ",
                                options.queue_depth);
  }
  if (options.engine == IoEngine::kPread ||
      (options.engine == IoEngine::kAuto && !IoUringAvailable())) {
    reader->reset(new PreadReader(options.queue_depth));
    return Status::Ok();
  }
  auto uring = std::make_unique<IoUringReader>(options.queue_depth, options.page_cache_first);
  const int ret = uring->Init();
  if (ret != 0) {
    if (options.engine == IoEngine::kAuto) {
      reader->reset(new PreadReader(options.queue_depth));
      return Status::Ok();
    }
    return InvalidArgumentError("io_engine 'io_uring' is not available here: io_uring_setup: ",
                                std::strerror(-ret), " (use 'auto' or 'pread')");
  }
  *reader = std::move(uring);
  return Status::Ok();
}

}  // namespace tfg
