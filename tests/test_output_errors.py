"""A full or read-only output is the output's fault, never the input's.

Every writer (``tf-gulp ingest`` with and without ``--skip-bad``, ``tf-gulp bzna create``,
``tf_gulp.ffrecord.dump`` / ``FileWriter``) runs in a child process against a small file system the
test makes (:mod:`small_fs_testing`: a tmpfs where the machine allows mounting, else
``RLIMIT_FSIZE``) and must: fail with one line naming the output path, the reason and what to do
(no traceback, no advice to fix or skip an input), exit nonzero, leave no temporary file, and
complete when run again once there is room. New folders and files respect the umask.
"""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from hevc_testing import make_split_images
from ingest_testing import jpeg_bytes, run_cli_subprocess
from small_fs_testing import SmallFileSystem



def make_images(root, count=24, width=120, height=90):
    """``root/<class>/i<k>.jpg``, noise JPEGs of about 9 KB (stored byte for byte by ingest)."""
    for k in range(count):
        path = root / ("ant" if k % 2 else "bee") / f"i{k:02d}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(jpeg_bytes(k, width, height))


def read_items(folder):
    from tf_gulp.gulp import GulpDirectory
    out = {}
    for chunk in GulpDirectory(str(folder)).chunks():
        for id_ in chunk.meta_dict:
            jpegs, meta = chunk.read_jpegs(id_)
            out[id_] = (jpegs, meta)
    return out


