// Reads one gulp element (the selected frames of one item) into memory the
// caller allocates: the whole clip-reading algorithm, written once for
// GulpDataset (tf_gulp/ops) and the Python readers (tf_gulp._core).
//
// The steps are apart so a caller learns every size before it allocates
// anything of that size:
//   1. Select(): picks the frames and refuses a selection whose JPEG bytes
//      exceed max_clip_bytes (sizes from the index: nothing is read yet).
//   2a. Not decoding: jpeg_length(k) sizes the caller's buffers, ReadJpegs()
//      reads the frames into them.
//   2b. Decoding: ReadForDecode() reads the JPEG bytes; ClipShape() or
//      FrameShapes() gives the decoded sizes from the JPEG headers (checked
//      against the decoder's per-frame limits and max_clip_bytes); Decode(),
//      DecodeWarped() or DecodeFrame() decode into the caller's memory.
// Errors name the file, the id, the frame and its byte offset.
#ifndef TF_GULP_CC_GULP_ELEMENT_READER_H_
#define TF_GULP_CC_GULP_ELEMENT_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/jpeg_warp.h"
#include "cc/gulp/chunk_index.h"
#include "cc/gulp/clip_reader.h"
#include "cc/gulp/frame_selection.h"
#include "cc/io/random_access_file.h"
#include "cc/util/parallel_for.h"
#include "cc/util/status.h"

namespace tfg {
namespace gulp {

struct ElementOptions {
  FrameSelection selection;
  bool decode = true;
  // GulpDataset's decode settings; the Python readers decode with the same
  // defaults (fast integer IDCT, smooth chroma upsampling).
  jpeg::DecodeOptions decode_options;
  // The most bytes one element's frames may take: decoded, or as JPEG bytes.
  uint64_t max_clip_bytes = kDefaultMaxClipBytes;
};

// One frame's decoded size (FrameShapes).
struct FrameShape {
  int height = 0;
  int width = 0;
  int channels = 0;
  size_t bytes() const { return static_cast<size_t>(height) * width * channels; }
};

// One reader can read element after element (Select() starts the next one):
// its buffer for the JPEG bytes is then allocated once, not per element.
class ElementReader {
 public:
  explicit ElementReader(const ElementOptions& options) : options_(options) {}

  // Step 1: selects the frames of `item` (`random_key` seeds the random
  // choices; target_fps reads the video's frame rate from the meta's "fps")
  // and checks their JPEG bytes against max_clip_bytes. A bad
  // selection is an error naming `meta_path` and the id (OutOfRange for an
  // index past the clip); `data_path` names the data file in later errors.
  Status Select(const Item& item, const std::string& data_path,
                const std::string& meta_path, uint64_t random_key);

  size_t num_frames() const { return selected_.size(); }
  // The index within the item of selected frame k.
  int64_t frame(size_t k) const { return selected_[k]; }
  // Selected frame k's JPEG bytes, padding excluded (from the index).
  size_t jpeg_length(size_t k) const { return item_->frames[selected_[k]].jpeg_length(); }

  // Step 2a: reads selected frame k's JPEG bytes into dst[k] (jpeg_length(k)
  // bytes each), one read per frame, all in flight at once on a remote store.
  Status ReadJpegs(const RandomAccessFile& file, char* const* dst) const;

  // Step 2b: reads the selected frames' JPEG bytes to decode them; frames
  // adjacent on disk are read with one pread, a frame selected twice once.
  Status ReadForDecode(const RandomAccessFile& file);

  // The full-size decoded shape of the clip, every frame in
  // decode_options.color_space; all frames must decode to one size.
  // Not checked against max_clip_bytes: see CheckOutputBytes.
  Status ClipShape(gulp::ClipShape* shape) const;
  // Refuses an output of `shape` (what the caller will allocate: decoded or
  // warped frames) over max_clip_bytes, before it is allocated.
  Status CheckOutputBytes(const gulp::ClipShape& shape) const;
  // Decodes the clip into `dst` (shape.num_frames * shape.frame_bytes()),
  // frames in parallel on `schedule`, up to `max_parallelism` threads.
  Status Decode(const gulp::ClipShape& shape, const Scheduler& schedule, int max_parallelism,
                uint8_t* dst) const;
  // The fused decode + warp of the clip (see DecodeClipWarped in clip_reader.h):
  // one matrix for the clip, or one per view (FrameMatrices).
  Status DecodeWarped(const gulp::ClipShape& shape, const FrameMatrices& matrices,
                      const jpeg::WarpTarget& target, const Scheduler& schedule,
                      int max_parallelism, float* dst) const;
  Status DecodeWarped(const gulp::ClipShape& shape, const FrameMatrices& matrices,
                      const jpeg::WarpTarget& target, const Scheduler& schedule,
                      int max_parallelism, uint8_t* dst) const;

  // Frames kept apart (the Python readers' lists of arrays): each frame at
  // its own size and in its own JPEG's colour space (one component: gray,
  // else decode_options.color_space). Their sum is checked against
  // max_clip_bytes before anything is decoded.
  Status FrameShapes(std::vector<FrameShape>* shapes) const;
  // Decodes selected frame k, of `shape` (from FrameShapes), into `dst`.
  Status DecodeFrame(size_t k, const FrameShape& shape, uint8_t* dst) const;

  // Bytes this reader keeps allocated between elements (its JPEG buffer), for
  // callers that keep readers to reuse them.
  size_t retained_bytes() const { return clip_.buffer.capacity(); }

 private:
  const ElementOptions options_;
  const Item* item_ = nullptr;
  std::string data_path_;
  std::vector<int64_t> selected_;
  ClipBytes clip_;
};

}  // namespace gulp
}  // namespace tfg

#endif  // TF_GULP_CC_GULP_ELEMENT_READER_H_
