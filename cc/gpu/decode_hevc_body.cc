#include "cc/gpu/decode_hevc_body.h"

#include <algorithm>
#include <utility>

#include "cc/codec/hevc_coded_size.h"

namespace tfg {
namespace gpu {

void DecodeHevcRgb(NvdecRgbDecoder* decoder, TaskThreads* threads,
                   std::shared_ptr<RgbPicture> picture, std::function<void(Status)> done) {
  int width = 0, height = 0;
  Status sized = codec::HevcCodedSize(picture->data, picture->size, picture->what, &width,
                                      &height);
  if (sized.ok()) {
    decoder->RaiseMaxSize(std::max(width, picture->max_width),
                          std::max(height, picture->max_height));
  }
  threads->Schedule([decoder, picture, sized, done = std::move(done)] {
    if (!sized.ok()) {
      done(sized);
      return;
    }
    bool allocated = false;
    const Status decoded = decoder->Decode(
        picture->data, picture->size, picture->bilinear_chroma, picture->stream,
        picture->what.c_str(), [&](int w, int h, RgbRegion* region, CUdeviceptr* dst) {
          allocated = true;
          return picture->allocate(w, h, region, dst);
        });
    if (!allocated && (decoded.code() == StatusCode::kOutOfRange ||
                       decoded.code() == StatusCode::kUnavailable)) {
      done(picture->on_host ? picture->on_host(decoded) : decoded);
      return;
    }
    done(decoded);
  });
}

}  // namespace gpu
}  // namespace tfg
