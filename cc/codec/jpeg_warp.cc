#include "cc/codec/jpeg_warp.h"

// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>
#include <csetjmp>
#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cc/warp/color_transform.h"
#include "cc/warp/fixed_point_warp.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace jpeg {
namespace {

// TurboJPEG's TJFLAG_LIMITSCANS limit, kept for the same reason: a
// progressive JPEG of thousands of tiny scans costs quadratic time.
constexpr int kMaxScans = 500;

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void ErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

// A warning (level -1: corrupt data, a truncated file) is an error: a frame
// half grey is silently wrong data. Trace messages (level >= 0) are dropped.
void EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0) ErrorExit(cinfo);
}

void ProgressMonitor(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    snprintf(err->message, sizeof(err->message),
             "progressive JPEG with more than %d scans", kMaxScans);
    longjmp(err->jump, 1);
  }
}

// One decompressor per thread, reused (creating one allocates its pools).
struct Decompressor {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  jpeg_progress_mgr progress;
  std::vector<uint8_t> pixels;  // the decoded region
  std::vector<JSAMPROW> rows;
  Decompressor() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = ErrorExit;
    err.pub.emit_message = EmitMessage;
    jpeg_create_decompress(&cinfo);
    progress.progress_monitor = ProgressMonitor;
    cinfo.progress = &progress;
  }
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }
};

Decompressor& ThreadDecompressor() {
  thread_local Decompressor decompressor;
  return decompressor;
}

int ScaledSide(int side, int denominator) {
  return (side + denominator - 1) / denominator;  // libjpeg's jdiv_round_up
}

bool Affine(const double m[9]) { return m[6] == 0.0 && m[7] == 0.0 && m[8] == 1.0; }

// `a` = `a` . `b` for row-major 3x3 matrices.
void LeftMultiply(const double a[9], double b[9]) {
  double r[9];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    }
  }
  std::copy(r, r + 9, b);
}

// `m` (output -> full-size pixels) made output -> scaled pixels: a pixel
// centre X of the full picture is at (X + 0.5) / s - 0.5 in the scaled one.
void ToScaled(int s, double m[9]) {
  const double k = 1.0 / s, t = 0.5 / s - 0.5;
  const double a[9] = {k, 0, t, 0, k, t, 0, 0, 1};
  LeftMultiply(a, m);
}

