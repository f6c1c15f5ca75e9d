"""The x265 encoder options ``tf_gulp.bzna.create_dataset`` and ``tf-gulp bzna create`` accept.

Apart from the writer so that the command line can offer them as choices without importing it
(numpy, the C++ core).
"""

#: x265's presets, fastest first.
X265_PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow",
                "slower", "veryslow", "placebo")
#: x265's constant rate factor range (whole numbers here): 0 is lossless-like, 51 the smallest.
X265_CRF_RANGE = (0, 51)
