"""``tf-gulp`` and ``tf-gulp ingest``: help, exit codes, one-line errors, every adapter end to end,
user adapters, progress, bad inputs."""

import importlib
import json
import os
import shutil
import subprocess
import tomllib

import pytest

pytest.importorskip("av")

from tf_gulp.gulp import GulpDirectory  # noqa: E402
from tf_gulp.gulp.adapters import kinetics_clip_name  # noqa: E402

from ingest_testing import (REPO_ROOT, chunk_files, jpeg_bytes, make_image_folder,  # noqa: E402
                            make_video_folder, run_cli, run_cli_subprocess, write_video)


def one_line_error(err, *fragments):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    root = tmp_path_factory.mktemp("videos")
    make_video_folder(root, {"jump": 2, "run": 3}, num_frames=6, width=40, height=30)
    return root


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    make_image_folder(root, {"cat": 3, "dog": 2})
    return root


@pytest.mark.parametrize("args", [[], ["ingest"], ["check"], ["info"]])
def test_help_everywhere(args):
    code, out, err = run_cli(*args, "--help")
    assert code == 0 and out.startswith("usage: tf-gulp") and not err
    if args == ["ingest"]:
        for word in ("image-folder", "image-list", "video-folder", "20bn", "kinetics",
                     "--adapter MODULE:CLASS", "--videos-per-chunk", "--num-workers", "--fps",
                     "--shorter-side", "--max-frames", "--jpeg-quality", "--skip-bad",
                     "--append", "--overwrite"):
            assert word in out, word


def test_version_and_no_command():
    code, out, _ = run_cli("--version")
    assert code == 0 and out.startswith("tf-gulp ")
    code, _, err = run_cli()
    assert code == 2
    one_line_error(err, "tf-gulp: error:", "required")


def test_usage_errors_are_one_line_exit_2(tmp_path, videos, images):
    out = tmp_path / "out"
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    cases = [
        (["ingest", "bogus", videos, out], "unknown adapter 'bogus'"),
        (["ingest", "video-folder", videos], "expected ADAPTER INPUT OUTPUT"),
        (["ingest", "video-folder", tmp_path / "nope", out], "no such file or folder"),
        (["ingest", "video-folder", afile, out], "not a folder"),
        (["ingest", "image-list", videos, out], "not a file"),
        (["ingest", "video-folder", videos, afile], "exists and is not a folder"),
        (["ingest", "video-folder", videos, out, "--fps", "fast"], "--fps"),
        # Range errors name the flag, not the Python argument behind it.
        (["ingest", "video-folder", videos, out, "--jpeg-quality", "0"],
         "argument --jpeg-quality: must be an integer in [1, 100], got 0"),
        (["ingest", "video-folder", videos, out, "--jpeg-quality", "101"],
         "argument --jpeg-quality: must be an integer in [1, 100], got 101"),
        (["ingest", "video-folder", videos, out, "--jpeg-quality", "90.5"],
         "argument --jpeg-quality: must be an integer in [1, 100], got '90.5'"),
        (["ingest", "video-folder", videos, out, "--decode-threads", "-1"],
         "argument --decode-threads: must be an integer >= 0, got -1"),
        (["bzna", "create", videos, tmp_path / "x.bzna", "--crf", "52"],
         "argument --crf: must be an integer in [0, 51], got 52"),
        (["bzna", "create", videos, tmp_path / "x.bzna", "--preset", "quick"],
         "argument --preset: invalid choice: 'quick'"),
        (["ingest", "video-folder", videos, out, "--videos-per-chunk", "0"],
         "argument --videos-per-chunk: must be an integer >= 1, got 0"),
        (["ingest", "video-folder", videos, out, "--root", tmp_path], "--root is for"),
        (["ingest", "video-folder", videos, out, "--no-such-option"], "unrecognized"),
        (["ingest", "--adapter", "nocolon", videos, out], "MODULE:CLASS"),
        (["ingest", "--adapter", "no_such_module_xyz:A", videos, out], "cannot import"),
        (["ingest", "--adapter", "json:nothing_here", videos, out], "has no 'nothing_here'"),
        (["ingest", "--adapter", "json:JSONDecoder", videos, out, out], "give INPUT OUTPUT"),
        (["ingest", "image-folder", tmp_path, out], "no image files in class folders"),
        (["check", tmp_path / "nope"], "no such directory"),
        (["info", tmp_path / "nope"], "not a gulp directory"),
    ]
    for args, fragment in cases:
        code, stdout, err = run_cli(*args)
        assert code == 2, (args, stdout, err)
        one_line_error(err, fragment)
    assert not out.exists()


