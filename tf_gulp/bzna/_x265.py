"""The x265 encoder options ``tf_gulp.bzna.create_dataset`` and ``tf-gulp bzna create`` accept.

Apart from the writer so that the command line can offer them as choices without importing it
(numpy, the C++ core).
"""

#: x265's presets, fastest first.
X265_PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow",
                "slower", "veryslow", "placebo")
#: x265's constant rate factor range (whole numbers here): 0 is lossless-like, 51 the smallest.
X265_CRF_RANGE = (0, 51)
#: The reference toolchain's crf: ``crf="reference"`` (``--crf reference``) asks for it where output
#: made as the reference makes it matters.
REFERENCE_CRF = 10
#: The default crf: the largest whose PSNR is still JPEG quality 90's (4:2:0, the chroma the HEVC
#: pictures have) at fewer bytes, measured by bench/bench_bzna_size.py on real photos
#: (docs/benchmarks.md). Against the 4:4:4 JPEGs of a gulp directory no crf does both: the 4:2:0
#: chroma caps the HEVC pictures' PSNR.
DEFAULT_CRF = 28
