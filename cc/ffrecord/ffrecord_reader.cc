#include "cc/ffrecord/ffrecord_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <sstream>

#include "cc/io/file_system.h"
#include "cc/util/crc32.h"

namespace tfg {
namespace ffrecord {
namespace {

// A batch of at least this many bytes is read in slices on several threads
// when the caller offers a scheduler (below it, handing work to another
// thread costs more than it saves).
constexpr uint64_t kParallelMinBytes = uint64_t{128} << 10;
// At most this many slices (and io_urings) per context.
constexpr int kMaxSlices = 8;

std::string Hex(uint32_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return out.str();
}

}  // namespace

Status ReadContext::Create(const BatchReaderOptions& options,
                           std::unique_ptr<ReadContext>* context) {
  std::unique_ptr<ReadContext> c(new ReadContext());
  c->options_ = options;
  c->io_.emplace_back();
  TFG_RETURN_IF_ERROR(BatchReader::Create(options, &c->io_[0]));
  *context = std::move(c);
  return Status::Ok();
}

BatchReader* ReadContext::io(size_t slice) {
  while (io_.size() <= slice) {
    std::unique_ptr<BatchReader> reader;
    BatchReaderOptions options = options_;
    options.engine = io_[0]->engine();  // the same engine as the first, whatever auto chose
    if (!BatchReader::Create(options, &reader).ok()) return nullptr;
    io_.push_back(std::move(reader));
  }
  return io_[slice].get();
}

Status FFRecordReader::Open(const std::vector<std::string>& files, const ReaderOptions& options,
                            std::unique_ptr<FFRecordReader>* reader) {
  if (files.empty()) return InvalidArgumentError("no FFRecord files to read");
  std::unique_ptr<FFRecordReader> r(new FFRecordReader());
  r->options_ = options;
  for (const std::string& path : files) {
    std::unique_ptr<RandomAccessFile> file;
    TFG_RETURN_IF_ERROR(RandomAccessFile::Open(path, &file));
    FileIndex index;
    bool legacy = false;
    TFG_RETURN_IF_ERROR(ReadFileIndex(*file, options.check_data, &index, &legacy));
    if (legacy && options.check_data) {
      r->warnings_.push_back(path +
                             ": old FFRecord file without a metadata checksum (meta_crc == 0): "
                             "its header cannot be verified; rewrite it to get one");
    }
    int advice = POSIX_FADV_NORMAL;
    if (options.access == AccessPattern::kRandom) advice = POSIX_FADV_RANDOM;
    if (options.access == AccessPattern::kSequential) advice = POSIX_FADV_SEQUENTIAL;
    if (advice != POSIX_FADV_NORMAL && file->is_local()) {
      ::posix_fadvise(file->fd(), 0, 0, advice);
    }
    if (!file->is_local()) r->remote_fs_ = &file->file_system();
    int direct_fd = -1;
    if (options.direct_io && !file->is_local()) {
      return InvalidArgumentError(path, ": direct_io (O_DIRECT) applies to local files only; "
                                        "read files of other file systems with direct_io=False");
    }
    if (options.direct_io) {
      // LocalPath: a file:// path names a local file.
      const std::string local_path = LocalPath(path);
      direct_fd = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
      if (direct_fd < 0) {
        const int err = errno;
        return InvalidArgumentError(path, ": cannot open with O_DIRECT (direct_io): ",
                                    std::strerror(err),
                                    err == EINVAL ? " (the file system does not support it)" : "");
      }
    }
    r->starts_.push_back(r->starts_.back() + index.num_records);
    r->indexes_.push_back(std::move(index));
    r->files_.push_back(std::move(file));
    r->direct_fds_.push_back(direct_fd);
  }
  *reader = std::move(r);
  return Status::Ok();
}

FFRecordReader::~FFRecordReader() { Close(); }

void FFRecordReader::Close() {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  files_.clear();
  for (int& fd : direct_fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

bool FFRecordReader::closed() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return closed_;
}

Status FFRecordReader::FindRecord(int64_t index, RecordLocation* location) const {
  if (index < 0 || index >= num_records()) {
    return OutOfRangeError("record index ", index, " is out of range: the dataset has ",
                           num_records(), " records");
  }
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), index);
  const int file = static_cast<int>(it - starts_.begin()) - 1;
  location->index = index;
  location->file = file;
  location->local_index = index - starts_[file];
  return Status::Ok();
}

void FFRecordReader::FillLocation(RecordLocation* location) const {
  const FileIndex& f = indexes_[location->file];
  const int64_t local = location->local_index;
  location->offset = f.offsets[local];
  location->length = f.offsets[local + 1] - f.offsets[local];
  location->checksum = f.checksums[local];
}

Status FFRecordReader::Locate(int64_t index, RecordLocation* location) const {
  TFG_RETURN_IF_ERROR(FindRecord(index, location));
  FillLocation(location);
  return Status::Ok();
}

Status FFRecordReader::Locate(const int64_t* indices, size_t n,
                              RecordLocation* locations) const {
  // First every entry's cache lines are asked for, then they are read: the
  // misses overlap instead of stalling one after another.
  for (size_t i = 0; i < n; ++i) {
    TFG_RETURN_IF_ERROR(FindRecord(indices[i], &locations[i]));
    const FileIndex& f = indexes_[locations[i].file];
    const int64_t local = locations[i].local_index;
    __builtin_prefetch(&f.offsets[local]);
    __builtin_prefetch(&f.offsets[local + 1]);
    __builtin_prefetch(&f.checksums[local]);
  }
  for (size_t i = 0; i < n; ++i) FillLocation(&locations[i]);
  return Status::Ok();
}

Status FFRecordReader::Annotate(const RecordLocation& loc, const Status& status) const {
  std::ostringstream where;
  where << indexes_[loc.file].path << ": record " << loc.index;
  if (loc.local_index != loc.index) where << " (record " << loc.local_index << " of this file)";
  where << " at offset " << loc.offset << " (" << loc.length << " bytes): ";
  return Status(status.code(), where.str() + status.message());
}

Status FFRecordReader::CheckRecord(const RecordLocation& loc, const char* data) const {
  const uint32_t computed = Crc32(0, data, loc.length);
  if (computed == loc.checksum) return Status::Ok();
  return Annotate(loc, DataLossError("checksum mismatch: stored ", Hex(loc.checksum),
                                     " (at byte ",
                                     indexes_[loc.file].checksum_field_offset(loc.local_index),
                                     "), computed ", Hex(computed),
                                     ": the record's bytes are corrupt"));
}

void FFRecordReader::Read(ReadContext* ctx, const RecordLocation* locs, size_t n,
                          char* const* dsts, Status* statuses,
                          const ReadParallelism& parallelism) const {
  if (n == 0) return;
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (closed_) {
    for (size_t i = 0; i < n; ++i) {
      statuses[i] = InvalidArgumentError("the FFRecord reader has been closed");
    }
    return;
  }
  const bool direct = options_.direct_io;
  const bool check = options_.check_data;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += locs[i].length;
  const bool can_parallelize = parallelism.scheduler != nullptr && *parallelism.scheduler &&
                               parallelism.max_parallelism > 1 && n > 1;
  // io_uring: contiguous slices, each read (and checked) by its own ring on its own thread.
  // pread: the engine itself spreads the reads over the scheduler, one task per read.
  int slices = 1;
  if (can_parallelize && total >= kParallelMinBytes &&
      ctx->io()->engine() == IoEngine::kIoUring) {
    slices = static_cast<int>(std::min<int64_t>(
        {parallelism.max_parallelism, static_cast<int64_t>(n), kMaxSlices}));
    while (slices > 1 && ctx->io(slices - 1) == nullptr) --slices;
  }

  if (remote_fs_ != nullptr) {
    // Files of another file system (an object store: each read is a round
    // trip) are read a record per request, all of the batch in flight at
    // once on the file system's own threads.
    ReadInParallel(*remote_fs_, static_cast<int64_t>(n), [&](int64_t i) {
      const RecordLocation& loc = locs[i];
      const Status s = files_[loc.file]->ReadAt(loc.offset, loc.length, dsts[i]);
      if (!s.ok()) {
        statuses[i] = Annotate(loc, s);
        return;
      }
      statuses[i] = check ? CheckRecord(loc, dsts[i]) : Status::Ok();
    });
    return;
  }
  std::vector<ReadRequest>& requests = ctx->requests_;
  requests.resize(n);
  if (direct) {
    constexpr uint64_t a = kDirectIoAlignment;
    ctx->bounce_offsets_.resize(n);
    uint64_t bounce_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      ctx->bounce_offsets_[i] = bounce_bytes;
      bounce_bytes += AlignUp(locs[i].offset + locs[i].length, a) - AlignDown(locs[i].offset, a);
    }
    Status s = ctx->bounce_.Resize(bounce_bytes, a);
    if (!s.ok()) {
      for (size_t i = 0; i < n; ++i) statuses[i] = Annotate(locs[i], s);
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t begin = AlignDown(locs[i].offset, a);
      const uint64_t end = AlignUp(locs[i].offset + locs[i].length, a);
      ReadRequest& r = requests[i];
      r.fd = direct_fds_[locs[i].file];
      r.offset = begin;
      r.length = end - begin;
      r.dst = ctx->bounce_.data() + ctx->bounce_offsets_[i];
      r.stop_at_eof = true;  // the rounded-up end may lie past the end of the file
      r.buffered = false;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      ReadRequest& r = requests[i];
      r.fd = files_[locs[i].file]->fd();
      r.offset = locs[i].offset;
      r.length = locs[i].length;
      r.dst = dsts[i];
      r.stop_at_eof = false;
      r.buffered = true;
    }
  }

