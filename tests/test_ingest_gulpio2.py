"""gulpio2 compatibility of the ingestion tools: what ``tf-gulp ingest`` writes is read by
gulpio2 (and passes its sanity checks), and ``tf-gulp check`` accepts directories gulpio2 writes.
Skipped when gulpio2 is not installed."""

import pathlib
import shutil

import numpy as np
import pytest

pytest.importorskip("gulpio2", reason="gulpio2 is the reference implementation")
pytest.importorskip("av")

import simplejpeg  # noqa: E402
import gulpio2.adapters  # noqa: E402
from gulpio2 import sanity_utils  # noqa: E402

from tf_gulp.gulp import GulpDirectory  # noqa: E402
from tf_gulp.gulp.check import check_directory  # noqa: E402

from ingest_testing import make_image_folder, make_video_folder, red_level, run_cli  # noqa: E402


def gulpio2_sane(path):
    gd = gulpio2.GulpDirectory(str(path))
    for test in (sanity_utils.check_meta_file_size_larger_zero,
                 sanity_utils.check_data_file_size_larger_zero,
                 sanity_utils.check_data_file_size, sanity_utils.check_for_duplicate_ids):
        assert test(gd) == [], test.__name__
    return gd


def test_gulpio2_reads_ingested_videos(tmp_path):
    make_video_folder(tmp_path / "v", {"a": 3, "b": 2}, num_frames=7)
    code, _, err = run_cli("ingest", "video-folder", tmp_path / "v", tmp_path / "g",
                           "--videos-per-chunk", "2", "--fps", "25", "--shorter-side", "24")
    assert code == 0, err
    theirs = gulpio2_sane(tmp_path / "g")
    ours = GulpDirectory(tmp_path / "g")
    assert set(theirs.merged_meta_dict) == set(ours.merged_meta_dict)
    for v, id_ in enumerate(sorted(ours.merged_meta_dict)):
        frames, meta = theirs[id_]
        assert meta == ours[id_][1] and len(frames) == 7
        assert frames[0].shape == (24, 32, 3)
        assert abs(frames[3][..., 0].mean() - red_level(v, 3)) < 8
        assert len(theirs[id_, 2:5][0]) == 3


def test_gulpio2_reads_ingested_images_stored_as_they_are(tmp_path):
    make_image_folder(tmp_path / "i", {"x": 2, "y": 2})
    code, _, err = run_cli("ingest", "image-folder", tmp_path / "i", tmp_path / "g",
                           "--videos-per-chunk", "3")
    assert code == 0, err
    theirs = gulpio2_sane(tmp_path / "g")
    frames, meta = theirs["y/i01.jpg"]
    source = simplejpeg.decode_jpeg((tmp_path / "i" / "y" / "i01.jpg").read_bytes(),
                                    fastdct=True, fastupsample=True)
    assert np.array_equal(frames[0], source) and meta["label"] == "y"


class Gulpio2Adapter(gulpio2.adapters.AbstractDatasetAdapter):
    """Seven clips of 1-3 frames of different sizes (gulpio2 pickles it to its workers)."""

    def __len__(self):
        return 7

    def iter_data(self, slice_element=None):
        for i in range(7)[slice_element or slice(None)]:
            frames = [np.full((10 + i, 12, 3), 30 * j, np.uint8) for j in range(1 + i % 3)]
            yield {"id": i, "meta": {"label": "l%d" % (i % 2)}, "frames": frames}


def test_check_accepts_what_gulpio2_writes(tmp_path):
    out = tmp_path / "g"
    gulpio2.GulpIngestor(Gulpio2Adapter(), str(out), 2, 1)()
    report = check_directory(str(out), decode=True)
    assert report.ok and not report.problems and report.ids == 7 and report.chunks == 4
    code, stdout, _ = run_cli("check", out, "--decode")
    assert code == 0 and stdout.strip().endswith("OK")
    # And the fixture from the reference implementation (copied, to check a writable copy).
    fixture = tmp_path / "fixture"
    shutil.copytree(pathlib.Path(__file__).parent / "data" / "gulpio2", fixture)
    assert check_directory(str(fixture), decode=True).problems == []
