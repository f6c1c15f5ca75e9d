# Build settings shared by both builds of tf_gulp, defined here once: Bazel (BUILD, cc/BUILD and
# third_party/tensorflow/tf_configure.bzl load this file) and pip (setup.py, through
# tools/build_settings.py, exec()s it as Python; the Makefile asks tools/build_settings.py too).
# Keep it to plain assignments of string literals and lists of them, the subset of Starlark that is
# also Python. TensorFlow's own flags are not here: both builds take them from
# tf.sysconfig.get_compile_flags() / get_link_flags() of the installed TensorFlow (TF_QUERY below).
# The Debian packages both builds need are listed once in tools/apt-packages.txt.

# The TensorFlow release tf_gulp is built and tested against: the Makefile installs
# tensorflow-cpu (and tf-keras) of this version, and the build errors suggest it.
TENSORFLOW_VERSION = "2.21.0"

# Run by the target interpreter (setup.py and tf_configure.bzl): what both builds need to know about
# the installed TensorFlow, printed as the last line of stdout so TensorFlow's own start-up chatter
# cannot confuse the parser.
TF_QUERY = """
import json, sys
import tensorflow as tf
print(json.dumps({
    "python": sys.executable,
    "version": tf.__version__,
    "compile_flags": tf.sysconfig.get_compile_flags(),
    "link_flags": tf.sysconfig.get_link_flags(),
    "cxx11_abi": int(tf.sysconfig.CXX11_ABI_FLAG),
}))
"""

# Which files make which library, as glob patterns (`**` = any number of folders) relative to the
# repository root. Bazel passes them to glob(); setup.py and the Makefile expand them with Python's
# glob (tools/build_settings.py), which gives the same files for these patterns.
# The TensorFlow-free core, linked into both the op library and _core: pip compiles these globs;
# Bazel builds the same files as one library per module (CC_MODULE_DEPS below; //cc:core is all of
# them, and tests/test_cc_layering.py checks that the two give the same files).
# cc/gpu is the GPU path: its host side for the op library is GPU_SRCS below; the rest (the harness,
# the proof, nvcc's toolkit-header code) is built by nvcc through cc/gpu/CMakeLists.txt. cc/fuzz
# holds libFuzzer targets, built with clang by tools/fuzz.py.
CORE_SRCS = ["cc/**/*.cc"]
CORE_HDRS = ["cc/**/*.h"]
CORE_EXCLUDE = ["cc/**/*_test.cc", "cc/gpu/**", "cc/fuzz/**"]

# The core's layering: its modules (folders of cc/) and, for each, the modules its files may include
# directly (#include "cc/<module>/..."; a module always includes itself). Bazel builds one cc_library
# per core module from this table (//cc:<module>: cc/<module>/**, tests aside, depending on exactly
# these), so a header of a module outside a library's dependencies is not even in its compile
# sandbox and the build fails; tests/test_cc_layering.py checks every file's includes against the
# direct entries here (what Bazel 4 with g++ cannot: its layering_check needs clang). //cc:core is
# all core modules together, as pip's CORE_SRCS globs build them. Adding a module: a folder cc/<name>/,
# a line here (after the modules it depends on; CORE_MODULES follows from it).
# Not core modules (no library of their own): gpu (the GPU path: //cc:gpu_host from GPU_SRCS, the
# rest by nvcc/CMake), testing (header-only helpers of the C++ tests, //cc:testing, test-only) and
# fuzz (libFuzzer targets, built by tools/fuzz.py); their includes are checked all the same.
CC_MODULE_DEPS = {
    "util": [],
    "io": ["util"],
    "warp": ["util"],
    "mp4": ["io", "util"],
    # hevc_sample parses a Benzina sample's MP4 (mp4::Movie) down to the picture the decoder takes.
    "codec": ["mp4", "util", "warp"],
    "ffrecord": ["io", "util"],
    "gulp": ["codec", "io", "util"],
    "gpu": ["codec", "util", "warp"],
    "testing": ["io", "util"],
}
# The folders above that are not core modules (see the comment above the table).
NOT_CORE_MODULES = ["gpu", "testing", "fuzz"]
# The core modules in dependency order: derived from the table, so a new module is one line there.
CORE_MODULES = [m for m in CC_MODULE_DEPS if m not in NOT_CORE_MODULES]

# The fuzz targets (one per parser) may include every core module: derived, not listed.
CC_MODULE_DEPS["fuzz"] = list(CORE_MODULES)

# The op library tf_gulp/ops/_tf_gulp_ops.so: these plus the core.
OPS_SRCS = ["tf_gulp/ops/**/*.cc"]
# The GPU kernel's glue is built with GPU_COPTS on top (GPU_OPS_SRCS below).
OPS_EXCLUDE = [
    "tf_gulp/ops/bzna/decode_hevc_gpu_op.cc",
    "tf_gulp/ops/bzna/decode_hevc_warped_gpu_op.cc",
    "tf_gulp/ops/image/decode_jpeg_warped_gpu_op.cc",
    "tf_gulp/ops/image/similarity_warp_gpu_op.cc",
]
OPS_HDRS = ["tf_gulp/ops/**/*.h"]

