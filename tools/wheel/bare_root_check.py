"""Runs inside the bare root file system (tools/wheel/test_bare_root.sh) with only Debian's Python,
the tf_gulp wheel and TensorFlow from PyPI installed: reads every format and decodes JPEG and HEVC.

    python bare_root_check.py DATA_DIR      # DATA_DIR from tools/wheel/make_bare_root_data.py

Exits non-zero (an AssertionError naming what differs) unless every read matches the expected
values written by the reference implementations (see tests/data/README.md).
"""

import hashlib
import json
import os
import sys

import numpy as np
import tensorflow as tf

import tf_gulp
import tf_gulp.ops


def native_libraries() -> list:
    """The shared objects this process has mapped from tf_gulp's wheel (and any libav*/jpeg/uring/
    deflate from elsewhere, which would mean the bundled copies were not used)."""
    found = set()
    with open("/proc/self/maps", encoding="utf-8") as f:
        for line in f:
            path = line.split()[-1]
            name = os.path.basename(path)
            if "tf_gulp" in path or name.startswith(("libav", "libturbojpeg", "liburing",
                                                      "libdeflate", "libjpeg", "libpng")):
                found.add(path)
    return sorted(found)


def fixture_and_expected(data: str, name: str) -> tuple:
    """DATA_DIR/name and the EXPECTED.json its reference implementation wrote there."""
    fixture = os.path.join(data, name)
    with open(os.path.join(fixture, "EXPECTED.json"), encoding="utf-8") as f:
        return fixture, json.load(f)


def check_gulp(data: str) -> None:
    fixture, expected = fixture_and_expected(data, "gulpio2")
    expected = expected["ids"]
    with np.load(os.path.join(fixture, "expected_frames.npz")) as npz:
        frames_want = {key: npz[key] for key in npz.files}
    seen = 0
    for element in tf_gulp.GulpDataset(fixture, dct_method="accurate"):
        id_ = element["id"].numpy().decode()
        frames = element["frames"].numpy()
        assert frames.shape[0] == expected[id_]["num_frames"], (id_, frames.shape)
        for k, frame in enumerate(frames):
            want = frames_want[f"{id_}/{k}"]
            if want.ndim == 2:  # a one-component JPEG; the dataset gives RGB
                want = np.repeat(want[..., None], 3, axis=-1)
            if want.shape[-1] == 1:
                want = np.repeat(want, 3, axis=-1)
            assert frame.shape == want.shape, (id_, k, frame.shape, want.shape)
            diff = np.abs(frame.astype(np.int16) - want.astype(np.int16))
            assert diff.max() <= 2 and diff.mean() <= 0.05, (id_, k, diff.max(), diff.mean())
        seen += 1
    assert seen == len(expected), (seen, len(expected))
    print(f"gulp directory (gulpio2 0.0.4): {seen} items, every JPEG frame within 2 levels of "
          f"libjpeg-turbo's reference decode")


def check_ffrecord(data: str) -> None:
    fixture, expected = fixture_and_expected(data, "ffrecord")
    three = [x.numpy() for x in tf_gulp.FFRecordDataset(os.path.join(fixture, "three.ffr"))]
    assert three == [b"A", b"BBB", b"\x00\x01\x02\x03\xff"], three
    multi = [hashlib.sha256(x.numpy()).hexdigest()
             for x in tf_gulp.FFRecordDataset(os.path.join(fixture, "multi"))]
    want = (expected["multi/PART_00000.ffr"]["sha256"] + expected["multi/PART_00001.ffr"]["sha256"])
    assert multi == want, "multi/: sample SHA-256s differ"
    print(f"FFRecord (HFAiLab/ffrecord): three.ffr and multi/ ({len(multi)} samples) byte-exact, "
          f"checksums verified")


def check_hevc(data: str) -> None:
    fixture, expected = fixture_and_expected(data, "hevc")
    with np.load(os.path.join(fixture, "expected_pixels.npz")) as npz:
        pixels = {key: npz[key] for key in npz.files}
    for name in sorted(expected):
        with open(os.path.join(fixture, f"{name}.mp4"), "rb") as f:
            contents = f.read()
        ours = tf_gulp.ops.decode_hevc(contents, crop="full", chroma_upsampling="nearest").numpy()
        theirs = pixels[f"{name}/ffmpeg_decoded"]
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        diff = np.abs(ours.astype(np.int16) - theirs.astype(np.int16)).max()
        assert diff <= 2, (name, diff)
    print(f"HEVC MP4s (x265/FFmpeg): {len(expected)} pictures within 2 levels of FFmpeg's decode")

    with np.load(os.path.join(data, "bzna_sources.npz")) as npz:
        sources = {key: npz[key] for key in npz.files}
    classes = sorted({key.split("/")[0] for key in sources})
    got = list(tf_gulp.BenzinaDataset(os.path.join(data, "images.bzna")).as_numpy_iterator())
    assert len(got) == len(sources), (len(got), len(sources))
    for x in got:
        h, w, _ = x["image"].shape
        (key,) = [k for k in sources if k.endswith(f"/{h}x{w}")]
        err = np.abs(x["image"].astype(np.int16) - sources[key]).mean()
        assert err < 4.0, (key, err)  # x265 + 4:2:0 loss
        assert int(x["label"]) == classes.index(key.split("/")[0]), (key, x["label"])
    print(f"Benzina file: {len(got)} HEVC pictures decoded, mean error vs the sources < 4 levels, "
          f"labels right")


def main(data: str) -> int:
    info_path = os.path.join(os.path.dirname(tf_gulp.ops.__file__), "_build_info.json")
    with open(info_path, encoding="utf-8") as f:
        info = json.load(f)
    print(f"TensorFlow {tf.__version__}; tf_gulp {tf_gulp.__version__} from "
          f"{os.path.dirname(tf_gulp.__file__)}, built for TensorFlow {info['tensorflow_version']}")
    check_gulp(data)
    check_ffrecord(data)
    check_hevc(data)
    libs = native_libraries()
    print("native libraries mapped:\n  " + "\n  ".join(libs))
    # The bare root has none of these libraries; a system copy here would mean the wheel relied on
    # the machine it was built on. (Other wheels' own copies, e.g. pillow.libs/, are theirs.)
    outside = [p for p in libs if "/site-packages/" not in p]
    assert not outside, f"libraries loaded from outside the installed wheels: {outside}"
    for stem in ("libavcodec", "libavutil", "libturbojpeg", "libjpeg", "libpng16", "liburing",
                 "libdeflate"):
        assert any(f"tf_gulp.libs/{stem}-" in p for p in libs), f"no bundled {stem} was loaded"
    print("bare root check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