def test_video_folder_end_to_end(tmp_path, videos):
    out = tmp_path / "out"
    code, stdout, err = run_cli("ingest", "video-folder", videos, out, "--videos-per-chunk", "2",
                                "--num-workers", "2", "--fps", "12.5", "--shorter-side", "15",
                                "--no-progress")
    assert code == 0, err
    assert "wrote 5 items, 15 frames" in stdout and "3 chunks" in stdout and not err
    gd = GulpDirectory(out)
    assert list(gd.merged_meta_dict) == ["jump/v00.avi", "jump/v01.avi", "run/v00.avi",
                                         "run/v01.avi", "run/v02.avi"]
    frames, meta = gd["run/v02.avi"]
    assert meta == {"id": "run/v02.avi", "label": "run", "idx": 1, "num_frames": 3,
                    "fps": 12.5, "height": 15, "width": 20}
    assert frames[0].shape == (15, 20, 3)
    assert json.loads((out / "label2idx.json").read_text()) == {"jump": 0, "run": 1}

    # The same command again: nothing to do. Another one: refused, nothing changed.
    before = chunk_files(out)
    code, stdout, _ = run_cli("ingest", "video-folder", videos, out, "--videos-per-chunk", "2",
                              "--fps", "12.5", "--shorter-side", "15")
    assert code == 0 and "already complete" in stdout
    code, _, err = run_cli("ingest", "video-folder", videos, out)
    assert code == 2
    one_line_error(err, "already holds a gulp dataset", "--append", "--overwrite")
    assert chunk_files(out) == before
    code, stdout, err = run_cli("ingest", "video-folder", videos, out, "--overwrite",
                                "--max-frames", "2")
    assert code == 0, err
    assert "wrote 5 items, 10 frames" in stdout


def test_image_folder_stores_jpegs_as_they_are(tmp_path, images):
    out = tmp_path / "out"
    code, stdout, err = run_cli("ingest", "image-folder", images, out, "--videos-per-chunk", "2")
    assert code == 0, err
    gd = GulpDirectory(out)
    assert gd.read_jpegs("dog/i01.jpg")[0] == [(images / "dog" / "i01.jpg").read_bytes()]
    # Appending another folder: new chunks, labels extended.
    more = tmp_path / "more"
    make_image_folder(more, {"eel": 1, "cat": 1})
    os.rename(more / "cat" / "i00.jpg", more / "cat" / "extra.jpg")
    code, stdout, err = run_cli("ingest", "image-folder", more, out, "--append")
    assert code == 0, err
    gd = GulpDirectory(out)
    assert gd.chunk_lookup["eel/i00.jpg"] == 3
    assert json.loads((out / "label2idx.json").read_text()) == {"cat": 0, "dog": 1, "eel": 2}
    assert gd["eel/i00.jpg"][1]["idx"] == 2
    # Appending the same images again is refused (their ids are there).
    code, _, err = run_cli("ingest", "image-folder", images, out, "--append")
    assert code == 2
    one_line_error(err, "already in")


