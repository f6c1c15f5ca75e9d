#include "cc/gpu/ycbcr_check.h"

#include "cc/codec/ycbcr.h"
#include "cc/gpu/warp_pixel.h"
#include "cc/warp/similarity_warp.h"

namespace tfg {
namespace gpu {
namespace harness {
namespace {

const float kLevelsBias[3] = {0, 0, 0}, kLevelsNorm[3] = {1, 1, 1}, kOob[3] = {-1, -2, -3};

size_t OutValues(const Options& o) {
  return static_cast<size_t>(o.batch) * o.out_size * o.out_size * 3;
}

// The CPU path: the whole picture to RGB as the CPU decoder does, then the
// CPU warp.
std::vector<float> CpuPath(const Options& o, const std::vector<codec::YcbcrPicture>& pictures,
                           const std::vector<float>& matrices, bool bilinear,
                           warp::Layout layout) {
  warp::WarpGeometry g;
  g.in_height = g.in_width = o.in_size;
  g.channels = 3;
  g.out_height = g.out_width = o.out_size;
  g.layout = warp::Layout::kNHWC;
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;
  std::vector<float> out(OutValues(o));
  ForEachPicture(o.batch, [&](int b) {
    std::vector<uint8_t> rgb(static_cast<size_t>(o.in_size) * o.in_size * 3);
    codec::RegionToRgb(pictures[b], 0, 0, o.in_size, o.in_size, bilinear, rgb.data());
    std::vector<float> nhwc(out_picture);
    warp::WarpPicture(g, rgb.data(), &matrices[b * 9], kLevelsBias, kLevelsNorm, kOob,
                      nhwc.data());
    float* dst = out.data() + b * out_picture;
    const int n = o.out_size;
    for (int i = 0; i < n * n; ++i) {
      for (int c = 0; c < 3; ++c) {
        dst[layout == warp::Layout::kNHWC ? i * 3 + c : c * n * n + i] = nhwc[i * 3 + c];
      }
    }
  });
  return out;
}

std::vector<float> HostEmulation(const Options& o,
                                 const std::vector<codec::YcbcrPicture>& pictures,
                                 const std::vector<float>& matrices, bool bilinear,
                                 warp::Layout layout) {
  const PixelStrides out =
      StridesOf(layout == warp::Layout::kNCHW ? 1 : 0, o.out_size, o.out_size, 3);
  const size_t out_picture = static_cast<size_t>(o.out_size) * o.out_size * 3;
  std::vector<float> result(OutValues(o));
  ForEachPicture(o.batch, [&](int b) {
    for (int y = 0; y < o.out_size; ++y) {
      for (int x = 0; x < o.out_size; ++x) {
        WarpYcbcrPixel(pictures[b], bilinear, &matrices[b * 9], kLevelsBias, kLevelsNorm, kOob,
                       x, y, result.data() + b * out_picture + y * out.y + x * out.x, out.c);
      }
    }
  });
  return result;
}

}  // namespace

Nv12Batch MakeNv12Batch(const Options& o) {
  const int n = o.in_size, h = o.in_size / 2;
  Nv12Batch batch;
  batch.luma.resize(static_cast<size_t>(o.batch) * n * n);
  batch.chroma.resize(static_cast<size_t>(o.batch) * h * h * 2);
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int b = 0; b < o.batch; ++b) {
    const float f = 0.03f + 0.15f * u(rng), ph = 6.f * u(rng);
    uint8_t* y = batch.luma.data() + static_cast<size_t>(b) * n * n;
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        const float v = 128.f + 90.f * std::sin(f * c + ph) * std::cos(0.7f * f * r) + 25.f * u(rng);
        y[r * n + c] = static_cast<uint8_t>(std::fmin(255.f, std::fmax(0.f, v)));
      }
    }
    uint8_t* uv = batch.chroma.data() + static_cast<size_t>(b) * h * h * 2;
    for (int r = 0; r < h; ++r) {
      for (int c = 0; c < h; ++c) {
        const float cb = 128.f + 70.f * std::sin(0.11f * c + ph) + 10.f * u(rng);
        const float cr = 128.f + 70.f * std::cos(0.09f * r - ph) + 10.f * u(rng);
        uv[(r * h + c) * 2] = static_cast<uint8_t>(std::fmin(255.f, std::fmax(0.f, cb)));
        uv[(r * h + c) * 2 + 1] = static_cast<uint8_t>(std::fmin(255.f, std::fmax(0.f, cr)));
      }
    }
    const codec::YcbcrStandard standards[3] = {codec::YcbcrStandard::kBt601,
                                               codec::YcbcrStandard::kBt709,
                                               codec::YcbcrStandard::kBt2020};
    batch.matrices.push_back(codec::MakeYcbcrMatrix(standards[b % 3], /*full_range=*/b % 3 == 0));
  }
  return batch;
}