def assert_output_failure(proc, fs, output):
    """The one-line failure every writer gives when its output cannot be written."""
    err = proc.stderr
    assert proc.returncode == 1, (proc.returncode, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    assert f"cannot write the output {output}" in err, err
    assert fs.strerror in err, err
    assert "choose another output" in err, err
    for wrong in ("--skip-bad", "fix or remove", "bad input"):
        assert wrong not in err, err
    assert "skipped" not in proc.stdout, proc.stdout
    return err


@pytest.mark.parametrize("skip_bad, workers", [(False, "1"), (True, "1"), (True, "2")])
def test_ingest_on_a_full_disk_names_the_output_and_resumes(tmp_path, skip_bad, workers):
    images = tmp_path / "images"
    make_images(images)
    reference = tmp_path / "reference"
    ok = run_cli_subprocess("ingest", "image-folder", images, reference, "--videos-per-chunk",
                            "4", "--no-progress")
    assert ok.returncode == 0, ok.stderr
    with SmallFileSystem(tmp_path / "small", size=96 * 1024, file_limit=20 * 1024) as fs:
        output = fs.root / "g"
        args = ["ingest", "image-folder", images, output, "--videos-per-chunk", "4",
                "--num-workers", workers, "--no-progress"] + (["--skip-bad"] if skip_bad else [])
        failed = fs.run_cli(*args)
        err = assert_output_failure(failed, fs, output)
        assert "run the same command again to resume" in err
        assert fs.leftovers() == []
        fs.grow()
        done = fs.run_cli(*args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "skipped" not in done.stdout, done.stdout
        assert fs.leftovers() == []
        assert read_items(output) == read_items(reference)


def test_ingest_into_a_read_only_folder(tmp_path):
    images = tmp_path / "images"
    make_images(images, count=4)
    with SmallFileSystem(tmp_path / "small", size=1 << 20) as fs:
        (fs.root / "parent").mkdir()
        fs.make_read_only()
        output = fs.root / "parent" / "g"
        failed = fs.run_cli("ingest", "image-folder", images, output, "--no-progress",
                            "--num-workers", "1")
        assert_output_failure(failed, fs, output)
        assert not output.exists()


FFRECORD_DUMP = """\
import sys
import numpy as np
import tf_gulp.ffrecord as F
records = [np.full(4000, i % 251, np.uint8) for i in range(64)]
try:
    F.dump(records, sys.argv[1], 4, progress=False, workers=int(sys.argv[2]))
except OSError as e:
    print(type(e).__name__, e.errno, e, file=sys.stderr)
    sys.exit(1)
"""


@pytest.mark.parametrize("workers", ["1", "4"])
def test_ffrecord_dump_on_a_full_disk(tmp_path, workers):
    with SmallFileSystem(tmp_path / "small", size=128 * 1024, file_limit=40 * 1024) as fs:
        output = fs.root / "ffr"
        failed = fs.run_python(FFRECORD_DUMP, output, workers)
        err = failed.stderr
        assert failed.returncode == 1, err[-3000:]
        assert err.startswith(f"OutputError {fs.errno} cannot write the output {output}/PART_"), err
        assert fs.strerror in err and "choose another output" in err, err
        assert not output.exists()
        assert os.listdir(fs.root) == []  # no staging folder, no part, no temporary file
        fs.grow()
        done = fs.run_python(FFRECORD_DUMP, output, workers)
        assert done.returncode == 0, done.stderr[-3000:]
        from tf_gulp.ffrecord import FileReader
        reader = FileReader(str(output))
        assert reader.n == 64
        assert bytes(reader.read_one(63)) == bytes(np.full(4000, 63, np.uint8))
        assert fs.leftovers() == []


FILE_WRITER = """\
import sys
import tf_gulp.ffrecord as F
try:
    with F.FileWriter(sys.argv[1], 8) as w:
        for i in range(8):
            w.write_one(bytes([i]) * 8000)
except OSError as e:
    print(type(e).__name__, e.errno, e, file=sys.stderr)
    sys.exit(1)
"""


def test_ffrecord_file_writer_on_a_full_disk(tmp_path):
    with SmallFileSystem(tmp_path / "small", size=32 * 1024) as fs:
        output = fs.root / "one.ffr"
        failed = fs.run_python(FILE_WRITER, output)
        err = failed.stderr
        assert failed.returncode == 1, err[-3000:]
        assert err.startswith(f"OutputError {fs.errno} cannot write the output {output}: "), err
        assert os.listdir(fs.root) == []
        fs.grow()
        assert fs.run_python(FILE_WRITER, output).returncode == 0
        assert os.listdir(fs.root) == ["one.ffr"]


def test_ffrecord_writer_in_a_read_only_folder(tmp_path):
    with SmallFileSystem(tmp_path / "small", size=1 << 20) as fs:
        fs.make_read_only()
        output = fs.root / "one.ffr"
        failed = fs.run_python(FILE_WRITER, output)
        err = failed.stderr
        assert failed.returncode == 1, err[-3000:]
        assert err.startswith(f"OutputError {fs.errno} cannot write the output {output}: "), err
        assert fs.strerror in err, err


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_new_folders_and_files_respect_the_umask(tmp_path, umask):
    import tf_gulp.ffrecord as F
    from tf_gulp.gulp import GulpIngestor
    from gulp_testing import SyntheticAdapter

    old = os.umask(umask)
    try:
        F.dump([b"a", b"b", b"c"], str(tmp_path / "dumped"), 2, progress=False)
        F.dump([b"a"], str(tmp_path / "new" / "single.ffr"), 1, progress=False)
        GulpIngestor(SyntheticAdapter([2, 2, 2], 16, 16), str(tmp_path / "gulp"), 2, 1,
                     progress=False, write_label2idx=True,
                     resumable=True)()
    finally:
        os.umask(old)
    folders = [tmp_path / "dumped", tmp_path / "new", tmp_path / "gulp"]
    files = [tmp_path / "dumped" / "PART_00000.ffr", tmp_path / "new" / "single.ffr"] + \
        sorted((tmp_path / "gulp").iterdir())
    for folder in folders:
        assert _mode(folder) == 0o777 & ~umask, (folder, oct(_mode(folder)))
    for f in files:
        assert _mode(f) == 0o666 & ~umask, (f, oct(_mode(f)))


@pytest.mark.parametrize("room", [0.5, 1.5])  # on a tmpfs: fails encoding / assembling
def test_bzna_create_on_a_full_disk(tmp_path, room):
    pytest.importorskip("av")
    images = tmp_path / "img"
    make_split_images(images)
    reference = tmp_path / "reference.bzna"
    args = ["--preset", "ultrafast", "-j", "2", "--no-progress"]
    ok = run_cli_subprocess("bzna", "create", images, reference, *args, timeout=300)
    assert ok.returncode == 0, ok.stderr[-3000:]
    size = reference.stat().st_size
    with SmallFileSystem(tmp_path / "small", size=int(size * room) // 4096 * 4096,
                         file_limit=size // 2) as fs:
        output = fs.root / "out.bzna"
        failed = fs.run_cli("bzna", "create", images, output, *args)
        err = assert_output_failure(failed, fs, output)
        assert f"kept in {output}.parts: run the same command again to resume" in err
        assert not output.exists()
        assert fs.leftovers() == []
        fs.grow()
        done = fs.run_cli("bzna", "create", images, output, *args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert output.read_bytes() == reference.read_bytes()
        assert os.listdir(fs.root) == ["out.bzna"]
