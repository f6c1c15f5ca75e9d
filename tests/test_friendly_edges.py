"""The small edges of issue 34: an unfinished gulp directory is read with a warning naming what is
written and what is missing; "no video files" names where it looked, the layout it expects and a
few extensions, not all; progress bars draw only on a terminal (Python and CLI alike)."""

from __future__ import annotations

import io
import json
import os
import sys
import warnings

import pytest

import tf_gulp
from tf_gulp.gulp import GulpIngestor
from tf_gulp.gulp.adapters import VideoFolderAdapter
from tf_gulp.gulp.ingest_record import INGEST_RECORD, UnfinishedIngestWarning

from gulp_testing import SyntheticAdapter
from ingest_testing import make_image_folder, run_cli


def test_unfinished_ingest_is_read_with_a_warning_naming_the_counts(tmp_path):
    path = tmp_path / "g"
    adapter = SyntheticAdapter([2] * 10, 16, 16)
    GulpIngestor(adapter, str(path), 3, num_workers=1, progress=False, resumable=True)()
    # As an ingest stopped after two of its four chunks: the record says unfinished, the last two
    # chunks' indexes are not written yet.
    record_path = path / INGEST_RECORD
    record = json.loads(record_path.read_text())
    record["runs"][-1]["complete"] = False
    record_path.write_text(json.dumps(record))
    for n in (2, 3):
        os.remove(path / f"meta_{n}.gmeta")
    with pytest.warns(UnfinishedIngestWarning,
                      match=r"unfinished .*: 6 of its 10 items are written \(2 of 4 chunks\), 4 "
                            r"are missing"):
        ds = tf_gulp.GulpDataset(str(path), label_field=None)
    assert len(list(ds)) == 6
    # A finished ingest reads without a word.
    record["runs"][-1]["complete"] = True
    record_path.write_text(json.dumps(record))
    GulpIngestor(adapter, str(tmp_path / "h"), 3, num_workers=1, progress=False,
                 resumable=True)()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfinishedIngestWarning)
        tf_gulp.GulpDataset(str(tmp_path / "h"), label_field=None)


def test_no_video_files_names_the_folder_the_layout_and_a_few_extensions(tmp_path):
    make_image_folder(tmp_path / "clips", {"a": 1})  # images, not videos
    (tmp_path / "clips" / "loose.mp4").write_bytes(b"x")  # a video outside any class folder
    with pytest.raises(ValueError) as e:
        VideoFolderAdapter(str(tmp_path / "clips"))
    message = str(e.value)
    assert f"looked in {tmp_path / 'clips'} for <class>/<file>" in message, message
    assert ".mp4, .avi, .mkv, .webm, .mov, .mpg and " in message and " more" in message, message
    assert "the 1 video files directly in it belong to no class" in message, message
    assert message.count(", .") == 5, message  # six extensions named, not ~180


def test_progress_bars_only_on_a_terminal(tmp_path, monkeypatch):
    from tf_gulp._progress import progress_bar

    not_a_terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", not_a_terminal)
    with progress_bar(True, total=3, desc="x", file=not_a_terminal) as bar:
        bar.update(3)
    assert not_a_terminal.getvalue() == ""
    # The Python ingest with progress=True (its default) draws nothing into a log.
    GulpIngestor(SyntheticAdapter([2] * 2, 8, 8), str(tmp_path / "g"), 1, num_workers=1)()
    assert "ingest" not in not_a_terminal.getvalue()


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal():
    from tf_gulp._progress import progress_bar

    terminal = FakeTerminal()
    with progress_bar(True, total=3, desc="x", file=terminal) as bar:
        bar.update(3)
    assert "3/3" in terminal.getvalue()
    quiet = FakeTerminal()
    with progress_bar(False, total=3, desc="x", file=quiet) as bar:
        bar.update(3)
    assert quiet.getvalue() == ""


def test_cli_progress_only_on_a_terminal(tmp_path):
    make_image_folder(tmp_path / "imgs", {"a": 2})
    code, out, err = run_cli("ingest", "image-folder", tmp_path / "imgs", tmp_path / "out")
    assert code == 0, err
    assert "it/s" not in err and "item/s" not in err and "\r" not in err, err