std::vector<codec::YcbcrPicture> Nv12Pictures(const Options& o, const Nv12Batch& batch,
                                              const uint8_t* luma, const uint8_t* chroma) {
  const int n = o.in_size, h = o.in_size / 2;
  std::vector<codec::YcbcrPicture> pictures(o.batch);
  for (int b = 0; b < o.batch; ++b) {
    codec::YcbcrPicture& p = pictures[b];
    p.width = p.height = n;
    p.y = luma + static_cast<size_t>(b) * n * n;
    p.y_stride = n;
    p.cb = chroma + static_cast<size_t>(b) * h * h * 2;
    p.cr = p.cb + 1;
    p.cb_stride = p.cr_stride = 2 * h;
    p.chroma_step = 2;
    p.shift_x = p.shift_y = 1;
    p.chroma_width = p.chroma_height = h;
    p.matrix = batch.matrices[b];
  }
  return pictures;
}

void CheckYcbcrOnHost(const Options& o, const Nv12Batch& batch,
                      const std::vector<float>& matrices, Check* nearest_nhwc,
                      Check* bilinear_nchw) {
  const std::vector<codec::YcbcrPicture> pictures =
      Nv12Pictures(o, batch, batch.luma.data(), batch.chroma.data());
  *nearest_nhwc = Compare(HostEmulation(o, pictures, matrices, false, warp::Layout::kNHWC),
                          CpuPath(o, pictures, matrices, false, warp::Layout::kNHWC));
  *bilinear_nchw = Compare(HostEmulation(o, pictures, matrices, true, warp::Layout::kNCHW),
                           CpuPath(o, pictures, matrices, true, warp::Layout::kNCHW));
}

Status CheckYcbcrOnGpu(const CudaDriver& d, const GpuSimilarityWarp& warp, const Options& o,
                       const Nv12Batch& batch, const std::vector<float>& matrices,
                       CUstream stream, Check* nearest_nhwc, Check* bilinear_nchw,
                       double* images_per_s) {
  DeviceBuffer luma, chroma, pictures, mats, levels_bias, levels_norm, imagenet_bias,
      imagenet_norm, oob, dst;
  TFG_RETURN_IF_ERROR(Upload(d, batch.luma.data(), batch.luma.size(), &luma));
  TFG_RETURN_IF_ERROR(Upload(d, batch.chroma.data(), batch.chroma.size(), &chroma));
  const std::vector<codec::YcbcrPicture> on_device = Nv12Pictures(
      o, batch, reinterpret_cast<const uint8_t*>(luma.ptr),
      reinterpret_cast<const uint8_t*>(chroma.ptr));
  TFG_RETURN_IF_ERROR(Upload(d, on_device.data(),
                             on_device.size() * sizeof(codec::YcbcrPicture), &pictures));
  TFG_RETURN_IF_ERROR(Upload(d, matrices.data(), matrices.size() * sizeof(float), &mats));
  const float imagenet_b[3] = {123.675f, 116.28f, 103.53f};
  const float imagenet_n[3] = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f};
  TFG_RETURN_IF_ERROR(Upload(d, kLevelsBias, sizeof(kLevelsBias), &levels_bias));
  TFG_RETURN_IF_ERROR(Upload(d, kLevelsNorm, sizeof(kLevelsNorm), &levels_norm));
  TFG_RETURN_IF_ERROR(Upload(d, imagenet_b, sizeof(imagenet_b), &imagenet_bias));
  TFG_RETURN_IF_ERROR(Upload(d, imagenet_n, sizeof(imagenet_n), &imagenet_norm));
  TFG_RETURN_IF_ERROR(Upload(d, kOob, sizeof(kOob), &oob));
  dst.d = &d;
  TFG_CU_RETURN_IF_ERROR(d, cuMemAlloc(&dst.ptr, OutValues(o) * sizeof(float)));

  const std::vector<codec::YcbcrPicture> on_host =
      Nv12Pictures(o, batch, batch.luma.data(), batch.chroma.data());
  auto run = [&](bool bilinear, warp::Layout layout, Check* check) -> Status {
    TFG_RETURN_IF_ERROR(warp.LaunchYcbcr(o.batch, pictures.ptr, bilinear, mats.ptr,
                                         levels_bias.ptr, levels_norm.ptr, oob.ptr, o.out_size,
                                         o.out_size, layout, dst.ptr, stream));
    TFG_CU_RETURN_IF_ERROR(d, cuStreamSynchronize(stream));
    std::vector<float> gpu(OutValues(o));
    TFG_CU_RETURN_IF_ERROR(d, cuMemcpyDtoH(gpu.data(), dst.ptr, gpu.size() * sizeof(float)));
    *check = Compare(gpu, CpuPath(o, on_host, matrices, bilinear, layout));
    return Status::Ok();
  };
  TFG_RETURN_IF_ERROR(run(false, warp::Layout::kNHWC, nearest_nhwc));
  TFG_RETURN_IF_ERROR(run(true, warp::Layout::kNCHW, bilinear_nchw));
  return TimeLaunches(d, o, stream, [&] {
    return warp.LaunchYcbcr(o.batch, pictures.ptr, true, mats.ptr, imagenet_bias.ptr,
                            imagenet_norm.ptr, oob.ptr, o.out_size, o.out_size,
                            warp::Layout::kNCHW, dst.ptr, stream);
  }, images_per_s);
}

}  // namespace harness
}  // namespace gpu
}  // namespace tfg
