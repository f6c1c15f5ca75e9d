"""A container written by Benzina's own toolchain (tests/data/bzna_reference/, not by tf_gulp's box
writer): tf_gulp reads its bytes, its short target track and its pixels as the reference's tools
do. Expectations come from the fixture's EXPECTED.json (pybenzinaparse, Benzina v0.0.5's reader)
and expected_pixels.npz (ffmpeg's decode), never from tf_gulp."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import tf_gulp
from tf_gulp.bzna import BenzinaDataset, read_container

DATA = Path(__file__).parent / "data" / "bzna_reference"
PATH = str(DATA / "reference_tail.bzna")


@pytest.fixture(scope="module")
def expected():
    return json.loads((DATA / "EXPECTED.json").read_text())["containers"]["reference_tail"]


@pytest.fixture(scope="module")
def samples():
    return list(BenzinaDataset(PATH, decode=False).as_numpy_iterator())


def test_the_fixture_is_the_reference_file(expected):
    data = (DATA / "reference_tail.bzna").read_bytes()
    assert len(data) == expected["file_bytes"]
    assert hashlib.sha256(data).hexdigest() == expected["sha256"]


def test_entry_bytes_are_the_per_image_mp4s(expected, samples):
    data = (DATA / "reference_tail.bzna").read_bytes()
    assert [int(x["index"]) for x in samples] == list(range(len(expected["samples"])))
    for x, want in zip(samples, expected["samples"]):
        mp4 = want["per_image_mp4"]
        assert x["sample"] == data[mp4["offset"]:mp4["offset"] + mp4["size"]], want["filename"]
        assert hashlib.sha256(x["sample"]).hexdigest() == mp4["sha256"], want["filename"]


def test_the_short_target_track_labels_the_tail_minus_one(expected, samples):
    """Benzina v0.0.5's reader: entries past the end of the bzna_target track have no target (-1);
    the targets are 8-byte little-endian integers (one above 2**32)."""
    reference = expected["benzina_v0.0.5_reader"]
    assert [int(x["label"]) for x in samples] == reference["targets"]
    assert [s["target"] if s["has_target"] else -1 for s in expected["samples"]] == \
        reference["targets"]
    container = read_container(PATH)
    assert container.entries == reference["entries"] == expected["tracks"]["bzna_input"]["samples"]
    assert container.targets == reference["target_track_entries"] == \
        expected["tracks"]["bzna_target"]["samples"]
    labelled = list(BenzinaDataset(PATH).as_numpy_iterator())
    assert [int(x["label"]) for x in labelled] == reference["targets"]


def test_pixels_within_two_levels_of_ffmpeg(expected, samples):
    """ffmpeg's `-sws_flags neighbor` decode (chroma repeated, as `chroma_upsampling="nearest"`),
    cropped to the clean aperture: every channel of every pixel within 2 levels (rounding of the
    two Y'CbCr -> RGB conversions)."""
    pixels = np.load(DATA / "expected_pixels.npz")
    checked = 0
    for x, want in zip(samples, expected["samples"]):
        i = want["index"]
        got = tf_gulp.ops.decode_hevc(x["sample"], chroma_upsampling="nearest").numpy()
        ref = pixels[f"reference_tail/{i}/neighbor"]
        assert got.shape == ref.shape == (want["height"], want["width"], 3), want["filename"]
        diff = np.abs(got.astype(np.int16) - ref)
        assert diff.max() <= 2, (want["filename"], int(diff.max()))
        checked += 1
        key = f"reference_tail/{i}/thumb_neighbor"
        if key in pixels.files:  # a separate, smaller thumbnail picture
            thumb = tf_gulp.ops.decode_hevc(x["sample"], track="bzna_thumb",
                                            chroma_upsampling="nearest").numpy()
            assert thumb.shape == pixels[key].shape
            assert np.abs(thumb.astype(np.int16) - pixels[key]).max() <= 2, want["filename"]
            checked += 1
    assert checked == len(pixels.files)
