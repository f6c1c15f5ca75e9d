"""tf_gulp.ops.decode_hevc: pixels of the FFmpeg/x265 fixtures, crops, Debian ffmpeg cross-check,
graph use and bad input.

Tolerances: libavcodec's HEVC decode is bit-exact (the Y'CbCr planes are the same everywhere); only
the conversion to RGB differs. With chroma_upsampling="nearest" our conversion matches FFmpeg's
swscale (yuvj420p -> rgb24) within 2 levels per value; with "bilinear" (default) it differs where
colour changes (mean < 1.5 levels) and is closer to the source image than FFmpeg's.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
import tensorflow as tf

import tf_gulp.ops
from hevc_testing import HEVC_DIR, NAMES, expected, expected_pixels, ffmpeg_rgb, ffprobe, have_ffmpeg


def read(name) -> bytes:
    return (HEVC_DIR / f"{name}.mp4").read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_pixels_match_ffmpeg_and_source(name):
    exp = expected()[name]
    pixels = expected_pixels()
    ref = pixels[f"{name}/ffmpeg_decoded"].astype(np.int16)
    source = pixels[f"{name}/source"].astype(np.int16)
    full_nearest = tf_gulp.ops.decode_hevc(read(name), crop="full", chroma_upsampling="nearest").numpy()
    assert full_nearest.dtype == np.uint8 and list(full_nearest.shape) == exp["frame_hw"] + [3]
    assert np.abs(full_nearest.astype(np.int16) - ref).max() <= 2
    full = tf_gulp.ops.decode_hevc(read(name), crop="full").numpy()
    assert np.abs(full.astype(np.int16) - ref).mean() < 1.5
    h, w = exp["image_hw"]
    ours_err = np.abs(full[:h, :w].astype(np.int16) - source).mean()
    assert ours_err <= exp["mean_abs_err_vs_source"] + 0.05, ours_err


def test_clean_crop_uses_tkhd_size():
    """FFmpeg's muxer writes the coded size in tkhd and no clap: clean == full for the fixtures."""
    for name in NAMES:
        clean = tf_gulp.ops.decode_hevc(read(name)).numpy()
        assert list(clean.shape[:2]) == expected()[name]["frame_hw"]


def test_sample_size_without_decoding_is_the_decoded_size():
    """hevc_sample_size (DataLoader's device-decode path makes warp matrices from it)."""
    from tf_gulp.ops.bzna.hevc_ops import hevc_sample_size

    for name in NAMES:
        for crop in ("clean", "full"):
            size = hevc_sample_size(read(name), crop=crop).numpy()
            assert size.dtype == np.int32
            assert list(size) == list(tf_gulp.ops.decode_hevc(read(name), crop=crop).shape[:2])
    with pytest.raises(tf.errors.DataLossError, match="sample 9"):
        hevc_sample_size(read(NAMES[0])[:100], what="sample 9")


@pytest.mark.skipif(not have_ffmpeg(), reason="Debian's ffmpeg/ffprobe not installed")
def test_sample_size_coded_is_the_size_the_picture_is_coded_at():
    """crop="coded": the SPS's size (what NVDEC's decoders are created for), as ffprobe reports
    the stream's coded size; decode_hevc's max_size takes the batch's largest."""
    from tf_gulp.ops.bzna.hevc_ops import hevc_sample_size

    for name in NAMES:
        stream = ffprobe(HEVC_DIR / f"{name}.mp4")["streams"][0]
        coded = hevc_sample_size(read(name), crop="coded").numpy()
        assert list(coded) == [stream["coded_height"], stream["coded_width"]], name
    with pytest.raises(tf.errors.DataLossError, match="sample 9"):
        hevc_sample_size(read(NAMES[0])[:100], crop="coded", what="sample 9")


