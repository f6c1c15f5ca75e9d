// Reads and decodes the selected frames of one gulp item.
//
// Reading is split from decoding so the TF kernel can learn the clip's shape
// (from the JPEG headers) before it allocates the output tensor, and then
// decode straight into that tensor's buffer.
#ifndef TF_GULP_CC_GULP_CLIP_READER_H_
#define TF_GULP_CC_GULP_CLIP_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
#include "cc/gulp/chunk_index.h"
#include "cc/io/random_access_file.h"
#include "cc/util/parallel_for.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

// An allocator whose resize() leaves new bytes uninitialized: ReadClip
// overwrites every byte it sizes, so zero-filling them first (std::vector's
// value-initialization) only costs a pass over memory per clip.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) {}  // NOLINT: rebinding
  template <typename U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;  // default-initialized: no zeroing
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// The JPEG bytes of a clip's selected frames, in selection order. Frames
// selected twice share their bytes. Reading another clip into the same
// ClipBytes reuses its buffer (no allocation once it is large enough).
struct ClipBytes {
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> buffer;
  struct Span {
    size_t begin = 0;   // into buffer
    size_t length = 0;  // JPEG bytes, padding excluded
    uint64_t file_offset = 0;
    int64_t frame = 0;  // index within the item
  };
  std::vector<Span> frames;
};

// `status` with the file, the id, the frame and its byte offset in front of
// its message (unchanged when ok).
Status WithContext(const Status& status, const std::string& data_path,
                   const std::string& id, int64_t frame, uint64_t offset);

// The default limit on one clip's bytes (GulpDataset's max_clip_bytes): 1 GiB,
// about 170 frames of 1920x1080 RGB or 4,000 of 320x240.
constexpr uint64_t kDefaultMaxClipBytes = uint64_t{1} << 30;

// Refuses, before anything is read, a selection whose JPEG bytes (every
// selected frame counted each time it is selected) exceed `max_bytes`; the
// InvalidArgument error names the file, the id and both sizes.
Status CheckClipJpegBytes(const Item& item, const std::vector<int64_t>& selected,
                          uint64_t max_bytes, const std::string& data_path);

// Reads the frames `selected` (indices into item.frames) of `item` from
// `file`. Runs of frames that are adjacent on disk are read with one pread.
Status ReadClip(const RandomAccessFile& file, const Item& item,
                const std::vector<int64_t>& selected, ClipBytes* clip);

// Reads one frame's JPEG bytes (padding excluded) into `dst`.
Status ReadFrame(const RandomAccessFile& file, const Item& item, int64_t frame,
                 char* dst);

struct ClipShape {
  int64_t num_frames = 0;
  int height = 0;
  int width = 0;
  int channels = 0;
  size_t frame_bytes() const {
    return static_cast<size_t>(height) * width * channels;
  }
};

// Reads every selected frame's JPEG header; all frames of a clip must decode
// to the same size. Errors name the file, id, frame and byte offset.
Status ClipDecodedShape(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                        const std::string& data_path, const std::string& id,
                        ClipShape* shape);

// Refuses, before the decoded clip is allocated, a clip of `shape` whose
// frames take more than `max_bytes` (InvalidArgument naming file, id, sizes).
Status CheckClipDecodedBytes(const ClipShape& shape, uint64_t max_bytes,
                             const std::string& data_path, const std::string& id);

// Decodes selected frame `k` into its place in `clip_dst` (the whole clip's
// buffer, num_frames * frame_bytes bytes).
Status DecodeClipFrame(const ClipBytes& clip, size_t k,
                       const jpeg::DecodeOptions& options,
                       const ClipShape& shape, const std::string& data_path,
                       const std::string& id, uint8_t* clip_dst);

// Decodes the clip into `dst` (num_frames * frame_bytes bytes), frames in
// parallel on `schedule` with up to `max_parallelism` threads.
Status DecodeClip(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                  const ClipShape& shape, const std::string& data_path,
                  const std::string& id, const Scheduler& schedule,
                  int max_parallelism, uint8_t* dst);

// The warp matrices of a clip's frames: one for the whole clip (so its frames
// do not jitter), or one per spatial view of a clip listed view after view
// (FrameSelection::views_per_clip): frame k uses view matrix
// (k / frames_per_view) % count. `matrices` holds count * 9 values.
struct FrameMatrices {
  FrameMatrices(const double* one) : matrices(one) {}  // NOLINT: a clip's one matrix
  FrameMatrices(const double* all, size_t count, size_t frames_per_view)
      : matrices(all), count(count), frames_per_view(frames_per_view) {}
  const double* For(size_t frame) const {
    return matrices + 9 * ((frame / frames_per_view) % count);
  }
  const double* matrices;
  size_t count = 1;
  size_t frames_per_view = 1;
};

// Decodes the clip fused with a warp (jpeg_warp.h): every frame decoded only
// as far as its matrix (output pixels -> pixels of the full-size frames of
// `shape`) samples it, and warped into its place in `dst` (num_frames *
// out_height * out_width * channels values). Frames in parallel on
// `schedule`, up to `max_parallelism` threads. Errors name the file, id,
// frame and offset. `Out`: float or uint8_t (the two clip_reader.cc
// instantiates).
template <typename Out>
Status DecodeClipWarped(const ClipBytes& clip, const jpeg::DecodeOptions& options,
                        const ClipShape& shape, const FrameMatrices& matrices,
                        const jpeg::WarpTarget& target, const std::string& data_path,
                        const std::string& id, const Scheduler& schedule,
                        int max_parallelism, Out* dst);

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_CLIP_READER_H_