def test_image_list_20bn_kinetics(tmp_path, images):
    lst = tmp_path / "list.txt"
    lst.write_text(f"{images}/cat/i00.jpg tabby\n{images}/dog/i00.jpg collie\n")
    code, _, err = run_cli("ingest", "image-list", lst, tmp_path / "g1", "--shorter-side", "10")
    assert code == 0, err
    frames, meta = GulpDirectory(tmp_path / "g1")[f"{images}/dog/i00.jpg"]
    assert frames[0].shape == (10, 13, 3) and meta["label"] == "collie" and meta["idx"] == 0

    jester = tmp_path / "jester"
    for id_ in ("11", "12"):
        (jester / "frames" / id_).mkdir(parents=True)
        for k in range(3):
            (jester / "frames" / id_ / f"{k:05d}.jpg").write_bytes(jpeg_bytes(k))
    (jester / "val.csv").write_text("11;Swiping Left\n12;Thumb Up\n")
    code, _, err = run_cli("ingest", "20bn", jester / "val.csv", tmp_path / "g2", "--data",
                           jester / "frames")
    assert code == 0, err
    assert GulpDirectory(tmp_path / "g2").read_jpegs("12")[0] == [jpeg_bytes(k)
                                                                  for k in range(3)]

    kin = tmp_path / "kinetics"
    write_video(kin / "clips" / f"{kinetics_clip_name('yt1', 0, 10)}.avi", num_frames=4)
    (kin / "train.csv").write_text("label,youtube_id,time_start,time_end,split\n"
                                   "bowling,yt1,0,10,train\nbowling,gone,5,15,train\n")
    code, _, err = run_cli("ingest", "kinetics", kin / "train.csv", tmp_path / "g3", "--data",
                           kin / "clips")
    assert code == 2
    one_line_error(err, "1 of the 2 items have no file", "gone_000005_000015", "--skip-bad")
    code, stdout, err = run_cli("ingest", "kinetics", kin / "train.csv", tmp_path / "g3",
                                "--data", kin / "clips", "--skip-bad")
    assert code == 0, err
    assert "skipped 1 bad input" in stdout and "gone_000005_000015" in stdout
    assert list(GulpDirectory(tmp_path / "g3").merged_meta_dict) == ["yt1_000000_000010"]


def test_bad_file_stops_with_its_name_or_is_skipped(tmp_path, videos):
    src = tmp_path / "src"
    shutil.copytree(videos, src)
    (src / "run" / "v01.avi").write_bytes(b"RIFF broken")
    out = tmp_path / "out"
    code, stdout, err = run_cli("ingest", "video-folder", src, out, "--videos-per-chunk", "1",
                                "--num-workers", "1")
    assert code == 1
    one_line_error(err, str(src / "run" / "v01.avi"), "cannot open", "run/v01.avi",
                   "--skip-bad")
    assert "meta_3.gmeta" not in os.listdir(out)
    assert {"meta_0.gmeta", "meta_1.gmeta", "meta_2.gmeta"} <= set(os.listdir(out))
    code, stdout, err = run_cli("ingest", "video-folder", src, out, "--videos-per-chunk", "1",
                                "--skip-bad")
    assert code == 0, err
    assert "resumed: 3 of 5 chunks were already complete" in stdout
    assert "skipped 1 bad input:" in stdout and "run/v01.avi" in stdout
    assert len(GulpDirectory(out).merged_meta_dict) == 4


USER_ADAPTER = '''
from tf_gulp.gulp import AbstractDatasetAdapter
import numpy as np

class Gradients(AbstractDatasetAdapter):
    """Items 0..n-1, each `frames` gray frames of the given size."""
    def __init__(self, input_path, n=3, frames=2, size=8, options=None):
        self.input_path, self.n, self.frames, self.size = input_path, n, frames, size
        self.got_options = options is not None
    def __len__(self):
        return self.n
    def iter_data(self, slice_element=None):
        for i in range(self.n)[slice_element or slice(None)]:
            yield {"id": f"g{i}", "meta": {"i": i, "options": self.got_options},
                   "frames": [np.full((self.size, self.size), 10 * i + j, np.uint8)
                              for j in range(self.frames)]}

def make(input_path, **kwargs):
    return Gradients(input_path, **kwargs)

class NotAnAdapter:
    def __init__(self, input_path):
        pass
'''


