#include "cc/util/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

namespace tfg {

BufferPool::BufferPool(size_t max_cached, size_t alignment)
    : max_cached_(max_cached),
      alignment_(std::max(alignment, sizeof(void*))) {}

BufferPool::~BufferPool() {
  for (const Free& f : free_) std::free(f.data);
}

void* BufferPool::Acquire(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Newest first: its pages are the most likely to still be in the CPU's
    // caches.
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].bytes == bytes) {
        void* data = free_[i].data;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return data;
      }
    }
    ++allocations_;
  }
  // Buffers of a huge page or more are placed on huge-page boundaries and
  // advised for transparent huge pages (the kernel's default mode, "madvise",
  // gives them only to regions that ask): a decoder writing a 3.7 MB clip
  // then walks two TLB entries instead of 900. Pooled, the cost of getting
  // the huge pages is paid once per buffer. Where the kernel has no huge
  // page to give, the advice is ignored.
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes >= kHugePage) {
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* data = std::aligned_alloc(kHugePage, rounded);
    if (data != nullptr) madvise(data, rounded, MADV_HUGEPAGE);
    return data;
  }
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded =
      std::max(alignment_, (bytes + alignment_ - 1) / alignment_ * alignment_);
  return std::aligned_alloc(alignment_, rounded);
}

void BufferPool::Release(void* data, size_t bytes) {
  if (data == nullptr) return;
  void* evicted = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (max_cached_ == 0) {
      evicted = data;
    } else {
      if (free_.size() >= max_cached_) {
        evicted = free_.front().data;
        free_.erase(free_.begin());
      }
      free_.push_back({data, bytes});
    }
  }
  std::free(evicted);  // outside the lock: freeing may munmap
}

size_t BufferPool::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_.size();
}

int64_t BufferPool::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

}  // namespace tfg
