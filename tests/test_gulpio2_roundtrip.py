"""Compatibility with the gulpio2 package in both directions: gulp directories written here are
read by gulpio2, gulpio2's writer produces the same bytes as ours, and directories gulpio2 writes
are read here. Skipped when gulpio2 (PyPI ``gulpio2``) is not installed."""

import json
import os
import pathlib

import numpy as np
import pytest

gulpio2 = pytest.importorskip(
    "gulpio2", reason="the gulpio2 package (pip install gulpio2) is the reference implementation "
    "these tests compare against")

from tf_gulp.gulp import GulpChunk, GulpDirectory, GulpIngestor  # noqa: E402

from gulp_testing import SyntheticAdapter, make_gulp_dir  # noqa: E402

# gulpio2 decodes with libjpeg-turbo's fast integer IDCT, we with the accurate one: up to 7 levels
# apart measured on random-noise frames (the worst case), 1-2 on smooth ones; allow some margin.
MAX_ABS_DIFF = 12


def mixed_videos():
    """(id, meta, frames) with RGB and gray frames, int and str ids, odd sizes."""
    rng = np.random.default_rng(7)
    return [
        ("clip-a", {"label": "x", "n": 3}, [rng.integers(0, 256, (17, 33, 3), np.uint8)
                                            for _ in range(3)]),
        (42, {"label": "y", "uni": "\u00e9"}, [rng.integers(0, 256, (24, 16), np.uint8)
                                               for _ in range(2)]),
        ("007", {"label": "z", "nan": float("nan")}, [np.full((8, 8, 3), 200, np.uint8)]),
    ]


def close_enough(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype == np.uint8
        assert np.abs(a.astype(int) - b.astype(int)).max() <= MAX_ABS_DIFF


def same_meta(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)   # NaN-safe


def test_same_bytes_as_gulpio2_writer(tmp_path):
    ours = GulpChunk(tmp_path / "data_0.gulp", tmp_path / "meta_0.gmeta")
    theirs = gulpio2.GulpChunk(str(tmp_path / "data_1.gulp"), str(tmp_path / "meta_1.gmeta"))
    for chunk in (ours, theirs):
        with chunk.open("wb"):
            for id_, meta, frames in mixed_videos():
                chunk.append(id_, meta, frames)
    assert (tmp_path / "data_0.gulp").read_bytes() == (tmp_path / "data_1.gulp").read_bytes()
    assert (tmp_path / "meta_0.gmeta").read_text() == (tmp_path / "meta_1.gmeta").read_text()


def test_gulpio2_reads_our_directory(tmp_path):
    # 12 chunks, so gulpio2's string-sorted chunk list (0, 1, 10, 11, 2, ...) is exercised too.
    info = make_gulp_dir(tmp_path / "rgb", 12, [1 + i % 4 for i in range(12)], 20, 28, 1)
    theirs = gulpio2.GulpDirectory(info["path"])
    ours = GulpDirectory(info["path"])
    assert set(theirs.merged_meta_dict) == set(info["ids"])
    for id_ in info["ids"]:
        their_frames, their_meta = theirs[id_]
        our_frames, our_meta = ours[id_]
        assert their_meta == our_meta == info["videos"][id_]["meta"]
        close_enough(our_frames, their_frames)
        their_sub, _ = theirs[id_, 1:]
        assert len(their_sub) == info["videos"][id_]["num_frames"] - 1


def test_gulpio2_reads_our_mixed_and_appended_chunk(tmp_path):
    chunk = GulpChunk(tmp_path / "data_0.gulp", tmp_path / "meta_0.gmeta")
    videos = mixed_videos()
    with chunk.open("wb"):
        for id_, meta, frames in videos[:2]:
            chunk.append(id_, meta, frames)
    with open(chunk.data_file_path, "ab") as f:
        f.write(b"\x07" * 5)   # trailing bytes of an interrupted append
    with chunk.open("ab"):
        id_, meta, frames = videos[2]
        chunk.append(id_, meta, frames)
        chunk.append("clip-a", {"second": True}, videos[0][2][:1])
    theirs = gulpio2.GulpDirectory(str(tmp_path))
    ours = GulpDirectory(tmp_path)
    for id_ in ["clip-a", "42", "007"]:
        their_frames, their_meta = theirs[id_]
        our_frames, our_meta = ours[id_]
        assert same_meta(their_meta, our_meta)
        close_enough(our_frames, their_frames)
    assert len(ours["clip-a"][0]) == 4
    assert ours["42"][0][0].shape == (24, 16)


def test_we_read_gulpio2_ingestor_output(tmp_path):
    adapter = SyntheticAdapter([2, 5, 1, 3, 4], 18, 30, labels=("a", "b"))
    out = tmp_path / "g2"
    out.mkdir()
    gulpio2.GulpIngestor(adapter, str(out), 2, 1)()
    assert sorted(os.listdir(out)) == ["data_0.gulp", "data_1.gulp", "data_2.gulp",
                                       "meta_0.gmeta", "meta_1.gmeta", "meta_2.gmeta"]
    theirs = gulpio2.GulpDirectory(str(out))
    ours = GulpDirectory(out)
    assert ours.chunk_lookup == theirs.chunk_lookup
    for i in range(len(adapter)):
        id_ = f"vid{i:04d}"
        our_frames, our_meta = ours[id_]
        their_frames, their_meta = theirs[id_]
        assert our_meta == their_meta == adapter.meta(i)
        close_enough(our_frames, their_frames)
        assert len(ours[id_, [0, -1]][0]) == 2
    # And our ingestor writes the same files.
    mine = tmp_path / "ours"
    GulpIngestor(adapter, mine, 2, 1, progress=False)()
    for name in os.listdir(out):
        assert (mine / name).read_bytes() == (out / name).read_bytes(), name


def test_we_read_gulpio2_gray_chunk(tmp_path):
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, (12, 20), np.uint8) for _ in range(3)]
    chunk = gulpio2.GulpChunk(str(tmp_path / "data_0.gulp"), str(tmp_path / "meta_0.gmeta"))
    with chunk.open("wb"):
        chunk.append(5, {"gray": True}, frames)
    ours = GulpDirectory(pathlib.Path(tmp_path))
    decoded, meta = ours[5]
    assert meta == {"gray": True} and [f.shape for f in decoded] == [(12, 20)] * 3
    their_decoded, _ = gulpio2.GulpDirectory(str(tmp_path))["5"]
    close_enough(decoded, their_decoded)