# The GPU kernels of SimilarityWarp, DecodeHevc and DecodeHevcWarped (docs/gpu.md): their TensorFlow glue
# (GPU_OPS_SRCS) and the TensorFlow-free host side they call (GPU_SRCS: the driver loader, the warp
# launcher on TensorFlow's stream, the NVDEC decoder pool and its decode -> RGB and fused decode -> warp paths, the embedded
# kernels), in the op library of both builds, on every machine: nothing needs a
# CUDA header or library (CUDA types from ffnvcodec's headers, vendored in third_party/ffnvcodec;
# libcuda.so.1 is opened at run time). The kernels themselves are compiled by nvcc with
# GPU_NVCC_FLAGS (the architectures of cc/gpu/CMakeLists.txt) into a fatbin that
# cc/gpu/embedded_fatbin.cc embeds; a build without nvcc embeds an empty one and says so, and the
# GPU kernels then fall back (CPU warp, CPU decode) with copies, logging why once.
GPU_SRCS = [
    "cc/gpu/decode_hevc_body.cc",
    "cc/gpu/decode_hevc_warped_body.cc",
    "cc/gpu/decode_jpeg_warped_body.cc",
    "cc/gpu/embedded_fatbin.cc",
    "cc/gpu/gpu_runtime.cc",
    "cc/gpu/jpeg_warp_gpu.cc",
    "cc/gpu/kernel_modules.cc",
    "cc/gpu/nvdec_pool.cc",
    "cc/gpu/nvdec_rgb.cc",
    "cc/gpu/nvdec_warp.cc",
    "cc/gpu/nvjpeg_decoder.cc",
    "cc/gpu/nvjpeg_loader.cc",
    "cc/gpu/stream_warp.cc",
]
GPU_HDRS = [
    "cc/gpu/color_pixel.h",
    "cc/gpu/color_plan.h",
    "cc/gpu/context_scope.h",
    "cc/gpu/decode_hevc_body.h",
    "cc/gpu/decode_hevc_warped_body.h",
    "cc/gpu/decode_jpeg_warped_body.h",
    "cc/gpu/embedded_fatbin.h",
    "cc/gpu/gpu_runtime.h",
    "cc/gpu/jpeg_warp_gpu.h",
    "cc/gpu/kernel_modules.h",
    "cc/gpu/launch_geometry.h",
    "cc/gpu/nvdec_api.h",
    "cc/gpu/nvdec_picture.h",
    "cc/gpu/nvdec_pool.h",
    "cc/gpu/nvdec_rgb.h",
    "cc/gpu/nvdec_warp.h",
    "cc/gpu/nvdec_ycbcr.h",
    "cc/gpu/nvjpeg_api.h",
    "cc/gpu/nvjpeg_decoder.h",
    "cc/gpu/nvjpeg_loader.h",
    "cc/gpu/stream_warp.h",
    "cc/gpu/task_threads.h",
    "cc/gpu/warp_pixel.h",
]
GPU_OPS_SRCS = [
    "tf_gulp/ops/bzna/decode_hevc_gpu_op.cc",
    "tf_gulp/ops/bzna/decode_hevc_warped_gpu_op.cc",
    "tf_gulp/ops/image/decode_jpeg_warped_gpu_op.cc",
    "tf_gulp/ops/image/similarity_warp_gpu_op.cc",
]
GPU_COPTS = ["-Ithird_party/ffnvcodec/include"]
GPU_NVCC_FLAGS = [
    "-fatbin",
    "-O3",
    "-std=c++17",
    "-gencode=arch=compute_75,code=sm_75",
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
    "-gencode=arch=compute_89,code=sm_89",
    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
]
GPU_KERNELS_SRC = "cc/gpu/similarity_warp_kernels.cu"

# The pybind11 module tf_gulp._core: these plus the core.
PYBIND_SRCS = ["tf_gulp/pybind/*.cc"]
PYBIND_HDRS = ["tf_gulp/pybind/*.h"]

# Every C++ translation unit: the TensorFlow-free core (cc/**), its unit tests and the op kernels.
CORE_COPTS = [
    "-std=c++17",
    "-O3",
    "-fPIC",
    "-DNDEBUG",
    "-Wall",
    "-Wno-sign-compare",
    "-Wno-deprecated-declarations",
]

# libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev) for JPEG decoding, and its libjpeg API
# (Debian: libjpeg62-turbo-dev) for the cropped decodes of cc/codec/jpeg_warp (TurboJPEG 2 cannot
# crop); threads for the I/O.
# nlohmann json (Debian: nlohmann-json3-dev) is header-only and needs no flag.
# liburing (Debian: liburing-dev) for batched async reads (cc/io/batch_reader.*); libdeflate (Debian:
# libdeflate-dev) for its hardware-accelerated CRC-32 (cc/util/crc32.*, FFRecord checksums).
# FFmpeg's libavcodec + libavutil (Debian: libavcodec-dev) decode HEVC on the CPU (cc/codec/hevc_decoder.*).
# libpng (Debian: libpng-dev) decodes the PNG pictures image datasets hold among their JPEGs
# (cc/codec/png_decoder.*).
CORE_LINKOPTS = [
    "-lturbojpeg",
    "-ljpeg",
    "-lpng16",
    "-luring",
    "-ldeflate",
    "-lavcodec",
    "-lavutil",
    "-pthread",
]

# Added to tf_gulp/ops/**/*.cc on top of CORE_COPTS and TensorFlow's compile flags. TensorFlow's headers
# are not -Wall clean with g++.
OPS_COPTS = [
    "-Wno-unused-variable",
    "-Wno-unused-function",
    "-Wno-unused-but-set-variable",
    "-Wno-maybe-uninitialized",
]

# Added when linking tf_gulp/ops/_tf_gulp_ops.so, on top of CORE_LINKOPTS and TensorFlow's link flags.
OPS_LINKOPTS = []

# cc/**/*_test.cc: GoogleTest and GoogleMock from Debian's libgtest-dev / libgmock-dev (static
# libraries in /usr/lib/x86_64-linux-gnu, headers in /usr/include). gtest_main provides main().
TEST_LINKOPTS = [
    "-lgtest_main",
    "-lgmock",
    "-lgtest",
    "-pthread",
]