template <typename Out>
Status DecodeWarpedImpl(const uint8_t* data, size_t size, const DecodeOptions& options,
                        const ImageInfo& info, const double matrix[9],
                        const WarpTarget& target, Out* dst, CropPlan* plan_out) {
  const CropPlan plan = PlanCrop(info, matrix, target);
  if (plan_out != nullptr) *plan_out = plan;
  const int channels = Channels(options.color_space);
  Decompressor& d = ThreadDecompressor();
  jpeg_decompress_struct& cinfo = d.cinfo;
  JDIMENSION x_offset = 0, width = 0;
  int y0 = 0, y1 = 0;
  if (setjmp(d.err.jump)) {
    jpeg_abort_decompress(&cinfo);
    return DataLossError("corrupt JPEG: ", d.err.message);
  }
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  // libjpeg has no CMYK -> RGB conversion: CMYK (YCCK converted to CMYK by
  // libjpeg) is decoded as is and converted per row below.
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  const int decoded_channels = cmyk ? 4 : channels;
  cinfo.out_color_space = cmyk ? JCS_CMYK
                          : options.color_space == ColorSpace::kGray ? JCS_GRAYSCALE
                                                                     : JCS_RGB;
  cinfo.dct_method = options.fast_dct ? JDCT_IFAST : JDCT_ISLOW;
  cinfo.do_fancy_upsampling = options.fast_upsample ? FALSE : TRUE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = plan.scale_denominator;
  jpeg_start_decompress(&cinfo);
  if (static_cast<int>(cinfo.output_width) != plan.scaled_width ||
      static_cast<int>(cinfo.output_height) != plan.scaled_height ||
      static_cast<int>(cinfo.output_components) != decoded_channels) {
    jpeg_abort_decompress(&cinfo);
    return DataLossError("JPEG decodes to ", cinfo.output_width, "x", cinfo.output_height,
                         "x", cinfo.output_components, ", its header said ",
                         plan.scaled_width, "x", plan.scaled_height, "x", channels);
  }
  x_offset = static_cast<JDIMENSION>(plan.x0);
  width = static_cast<JDIMENSION>(plan.x1 - plan.x0);
  if (width < cinfo.output_width) jpeg_crop_scanline(&cinfo, &x_offset, &width);
  y0 = plan.y0;
  y1 = plan.y1;
  if (y0 > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(y0));
  const size_t row_bytes = static_cast<size_t>(width) * decoded_channels;
  d.pixels.resize(row_bytes * (y1 - y0));
  d.rows.resize(y1 - y0);
  for (int r = 0; r < y1 - y0; ++r) d.rows[r] = d.pixels.data() + r * row_bytes;
  while (static_cast<int>(cinfo.output_scanline) < y1) {
    const int done = static_cast<int>(cinfo.output_scanline) - y0;
    if (jpeg_read_scanlines(&cinfo, d.rows.data() + done, y1 - y0 - done) == 0) break;
  }
  const bool adobe_inverted = cinfo.saw_Adobe_marker;
  // Rows below the region are never read.
  jpeg_abort_decompress(&cinfo);
  if (cmyk) {
    CmykToRgb(d.pixels.data(), static_cast<size_t>(width) * (y1 - y0), adobe_inverted, channels,
              d.pixels.data());
  }

  warp::WarpGeometry g{y1 - y0, width, channels, target.out_height, target.out_width};
  double m[9];
  std::copy(matrix, matrix + 9, m);
  ToScaled(plan.scale_denominator, m);
  const double shift[9] = {1, 0, -static_cast<double>(x_offset), 0, 1,
                           -static_cast<double>(y0), 0, 0, 1};
  LeftMultiply(shift, m);
  if (plan.empty) {
    // Nothing sampled lies inside the picture: a matrix that samples
    // nowhere gives every pixel the out-of-bounds colour.
    const double nowhere[9] = {0, 0, -1e6, 0, 0, -1e6, 0, 0, 1};
    std::copy(nowhere, nowhere + 9, m);
  }
  auto warp_into = [&](const float* bias, const float* norm, Out* out) {
    if (warp::CanWarpAffine(g, m)) {
      if constexpr (std::is_same<Out, float>::value) {
        warp::WarpAffine(g, d.pixels.data(), m, bias, norm, target.oob_color, out);
      } else {
        warp::WarpAffine(g, d.pixels.data(), m, target.oob_color, out);
      }
      return Status::Ok();
    }
    float mf[9];
    for (int i = 0; i < 9; ++i) mf[i] = static_cast<float>(m[i]);
    if constexpr (std::is_same<Out, float>::value) {
      warp::WarpRows(g, d.pixels.data(), mf, bias, norm, target.oob_color, 0, g.out_height, out);
    } else {
      warp::WarpRows(g, d.pixels.data(), mf, target.oob_color, 0, g.out_height, out);
    }
    return Status::Ok();
  };
  return warp::WarpWithColor(target.color, g.out_height * g.out_width, channels, target.bias,
                             target.norm, dst, warp_into);
}

}  // namespace

