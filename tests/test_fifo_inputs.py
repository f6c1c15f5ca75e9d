"""A data file that is a FIFO (named pipe) is refused at once, by every reader.

Opening a FIFO for reading blocks until a writer appears, which may be never: a ``.gmeta``,
``.gulp``, ``.ffr`` or ``.bzna`` that is a FIFO used to hang GulpDataset, FFRecordDataset,
FileReader, GulpDirectory and ``tf-gulp info`` forever. Only regular files are read now; anything
else is a clear error naming the file. Each entry point runs in a child process with a time limit
(tests/child_testing.py), so a regression fails here, naming the entry point, instead of hanging.
"""

from __future__ import annotations

import os

import pytest

from child_testing import run_entry_points
from ffrecord_testing import ffrecord_bytes
from formats_testing import Format, format_params
from gulp_testing import make_gulp_dir
from ingest_testing import REPO_ROOT


def fifo(path) -> str:
    path = os.fspath(path)
    if os.path.exists(path):
        os.remove(path)
    os.mkfifo(path)
    return path


def expect_refused(results, name, path, types):
    r = results[name]
    assert r["type"] in types, f"{name}: {r}"
    assert path in r["message"] and "FIFO" in r["message"], f"{name}: {r}"


@pytest.mark.parametrize("fmt", format_params())
def test_every_dataset_refuses_a_fifo(tmp_path_factory, fmt: Format):
    """Each format of the registry (tests/formats_testing.py): its dataset over a tiny dataset
    whose files, one at a time, are FIFOs, is refused naming the FIFO."""
    entries, fifos = [], {}
    first = fmt.write(tmp_path_factory.mktemp("fifo"), 6)
    for k in range(len(fmt.fifo_files(first))):
        w = first if k == 0 else fmt.write(tmp_path_factory.mktemp("fifo"), 6)
        path = fifo(fmt.fifo_files(w)[k])
        fifos[path] = f"{fmt.dataset} {os.path.basename(path)}"
        entries.append((fifos[path], f"""
            import sys
            sys.path.insert(0, {str(REPO_ROOT / 'tests')!r})
            from formats_testing import FORMATS
            list(FORMATS[{fmt.name!r}].open({w.path!r}))
            """))
    assert entries, f"{fmt.name}: no files to replace by a FIFO"
    results = run_entry_points(entries)
    for path, name in fifos.items():
        expect_refused(results, name, path,
                       {"tensorflow.python.framework.errors_impl.InvalidArgumentError"})


@pytest.fixture
def gulp_fifos(tmp_path):
    """Two gulp directories: one whose meta_1.gmeta is a FIFO, one whose data_0.gulp is."""
    out = {}
    for which, name in (("meta", "meta_1.gmeta"), ("data", "data_0.gulp")):
        info = make_gulp_dir(tmp_path / which, num_videos=4, frames_per_video=2, height=8,
                             width=8, videos_per_chunk=2)
        out[which] = (info["path"], fifo(os.path.join(info["path"], name)))
    return out


def test_gulp_readers_refuse_a_fifo(gulp_fifos):
    meta_dir, meta_fifo = gulp_fifos["meta"]
    data_dir, data_fifo = gulp_fifos["data"]
    results = run_entry_points([
        ("GulpDirectory .gmeta", f"""
            from tf_gulp.gulp import GulpDirectory
            GulpDirectory({meta_dir!r})
            """),
        ("GulpDirectory .gulp", f"""
            from tf_gulp.gulp import GulpDirectory
            with GulpDirectory({data_dir!r}) as gd:
                for id_ in gd.merged_meta_dict:
                    gd[id_]
            """),
        ("GulpChunk .gulp", f"""
            from tf_gulp.gulp import GulpChunk
            import os
            chunk = GulpChunk({data_fifo!r}, os.path.join({data_dir!r}, "meta_0.gmeta"))
            with chunk.open("rb"):
                pass
            """),
        ("tf-gulp info .gmeta", f"cli('info', {meta_dir!r})"),
        ("tf-gulp info .gulp", f"cli('info', {data_dir!r})"),
        ("tf-gulp check .gmeta", f"cli('check', {meta_dir!r})"),
        ("tf-gulp check .gulp", f"cli('check', {data_dir!r}, '--decode')"),
    ])
    gulp_error = {"tf_gulp.gulp.index.GulpDataError"}
    expect_refused(results, "GulpDirectory .gmeta", meta_fifo, gulp_error)
    expect_refused(results, "GulpDirectory .gulp", data_fifo, gulp_error)
    expect_refused(results, "GulpChunk .gulp", data_fifo, gulp_error)
    for name, path in (("tf-gulp info .gmeta", meta_fifo), ("tf-gulp info .gulp", data_fifo),
                       ("tf-gulp check .gmeta", "meta_1.gmeta"),
                       ("tf-gulp check .gulp", "data_0.gulp")):
        r = results[name]
        assert r["type"] == "__main__.CliFailed" and "exit 1:" in r["message"], f"{name}: {r}"
        assert path in r["message"] and "FIFO" in r["message"], f"{name}: {r}"
        assert "Traceback" not in r["message"], f"{name}: {r}"


def test_ffrecord_readers_refuse_a_fifo(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.ffr").write_bytes(ffrecord_bytes([b"x", b"yz"]))
    part_fifo = fifo(parts / "b.ffr")
    file_fifo = fifo(tmp_path / "single.ffr")
    results = run_entry_points([
        ("FileReader file", f"""
            from tf_gulp.ffrecord import FileReader
            FileReader({file_fifo!r})
            """),
        ("FileReader directory", f"""
            from tf_gulp.ffrecord import FileReader
            FileReader({str(parts)!r})
            """),
        ("PackedFolder", f"""
            from tf_gulp.ffrecord import PackedFolder
            PackedFolder({file_fifo!r})
            """),
        ("FFRecordDataset file", f"""
            import tf_gulp
            list(tf_gulp.FFRecordDataset({file_fifo!r}))
            """),
    ])
    expect_refused(results, "FileReader file", file_fifo, {"builtins.ValueError"})
    expect_refused(results, "FileReader directory", part_fifo, {"builtins.ValueError"})
    expect_refused(results, "PackedFolder", file_fifo, {"builtins.ValueError"})
    tf_error = {"tensorflow.python.framework.errors_impl.InvalidArgumentError"}
    expect_refused(results, "FFRecordDataset file", file_fifo, tf_error)


def test_benzina_readers_refuse_a_fifo(tmp_path):
    path = fifo(tmp_path / "data.bzna")
    results = run_entry_points([
        ("describe", f"""
            from tf_gulp.bzna.container import describe
            describe({path!r})
            """),
        ("tf-gulp bzna info", f"cli('bzna', 'info', {path!r})"),
        ("bzna_track_index", f"""
            from tf_gulp.ops.bzna.bzna_ops import bzna_track_index
            bzna_track_index({path!r}, "bzna_input")
            """),
    ])
    expect_refused(results, "describe", path, {"builtins.ValueError"})
    r = results["tf-gulp bzna info"]
    assert r["type"] == "__main__.CliFailed" and path in r["message"] and "FIFO" in r["message"]
    expect_refused(results, "bzna_track_index", path,
                   {"tensorflow.python.framework.errors_impl.InvalidArgumentError"})
