"""gulpio2's helper modules, ``utils`` and ``sanity_utils``, as tf_gulp.gulp.utils and
tf_gulp.gulp.sanity_utils (docs/compat.md): the behaviours gulpio2's test suite expects."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from gulp_testing import SyntheticAdapter, make_gulp_dir, video_id
from ingest_testing import write_png, write_video
from tf_gulp.gulp import GulpDirectory, GulpIngestor, sanity_utils, utils

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None,
                                  reason="the burst helpers run the ffmpeg program, not installed")


def test_jpeg_helpers_round_trip_rgb_and_gray():
    rgb = np.zeros((15, 15, 3), np.uint8)
    rgb[..., 1], rgb[..., 2] = 127, 255
    np.testing.assert_allclose(utils.jpeg_bytes_to_img(utils.img_to_jpeg_bytes(rgb)), rgb, atol=3)
    gray = np.zeros((15, 15), np.uint8)
    gray[10:15] = 255
    back = utils.jpeg_bytes_to_img(utils.img_to_jpeg_bytes(gray))
    assert back.shape == (15, 15)
    np.testing.assert_allclose(back, gray, atol=3)
    with pytest.raises(ValueError, match="Unsupported img shape"):
        utils.img_to_jpeg_bytes(np.zeros((2, 2, 2, 3), np.uint8))


def test_check_ffmpeg_exists_follows_the_path(monkeypatch, tmp_path):
    assert utils.check_ffmpeg_exists() == (shutil.which("ffmpeg") is not None)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert utils.check_ffmpeg_exists() is False
    with pytest.raises(utils.FFMPEGNotFound):
        utils.burst_frames_to_shm("any.mp4", str(tmp_path))


@needs_ffmpeg
def test_burst_video_into_frames(tmp_path):
    video = write_video(tmp_path / "v.mp4", num_frames=20, rate=10)
    with utils.temp_dir_for_bursting(str(tmp_path)) as burst:
        frames = utils.burst_video_into_frames(video, burst)
        assert len(frames) == 20 and frames == sorted(frames)
        assert os.path.basename(frames[0]) == "0000000001.jpg"
    assert not os.path.exists(burst)  # removed afterwards
    with utils.temp_dir_for_bursting(str(tmp_path)) as burst:
        # ffmpeg's -r 5 on 2 s of video: about 10 frames (ffmpeg 5 writes 12: its rounding).
        assert 10 <= len(utils.burst_video_into_frames(video, burst, frame_rate=5)) <= 12


@needs_ffmpeg
def test_burst_of_an_unreadable_video_gives_no_frames(tmp_path, capsys):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    with utils.temp_dir_for_bursting(str(tmp_path)) as burst:
        assert utils.burst_video_into_frames(str(bad), burst) == []
    assert "bad.mp4: ffmpeg failed" in capsys.readouterr().err


def test_resize_by_short_edge():
    out = utils.resize_by_short_edge(np.zeros((6, 10), np.uint8), 3)
    assert out.shape == (3, 5)
    np.testing.assert_array_equal(utils.resize_by_short_edge(np.ones((10, 6), np.uint8), 3),
                                  np.ones((5, 3), np.uint8))
    # The longer side is rounded (gulpio2 truncates: 7 * 100 / 3 = 233.3 -> 233, 2 * 100 / 3 ...).
    assert utils.resize_by_short_edge(np.zeros((3, 7, 3), np.uint8), 100).shape == (100, 233, 3)
    assert utils.resize_by_short_edge(np.zeros((3, 5, 3), np.uint8), 100).shape == (100, 167, 3)
    assert utils.resize_by_short_edge(np.zeros((4, 5), np.uint8), -1).shape == (4, 5)


def test_resize_images_opens_and_resizes_each(tmp_path):
    paths = [write_png(tmp_path / f"{i}.png", np.full((6, 10, 3), 40 * i, np.uint8))
             for i in range(3)]
    kept = list(utils.resize_images(paths))
    assert [k.shape for k in kept] == [(6, 10, 3)] * 3
    resized = list(utils.resize_images(paths, img_size=3))
    assert [r.shape for r in resized] == [(3, 5, 3)] * 3 and resized[2].max() == 80


def test_find_images_and_single_video_path(tmp_path):
    for name in ("b.jpg", "a.jpg", "c.png", "v.mp4"):
        (tmp_path / name).write_bytes(b"")
    assert utils.find_images_in_folder(str(tmp_path)) == [str(tmp_path / "a.jpg"),
                                                          str(tmp_path / "b.jpg")]
    assert len(utils.find_images_in_folder(str(tmp_path), formats=["jpg", "png"])) == 3
    assert utils.get_single_video_path(str(tmp_path)) == str(tmp_path / "v.mp4")
    (tmp_path / "w.mp4").write_bytes(b"")
    for folder in (str(tmp_path), str(tmp_path / "missing")):
        with pytest.raises(AssertionError):
            utils.get_single_video_path(folder)
        with pytest.raises(ValueError, match="expected one"):
            utils.get_single_video_path(folder)


def item(id_):
    return {"meta": {"name": str(id_)}, "frames": [np.ones((4, 1, 3), np.uint8)], "id": id_}


def test_remove_entries_with_duplicate_ids(tmp_path, capsys):
    out = tmp_path / "out"
    GulpIngestor(SyntheticAdapter([1, 1, 1], 8, 8), out, 2, 1, progress=False)()
    fresh = [item("new")]
    assert utils.remove_entries_with_duplicate_ids(str(out), fresh) == fresh
    present = item(video_id(1))
    kept = utils.remove_entries_with_duplicate_ids(str(out), [present, item("x")])
    assert [k["id"] for k in kept] == ["x"]
    assert f"Id {video_id(1)} already in GulpDirectory" in capsys.readouterr().out
    with pytest.raises(utils.DuplicateIdException):
        utils.remove_entries_with_duplicate_ids(str(out), [present])
    # A folder not written yet holds no ids.
    missing = str(tmp_path / "none")
    assert [k["id"] for k in utils.remove_entries_with_duplicate_ids(missing, fresh)] == ["new"]


def test_remove_duplicates_in_metadict(capsys):
    one, two = item(1), item(2)
    assert utils._remove_duplicates_in_metadict([one, two]) == [one, two]
    assert utils._remove_duplicates_in_metadict([one, one, two, one]) == [one, two]
    assert capsys.readouterr().out.count("Id 1 more than once") == 2


# --------------------------------------------------------------------------------------------------
# sanity_utils


def test_sanity_checks_on_a_good_directory(tmp_path):
    make_gulp_dir(tmp_path, 5, 2, 8, 8, videos_per_chunk=2)
    gd = GulpDirectory(tmp_path)
    assert sanity_utils.check_meta_file_size_larger_zero(gd) == []
    assert sanity_utils.check_data_file_size_larger_zero(gd) == []
    assert sanity_utils.check_data_file_size(gd) == []
    assert sanity_utils.check_for_duplicate_ids(gd) == []
    assert sanity_utils.extract_all_ids(gd) == [video_id(i) for i in range(5)]


def test_sanity_checks_find_bad_chunks(tmp_path):
    make_gulp_dir(tmp_path, 4, 2, 8, 8, videos_per_chunk=2)
    gd = GulpDirectory(tmp_path)
    chunks = list(gd.chunks())
    # Extra bytes after the last frame of chunk 1; chunk 0 emptied.
    with open(chunks[1].data_file_path, "ab") as f:
        f.write(b"\0" * 4)
    open(chunks[0].data_file_path, "wb").close()
    assert sanity_utils.check_data_file_size_larger_zero(gd) == [chunks[0].data_file_path]
    assert sanity_utils.check_data_file_size(gd) == [chunks[0].data_file_path,
                                                     chunks[1].data_file_path]
    open(chunks[1].meta_file_path, "w").close()
    assert sanity_utils.check_meta_file_size_larger_zero(gd) == [chunks[1].meta_file_path]
    # An id in two chunks.
    chunks[1].meta_dict[video_id(0)] = chunks[0].meta_dict[video_id(0)]
    assert sanity_utils.check_for_duplicate_ids(gd) == [video_id(0)]


def test_get_duplicate_entries_and_report(capsys):
    assert sanity_utils.get_duplicate_entries([0, 1, 2]) == []
    assert sanity_utils.get_duplicate_entries([0, 1, 1, 1, 2, 2]) == [1, 2]
    sanity_utils.check_for_failures({"message": "ANY", "failures": []})
    sanity_utils.check_for_failures({"message": "ANY", "failures": ["FAILURE"]})
    assert capsys.readouterr().out == ("Sanity Check: ANY\nTest passed\n"
                                       "Sanity Check: ANY\nTest failed for: ['FAILURE']\n")


def test_the_readers_do_not_import_the_compatibility_modules():
    # The gulp readers and writers keep their own settings (the JPEG quality): gulpio2's helper
    # and adapter modules are imported only by code that asks for them.
    code = ("import sys\n"
            "from tf_gulp.gulp import GulpChunk, GulpDirectory, GulpIngestor\n"
            "from tf_gulp.gulp.chunk import default_jpeg_quality\n"
            "assert default_jpeg_quality() == 90\n"
            "compat = {'tf_gulp.gulp.utils', 'tf_gulp.gulp.gulpio2_adapters'} & set(sys.modules)\n"
            "assert not compat, compat\n"
            "from tf_gulp.gulp import utils\n"
            "utils._JPEG_WRITE_QUALITY = 100  # as gulpio2's tests do\n"
            "assert default_jpeg_quality() == 100 and utils._JPEG_WRITE_QUALITY == 100\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=str(pathlib.Path(__file__).resolve().parents[1]))
    assert result.returncode == 0, result.stderr
