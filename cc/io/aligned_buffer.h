// A heap buffer whose start is aligned to a power of two, for O_DIRECT reads
// (which need the memory, the file offset and the length all aligned to the
// device's logical block size).
#ifndef TF_GULP_CC_IO_ALIGNED_BUFFER_H_
#define TF_GULP_CC_IO_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "cc/util/status.h"

namespace tfg {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& other) noexcept { *this = std::move(other); }
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(alignment_, other.alignment_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // Makes room for `size` bytes aligned to `alignment` (a power of two). The
  // memory is reused when it is already large and aligned enough; contents
  // are not preserved.
  Status Resize(size_t size, size_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return InvalidArgumentError("buffer alignment ", alignment, " is not a power of two");
    }
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (data_ != nullptr && capacity_ >= size && alignment_ >= alignment) {
      size_ = size;
      return Status::Ok();
    }
    std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
    void* p = nullptr;
    if (::posix_memalign(&p, alignment, size == 0 ? alignment : size) != 0) {
      return InternalError("cannot allocate ", size, " bytes aligned to ", alignment);
    }
    data_ = static_cast<char*>(p);
    size_ = size;
    capacity_ = size == 0 ? alignment : size;
    alignment_ = alignment;
    return Status::Ok();
  }

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t alignment_ = 0;
};

// Rounds down / up to a multiple of `alignment` (a power of two).
inline uint64_t AlignDown(uint64_t x, uint64_t alignment) { return x & ~(alignment - 1); }
inline uint64_t AlignUp(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) & ~(alignment - 1);
}

}  // namespace tfg

#endif  // TF_GULP_CC_IO_ALIGNED_BUFFER_H_