def test_max_size_is_checked_and_leaves_the_cpu_decode_as_it_is():
    plain = tf_gulp.ops.decode_hevc(read("square512")).numpy()
    sized = tf_gulp.ops.decode_hevc(read("square512"), max_size=[1024, 2048]).numpy()
    np.testing.assert_array_equal(sized, plain)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"max_size must be \[height, width\]"):
        tf_gulp.ops.decode_hevc(read("square512"), max_size=[1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_size must be >= 0"):
        tf_gulp.ops.decode_hevc(read("square512"), max_size=[-1, 5])


@pytest.mark.skipif(not have_ffmpeg(), reason="Debian's ffmpeg/ffprobe not installed")
def test_debian_ffmpeg_agrees():
    for name in NAMES:
        info = ffprobe(HEVC_DIR / f"{name}.mp4")
        stream = info["streams"][0]
        assert stream["codec_name"] == "hevc" and stream["codec_tag_string"] == "hvc1"
        h, w = expected()[name]["frame_hw"]
        assert (stream["height"], stream["width"]) == (h, w)
        theirs = ffmpeg_rgb(HEVC_DIR / f"{name}.mp4", w, h).astype(np.int16)
        ours = tf_gulp.ops.decode_hevc(read(name), crop="full", chroma_upsampling="nearest").numpy()
        assert np.abs(ours.astype(np.int16) - theirs).max() <= 2


def test_in_a_parallel_dataset_map():
    files = [read(n) for n in NAMES] * 4
    ds = tf.data.Dataset.from_tensor_slices(files).map(
        lambda b: tf.shape(tf_gulp.ops.decode_hevc(b)), num_parallel_calls=4)
    shapes = [tuple(s) for s in ds.as_numpy_iterator()]
    assert shapes == [(512, 512, 3), (512, 512, 3), (1024, 1024, 3)] * 4


def sample_range(data: bytes):
    """(offset, size) of the only sample (stco + stsz of the fixture)."""
    i = data.index(b"stsz")
    size = struct.unpack(">I", data[i + 16:i + 20])[0]
    j = data.index(b"stco")
    offset = struct.unpack(">I", data[j + 12:j + 16])[0]
    return offset, size


def test_bad_input_is_data_loss_naming_the_sample():
    good = read("square512")
    with pytest.raises(tf.errors.DataLossError, match="my sample 7"):
        tf_gulp.ops.decode_hevc(good[: len(good) // 2], what="my sample 7")  # moov cut off
    with pytest.raises(tf.errors.DataLossError, match="moov"):
        tf_gulp.ops.decode_hevc(b"\x00\x00\x00\x10free" + b"x" * 8)
    with pytest.raises(tf.errors.DataLossError):
        tf_gulp.ops.decode_hevc(b"")
    # A box size that lies.
    bad = bytearray(good)
    m = bad.index(b"moov") - 4
    bad[m:m + 4] = struct.pack(">I", 1 << 31)
    with pytest.raises(tf.errors.DataLossError, match="past the end"):
        tf_gulp.ops.decode_hevc(bytes(bad))
    # Not HEVC: the sample entry renamed, so there is no hvcC to decode with.
    bad = bytearray(good)
    k = bad.index(b"hvc1")
    bad[k:k + 4] = b"avc1"
    with pytest.raises(tf.errors.DataLossError, match="no HEVC track"):
        tf_gulp.ops.decode_hevc(bytes(bad))
    # A NAL length that runs past the sample.
    offset, size = sample_range(good)
    bad = bytearray(good)
    bad[offset:offset + 4] = struct.pack(">I", size + 10)
    with pytest.raises(tf.errors.DataLossError, match="past the end of the sample"):
        tf_gulp.ops.decode_hevc(bytes(bad))
    # A truncated HEVC bitstream: the slice NAL cut short (lengths kept consistent).
    data = good[offset:offset + size]
    pos, nals = 0, []
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        nals.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    nals[-1] = nals[-1][: len(nals[-1]) // 3]
    sample = b"".join(struct.pack(">I", len(x)) + x for x in nals)
    bad = bytearray(good)
    bad[offset:offset + len(sample)] = sample
    bad[offset + len(sample):offset + size] = b"\x00" * (size - len(sample))
    i = bad.index(b"stsz")
    bad[i + 16:i + 20] = struct.pack(">I", len(sample))
    with pytest.raises(tf.errors.DataLossError):
        tf_gulp.ops.decode_hevc(bytes(bad))


def test_bad_arguments():
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf_gulp.ops.decode_hevc([read("square512")])
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError, TypeError)):
        tf_gulp.ops.decode_hevc(read("square512"), crop="middle")


# -- NAL length sizes of 1 and 2 bytes (issue 25) ------------------------------------------------


def _relength(sample: bytes, size: int) -> bytes:
    """`sample` (4-byte NAL lengths) with `size`-byte lengths instead."""
    out, at = b"", 0
    while at < len(sample):
        n = struct.unpack(">I", sample[at:at + 4])[0]
        assert n < 1 << (8 * size), "a NAL unit too long for this length size"
        out += n.to_bytes(size, "big") + sample[at + 4:at + 4 + n]
        at += 4 + n
    return out


def _with_length_size(hvcc: bytes, size: int) -> bytes:
    """The hvcC box with lengthSizeMinusOne = size - 1 (the low 2 bits of payload byte 21)."""
    at = 8 + 21
    return hvcc[:at] + bytes([(hvcc[at] & 0xFC) | (size - 1)]) + hvcc[at + 1:]


def _image_mp4(hvcc: bytes, sample: bytes, w: int, h: int) -> bytes:
    from tf_gulp.bzna import container as C

    head = C.ftyp()
    return head + C.box(b"mdat", sample) + C.moov([C.TrackSpec(
        "bzna_input", [len(head) + 8], [len(sample)], hevc=(hvcc, w, h), clean=(w, h))])


def test_nal_length_sizes_1_and_2_decode_like_4(tmp_path):
    """ISO/IEC 14496-15 allows 1-, 2- and 4-byte NAL unit lengths (lengthSizeMinusOne 0, 1, 3).
    A picture whose NAL units all fit decodes the same with each, by decode_hevc and by
    BenzinaDataset (which reads an entry's bytes, then decodes them); an hvcC saying 1 byte over
    samples written with 4 is refused, not decoded into something else."""
    from tf_gulp.bzna import container as C
    from tf_gulp.bzna.create import encode_hevc
    from tf_gulp.bzna.dataset import BenzinaDataset

    rgb = np.zeros((64, 64, 3), np.uint8)
    rgb[..., 0] = 200
    rgb[32:, :, 1] = 90
    hvcc, sample = encode_hevc(rgb, crf=20, preset="ultrafast")
    reference = tf_gulp.ops.decode_hevc(_image_mp4(hvcc, sample, 64, 64)).numpy()
    entries = []
    for size in (1, 2):
        entry = _image_mp4(_with_length_size(hvcc, size), _relength(sample, size), 64, 64)
        np.testing.assert_array_equal(tf_gulp.ops.decode_hevc(entry).numpy(), reference)
        entries.append(entry)
    head = C.ftyp()
    offsets = [len(head) + 8 + sum(len(e) for e in entries[:i]) for i in range(len(entries))]
    at = offsets[-1] + len(entries[-1])
    path = tmp_path / "sizes.bzna"
    path.write_bytes(head + C.box(b"mdat", b"".join(entries) + struct.pack("<qq", 0, 1))
                     + C.moov([C.TrackSpec("bzna_input", offsets, [len(e) for e in entries]),
                               C.TrackSpec("bzna_target", [at, at + 8], [8, 8])]))
    for x in BenzinaDataset(str(path)).as_numpy_iterator():
        np.testing.assert_array_equal(x["image"], reference)
    wrong = _image_mp4(_with_length_size(hvcc, 1), sample, 64, 64)
    with pytest.raises(tf.errors.DataLossError, match="NAL unit at byte 0 has length 0"):
        tf_gulp.ops.decode_hevc(wrong)


def test_a_box_type_that_is_not_text_is_quoted_escaped():
    """decode_hevc's message quotes the box type escaped: a str, never a UnicodeDecodeError."""
    data = struct.pack(">I", 100) + b"\xc3(\xff\x00" + bytes(8)
    with pytest.raises(tf.errors.DataLossError) as e:
        tf_gulp.ops.decode_hevc(data)
    assert ("HEVC MP4 sample (16 bytes): box '\\xc3(\\xff\\x00' at byte offset 0 has size 100, "
            "past the end of its parent (16 bytes left)") in e.value.message