CropPlan PlanCrop(const ImageInfo& info, const double matrix[9],
                  const WarpTarget& target) {
  CropPlan plan;
  const bool affine = Affine(matrix);
  int s = 1;
  if (target.dct_scaling && affine) {
    // Input pixels per output pixel along each output axis; the picture is
    // decoded at 1/s only where both steps are at least s.
    const double step = std::min(std::hypot(matrix[0], matrix[3]),
                                 std::hypot(matrix[1], matrix[4]));
    s = 8;
    while (s > 1 && !(s <= step)) s /= 2;
  }
  plan.scale_denominator = s;
  plan.scaled_width = ScaledSide(info.width, s);
  plan.scaled_height = ScaledSide(info.height, s);
  const int w = plan.scaled_width, h = plan.scaled_height;
  if (!affine) {  // a projective warp: the bounding box of the corners may not hold
    plan.x1 = w;
    plan.y1 = h;
    return plan;
  }
  double m[9];
  std::copy(matrix, matrix + 9, m);
  ToScaled(s, m);
  // The warp samples inside the parallelogram of the output pixel centres'
  // images; bilinear sampling reads floor(X) and floor(X) + 1.
  const double ox = target.out_width - 1.0, oy = target.out_height - 1.0;
  const double xs[4] = {m[2], m[0] * ox + m[2], m[1] * oy + m[2], m[0] * ox + m[1] * oy + m[2]};
  const double ys[4] = {m[5], m[3] * ox + m[5], m[4] * oy + m[5], m[3] * ox + m[4] * oy + m[5]};
  const double min_x = *std::min_element(xs, xs + 4), max_x = *std::max_element(xs, xs + 4);
  const double min_y = *std::min_element(ys, ys + 4), max_y = *std::max_element(ys, ys + 4);
  if (!(max_x >= -0.5 && min_x <= w - 0.5 && max_y >= -0.5 && min_y <= h - 0.5)) {
    plan.empty = true;  // decode one row of one iMCU; every pixel is out of bounds
    plan.x1 = 1;
    plan.y1 = 1;
    return plan;
  }
  auto clamp = [](double v, int lo, int hi) {
    return static_cast<int>(std::max<double>(lo, std::min<double>(hi, v)));
  };
  // kMargin more on every side: libjpeg's fancy chroma upsampling treats the
  // region's edges as the picture's (one or two columns, one row, differ from
  // a full decode there), so they are decoded but not sampled.
  constexpr int kMargin = 2;
  plan.x0 = clamp(std::floor(min_x) - kMargin, 0, w - 1);
  plan.x1 = clamp(std::floor(max_x) + 2 + kMargin, plan.x0 + 1, w);
  plan.y0 = clamp(std::floor(min_y) - kMargin, 0, h - 1);
  plan.y1 = clamp(std::floor(max_y) + 2 + kMargin, plan.y0 + 1, h);
  return plan;
}

Status DecodeWarped(const uint8_t* data, size_t size, const DecodeOptions& options,
                    const ImageInfo& info, const double matrix[9],
                    const WarpTarget& target, float* dst, CropPlan* plan) {
  return DecodeWarpedImpl(data, size, options, info, matrix, target, dst, plan);
}

Status DecodeWarped(const uint8_t* data, size_t size, const DecodeOptions& options,
                    const ImageInfo& info, const double matrix[9],
                    const WarpTarget& target, uint8_t* dst, CropPlan* plan) {
  return DecodeWarpedImpl(data, size, options, info, matrix, target, dst, plan);
}

Status DecodeWhole(const uint8_t* data, size_t size, const DecodeOptions& options,
                   const ImageInfo& info, int width, int height, uint8_t* dst) {
  // Output pixel (x, y) of the 1/s decode is the full picture's pixel centre
  // s * x + (s - 1) / 2: the scaled picture's pixel (x, y) itself, which the
  // warp samples exactly (no fraction, no interpolation).
  const int s = options.scale_denominator;
  const double half = (s - 1) / 2.0;
  const double identity[9] = {static_cast<double>(s), 0, half, 0, static_cast<double>(s), half,
                              0, 0, 1};
  WarpTarget target;
  target.out_height = height;
  target.out_width = width;
  const float zero[3] = {0, 0, 0};
  target.oob_color = zero;
  CropPlan plan;
  TFG_RETURN_IF_ERROR(DecodeWarped(data, size, options, info, identity, target, dst, &plan));
  if (plan.scale_denominator != s || plan.scaled_width != width || plan.scaled_height != height) {
    return InternalError("whole JPEG decode planned 1/", plan.scale_denominator, " ",
                         plan.scaled_width, "x", plan.scaled_height, " for 1/", s, " ", width,
                         "x", height);
  }
  return Status::Ok();
}

}  // namespace jpeg
}  // namespace tfg
