"""``tf-gulp info``: counts, frame-size histogram, JPEG kinds, labels, the ingest record."""

import json
import os
import pathlib

from gulp_testing import make_gulp_dir
from ingest_testing import run_cli

FIXTURE = pathlib.Path(__file__).parent / "data" / "gulpio2"


def test_info_text_on_the_gulpio2_fixture():
    code, out, err = run_cli("info", FIXTURE)
    assert code == 0, err
    for line in ("chunks        3", "items         6", "frames        49"):
        assert line in out
    assert "64x48" in out and "48x64" in out and "33x17" in out
    assert "YCbCr 444 (5), Gray (1)" in out
    assert "labels (3 distinct in 'label', label2idx.json has 3)" in out
    assert "cat  [0]" in out


def test_info_json(tmp_path):
    info = make_gulp_dir(tmp_path / "g", 5, [1, 2, 3, 4, 5], 16, 24, 2, labels=("a", "b", "a"))
    code, out, err = run_cli("info", info["path"], "--json", "--all-frames")
    assert code == 0, err
    data = json.loads(out)
    assert data["chunks"] == 3 and data["items"] == 5 and data["frames"] == 15
    assert data["frame_sizes"] == {"24x16": 15}
    assert data["frames_per_item"] == {"min": 1, "median": 3, "mean": 3.0, "max": 5}
    assert data["labels"] == [{"label": "a", "count": 3, "index": 0},
                              {"label": "b", "count": 2, "index": 1}]
    assert data["data_bytes"] == sum(os.path.getsize(os.path.join(info["path"], f"data_{n}.gulp"))
                                     for n in range(3))
    assert data["ingest"] is None
    code, out, _ = run_cli("info", info["path"], "--label-field", "nothing")
    assert code == 0 and "labels        none in 'nothing'" in out


def test_info_shows_how_it_was_ingested(tmp_path):
    from gulp_testing import SyntheticAdapter
    from tf_gulp.gulp.ingest import GulpIngestor
    GulpIngestor(SyntheticAdapter([1, 1], 8, 8), tmp_path / "o", 1, 1, progress=False,
                 resumable=True)()
    code, out, _ = run_cli("info", tmp_path / "o")
    assert code == 0 and "ingest 1      2 items in 2 chunks, complete" in out


def test_info_on_a_broken_directory_is_one_line(tmp_path):
    info = make_gulp_dir(tmp_path / "g", 2, 1, 8, 8, 1)
    (pathlib.Path(info["path"]) / "meta_1.gmeta").write_text("{broken")
    code, out, err = run_cli("info", info["path"])
    assert code == 1 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "meta_1.gmeta" in lines[0] and "tf-gulp check" in lines[0]
