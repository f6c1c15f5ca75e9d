// What DecodeJpegWarped's two kernels share: the CPU kernel's decode of one
// picture (decode_jpeg_warped_op.cc), which the GPU kernel
// (decode_jpeg_warped_gpu_op.cc) runs for what the GPU does not take.
#ifndef TF_GULP_OPS_IMAGE_DECODE_JPEG_WARPED_OP_H_
#define TF_GULP_OPS_IMAGE_DECODE_JPEG_WARPED_OP_H_

#include "cc/codec/jpeg_decoder.h"
#include "cc/util/status.h"
#include "tensorflow/core/framework/types.h"
#include "tf_gulp/ops/image/fused_warp_args.h"
#include "tf_gulp/ops/image/image_ops.h"

namespace tf_gulp {

inline constexpr char kDecodeJpegWarped[] = "decode_jpeg_warped";  // begins the messages

// `jpeg` (JPEG, PNG, BMP or GIF bytes) decoded fused with `picture`'s warp
// into its place; errors begin with `what` (the caller's name for the
// picture) where it is not empty.
tfg::Status DecodeJpegWarpedPicture(const DecodeJpegWarpedAttrs& attrs,
                                    const tfg::jpeg::DecodeOptions& options,
                                    const ::tensorflow::tstring& jpeg,
                                    const ::tensorflow::tstring& what,
                                    const FusedWarpPicture& picture);

}  // namespace tf_gulp

#endif  // TF_GULP_OPS_IMAGE_DECODE_JPEG_WARPED_OP_H_
