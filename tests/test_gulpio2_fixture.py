"""Reading a gulp directory written by gulpio2 0.0.4 (tests/data/gulpio2; see
tests/data/README.md)."""

import hashlib
import json
import pathlib

import numpy as np
import pytest
import simplejpeg

from tf_gulp.gulp import GulpDirectory

FIXTURE = pathlib.Path(__file__).parent / "data" / "gulpio2"
EXPECTED = json.loads((FIXTURE / "EXPECTED.json").read_text())

# expected_frames.npz holds libjpeg-turbo accurate-DCT decodes; read with an accurate-DCT
# jpeg_decoder (simplejpeg), pixels should agree exactly, but a different libjpeg-turbo build
# (SIMD vs C IDCT) may differ by a rounding step: allow at most 2 levels per pixel, 0.05 on average.
MAX_ABS_DIFF = 2
MAX_MEAN_ABS_DIFF = 0.05
# The readers' own decode is GulpDataset's (fast integer IDCT), a few levels from the accurate one.
MAX_FAST_VS_ACCURATE = 8


def accurate_decode(data: bytes) -> np.ndarray:
    """libjpeg-turbo's accurate IDCT (simplejpeg): (H, W) gray or (H, W, 3) RGB."""
    gray = simplejpeg.decode_jpeg_header(data)[2] == "Gray"
    image = simplejpeg.decode_jpeg(data, fastdct=False, colorspace="GRAY" if gray else "RGB")
    return image[..., 0] if gray else image


@pytest.fixture(scope="module")
def gd():
    return GulpDirectory(FIXTURE)


@pytest.fixture(scope="module")
def gd_accurate():
    return GulpDirectory(FIXTURE, jpeg_decoder=accurate_decode)


@pytest.fixture(scope="module")
def expected_frames():
    with np.load(FIXTURE / "expected_frames.npz") as npz:
        return {key: npz[key] for key in npz.files}


def test_ids_and_chunks(gd):
    assert set(gd.merged_meta_dict) == set(EXPECTED["ids"])
    assert gd.num_chunks == 3
    for id_, want in EXPECTED["ids"].items():
        assert f"data_{gd.chunk_lookup[id_]}.gulp" == want["chunk"]
    # Storage order within and across chunks.
    assert list(gd.chunk_lookup) == ["vid_a", "42", "007", "1001", "gray-clip", "img_single"]


@pytest.mark.parametrize("id_", sorted(EXPECTED["ids"]))
def test_frames_meta_and_shapes(gd, id_):
    want = EXPECTED["ids"][id_]
    frames, meta = gd[id_]
    assert meta == want["meta"]
    assert len(frames) == want["num_frames"]
    assert [list(f.shape) for f in frames] == want["shapes"]
    assert all(f.dtype == np.uint8 for f in frames)


@pytest.mark.parametrize("id_", sorted(EXPECTED["ids"]))
def test_jpeg_bytes_sha256(gd, id_):
    jpegs, _ = gd.read_jpegs(id_)
    assert [hashlib.sha256(j).hexdigest() for j in jpegs] == EXPECTED["ids"][id_]["jpeg_sha256"]


@pytest.mark.parametrize("id_", sorted(EXPECTED["ids"]))
def test_decoded_pixels(gd_accurate, expected_frames, id_):
    frames, _ = gd_accurate[id_]
    for k, frame in enumerate(frames):
        want = expected_frames[f"{id_}/{k}"]
        assert frame.shape == want.shape
        diff = np.abs(frame.astype(np.int16) - want.astype(np.int16))
        assert diff.max() <= MAX_ABS_DIFF, (id_, k, diff.max())
        assert diff.mean() <= MAX_MEAN_ABS_DIFF, (id_, k, diff.mean())


@pytest.mark.parametrize("id_", sorted(EXPECTED["ids"]))
def test_default_decode_is_gulp_datasets(gd, expected_frames, id_):
    # GulpDataset's settings: libjpeg-turbo's fast integer IDCT, smooth chroma upsampling.
    frames, _ = gd[id_]
    jpegs, _ = gd.read_jpegs(id_)
    for k, (frame, jpeg) in enumerate(zip(frames, jpegs)):
        gray = simplejpeg.decode_jpeg_header(jpeg)[2] == "Gray"
        fast = simplejpeg.decode_jpeg(jpeg, fastdct=True, fastupsample=False,
                                      colorspace="GRAY" if gray else "RGB")
        assert np.array_equal(frame, fast[..., 0] if gray else fast), (id_, k)
        diff = np.abs(frame.astype(np.int16) - expected_frames[f"{id_}/{k}"].astype(np.int16))
        assert diff.max() <= MAX_FAST_VS_ACCURATE, (id_, k, diff.max())


def test_slices(gd_accurate, expected_frames):
    gd = gd_accurate
    assert EXPECTED["slices"] == {"007[1:10:2]": 5, "007[[0,5,19]]": 3}
    frames, meta = gd["007", 1:10:2]
    assert len(frames) == 5 and meta == EXPECTED["ids"]["007"]["meta"]
    for frame, k in zip(frames, range(1, 10, 2)):
        assert np.abs(frame.astype(int) - expected_frames[f"007/{k}"]).max() <= MAX_ABS_DIFF
    frames, _ = gd["007", [0, 5, 19]]
    assert len(frames) == 3
    for frame, k in zip(frames, [0, 5, 19]):
        assert np.abs(frame.astype(int) - expected_frames[f"007/{k}"]).max() <= MAX_ABS_DIFF


def test_numeric_ids(gd):
    # gulpio2 stored ids 42 and 1001 as strings; ints are accepted when reading.
    assert gd[42][1] == gd["42"][1] == {"label": "dog", "idx": 1, "id": 42, "mode": "RGB",
                                          "num_frames": 13}
    assert len(gd[1001][0]) == 3
    assert "007" in gd and 7 not in gd


def test_file_layout_matches_spec():
    # Every frame: offset a multiple of 4, zero padding, file size == end of the last frame.
    for n in range(3):
        data = (FIXTURE / f"data_{n}.gulp").read_bytes()
        index = json.loads((FIXTURE / f"meta_{n}.gmeta").read_text())
        end = 0
        for entry in index.values():
            for offset, pad, total in entry["frame_info"]:
                assert offset == end and offset % 4 == 0 and 0 <= pad <= 3
                assert data[offset + total - pad:offset + total] == b"\0" * pad
                end = offset + total
        assert len(data) == end