def test_user_adapter(tmp_path):
    (tmp_path / "my_adapters.py").write_text(USER_ADAPTER)
    out = tmp_path / "out"
    code, _, err = run_cli("ingest", "--adapter", f"{tmp_path}/my_adapters.py:Gradients",
                           tmp_path, out, "--adapter-arg", "n=5", "--adapter-arg", "size=6",
                           "--num-workers", "2", "--videos-per-chunk", "2")
    assert code == 0, err
    gd = GulpDirectory(out)
    frames, meta = gd["g4"]
    assert meta == {"i": 4, "options": True} and frames[1].shape == (6, 6)
    assert gd.num_chunks == 3
    code, _, err = run_cli("ingest", "--adapter", f"{tmp_path}/my_adapters.py:make", tmp_path,
                           tmp_path / "out2", "--adapter-arg", "frames=1")
    assert code == 0, err
    code, _, err = run_cli("ingest", "--adapter", f"{tmp_path}/my_adapters.py:NotAnAdapter",
                           tmp_path, tmp_path / "out3")
    assert code == 2
    one_line_error(err, "no iter_data()")
    code, _, err = run_cli("ingest", "--adapter", f"{tmp_path}/my_adapters.py:Gradients",
                           tmp_path, tmp_path / "out4", "--adapter-arg", "colour=red")
    assert code == 2
    one_line_error(err, "colour")
    code, _, err = run_cli("ingest", "--adapter", f"{tmp_path}/my_adapters.py:Gradients",
                           tmp_path, tmp_path / "out5", "--adapter-arg", "oops")
    assert code == 2
    one_line_error(err, "expected KEY=VALUE")


def test_progress_bar_and_subprocess_exit_codes(tmp_path, images):
    proc = run_cli_subprocess("ingest", "image-folder", images, tmp_path / "out", "--progress",
                              "--videos-per-chunk", "1", "--num-workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "5/5" in proc.stderr and "item" in proc.stderr and "frames/s" in proc.stderr
    proc = run_cli_subprocess("ingest", "image-folder", images, tmp_path / "out")
    assert proc.returncode == 2
    one_line_error(proc.stderr, "already holds a gulp dataset")
    proc = run_cli_subprocess("check", tmp_path / "out")
    assert proc.returncode == 0 and "OK" in proc.stdout


def test_console_script_entry_point(capsys):
    """pyproject.toml declares the `tf-gulp` command; the function it names must exist and run.
    Where the package is installed (pip), the generated script is run too."""
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["tf-gulp"].split(":")
    main = getattr(importlib.import_module(module), function)
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0 and "ingest" in capsys.readouterr().out
    exe = shutil.which("tf-gulp")
    if exe is not None:  # pip-installed (not the case under Bazel, which runs from the tree)
        proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60,
                              cwd=str(REPO_ROOT))
        assert proc.returncode == 0 and "ingest" in proc.stdout


SLOW_ADAPTER = '''
import time
import numpy as np
from tf_gulp.gulp import AbstractDatasetAdapter

class Slow(AbstractDatasetAdapter):
    def __init__(self, input_path):
        pass
    def __len__(self):
        return 40
    def iter_data(self, slice_element=None):
        for i in range(40)[slice_element or slice(None)]:
            time.sleep(0.05)
            yield {"id": i, "meta": {}, "frames": [np.full((8, 8, 3), i, np.uint8)]}
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_stops_cleanly_and_the_same_command_resumes(tmp_path, workers):
    import signal
    import time
    from ingest_testing import cli_command, cli_env
    (tmp_path / "slow_adapter.py").write_text(SLOW_ADAPTER)
    out = tmp_path / "out"
    args = ["ingest", "--adapter", f"{tmp_path}/slow_adapter.py:Slow", tmp_path, out,
            "--videos-per-chunk", "5", "--num-workers", workers, "--no-progress"]
    proc = subprocess.Popen(cli_command(*args), env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out.exists() and "meta_0.gmeta" in os.listdir(out)):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    one_line_error(stderr, "interrupted", "run the same command again to resume")
    names = os.listdir(out)
    assert not [n for n in names if n.endswith(".tmp")], names
    assert 1 <= len([n for n in names if n.endswith(".gmeta")]) < 8
    code, stdout, err = run_cli(*args)
    assert code == 0, err
    assert "resumed:" in stdout
    assert len(GulpDirectory(out).merged_meta_dict) == 40