  auto done = [&](size_t i, const Status& status, uint64_t bytes_read) {
    const RecordLocation& loc = locs[i];
    if (!status.ok()) {
      statuses[i] = Annotate(loc, status);
      return;
    }
    if (direct) {
      const uint64_t skip = loc.offset - requests[i].offset;
      if (bytes_read < skip + loc.length) {
        statuses[i] = Annotate(loc, DataLossError("unexpected end of file at offset ",
                                                  requests[i].offset + bytes_read));
        return;
      }
      if (loc.length > 0) std::memcpy(dsts[i], requests[i].dst + skip, loc.length);
    }
    statuses[i] = check ? CheckRecord(loc, dsts[i]) : Status::Ok();
  };
  if (slices == 1) {
    ctx->io()->Read(requests.data(), n, done, can_parallelize ? parallelism : ReadParallelism{});
    return;
  }
  ParallelFor(slices, slices, *parallelism.scheduler, [&](int64_t s) {
    const size_t begin = n * s / slices;
    const size_t end = n * (s + 1) / slices;
    ctx->io(static_cast<size_t>(s))->Read(
        requests.data() + begin, end - begin,
        [&](size_t i, const Status& status, uint64_t bytes_read) {
          done(begin + i, status, bytes_read);
        });
  });
}

Status FFRecordReader::ValidateMetadata() const {
  for (const FileIndex& index : indexes_) TFG_RETURN_IF_ERROR(VerifyMetadataChecksum(index));
  return Status::Ok();
}

}  // namespace ffrecord
}  // namespace tfg
