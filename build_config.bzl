# Compiler and linker flags shared by both builds of tf_gulp: Bazel (BUILD, cc/BUILD load this file)
# and pip (setup.py exec()s it as Python). Keep it to plain list assignments of string literals, the
# subset of Starlark that is also Python. TensorFlow's own flags are not here: both builds take them
# from tf.sysconfig.get_compile_flags() / get_link_flags() of the installed TensorFlow.

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

# libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev) for JPEG decoding; threads for the I/O.
# nlohmann json (Debian: nlohmann-json3-dev) is header-only and needs no flag.
# liburing (Debian: liburing-dev) for batched async reads (cc/io/batch_reader.*); libdeflate (Debian:
# libdeflate-dev) for its hardware-accelerated CRC-32 (cc/util/crc32.*, FFRecord checksums).
# FFmpeg's libavcodec + libavutil (Debian: libavcodec-dev) decode HEVC on the CPU (cc/codec/hevc_decoder.*).
CORE_LINKOPTS = [
    "-lturbojpeg",
    "-luring",
    "-ldeflate",
    "-lavcodec",
    "-lavutil",
    "-pthread",
]

# Added to tf_gulp/ops/*.cc on top of CORE_COPTS and TensorFlow's compile flags. TensorFlow's headers
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
