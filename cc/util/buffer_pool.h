// A small cache of large, aligned heap buffers that are handed out again
// instead of being freed.
//
// Why: a decoded clip is megabytes (16 frames of 320x240 RGB are 3.7 MB).
// glibc serves blocks that large with fresh mmap()s, or trims them back to
// the kernel when they are freed, so every new output buffer page-faults
// (and is zero-filled by the kernel) once per 4 KiB page as the decoder first
// writes it, hundreds of faults per clip, for every clip of every epoch.
// Recycling buffers of the same size keeps the pages mapped. The cache is
// bounded (`max_cached` buffers) and is freed with the pool; a buffer handed
// out stays valid after the pool is gone only if the caller keeps the pool
// alive (tf_gulp's tensors hold a shared_ptr to it).
#ifndef TF_GULP_CC_UTIL_BUFFER_POOL_H_
#define TF_GULP_CC_UTIL_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tfg {

class BufferPool {
 public:
  // Buffers are aligned to `alignment` (a power of two, at least
  // sizeof(void*)); at most `max_cached` free buffers are kept.
  BufferPool(size_t max_cached, size_t alignment);
  ~BufferPool();

  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of exactly `bytes` bytes (contents unspecified): a cached one of
  // that size if there is one, else a new one. Null when memory runs out.
  void* Acquire(size_t bytes);

  // Gives back a buffer from Acquire(bytes). It is cached when there is room;
  // when the cache is full, the least recently released buffer is freed, so
  // the cache follows the sizes in use now.
  void Release(void* data, size_t bytes);

  // Number of buffers cached now, and of new allocations so far (for tests
  // and diagnostics).
  size_t cached() const;
  int64_t allocations() const;

 private:
  struct Free {
    void* data;
    size_t bytes;
  };
  const size_t max_cached_;
  const size_t alignment_;
  mutable std::mutex mu_;
  std::vector<Free> free_;  // oldest first
  int64_t allocations_ = 0;
};

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_BUFFER_POOL_H_
