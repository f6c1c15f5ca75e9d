"""gulpio2's command names (``gulp2_*``, docs/compat.md): console scripts of the package; the 20BN
JSON ingest and the sanity check run as gulpio2's, the others print the tf-gulp command."""

from __future__ import annotations

import json
import os
import pathlib
import re

import pytest

from gulp_testing import make_gulp_dir
from ingest_testing import REPO_ROOT, write_video
from tf_gulp.cli import gulp2
from tf_gulp.gulp import GulpDirectory

GULPIO2_SCRIPTS = ["gulp2_20bn_csv_jpeg", "gulp2_20bn_csv_webm", "gulp2_20bn_json_videos",
                   "gulp2_activitynet", "gulp2_image_folder", "gulp2_image_list",
                   "gulp2_kinetics", "gulp2_register_adapter", "gulp2_sanity_check",
                   "gulp2_video_folder"]


def test_gulp2_commands_are_not_console_scripts():
    # Installing tf_gulp next to gulpio2 must not replace gulpio2's own gulp2_* commands (issue 34):
    # [project.scripts] (read by hand: tomllib is Python 3.11+, the project supports 3.10) has
    # tf-gulp only; every command runs through python -m tf_gulp.cli.gulp2.
    text = (REPO_ROOT / "pyproject.toml").read_text()
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    scripts = dict(re.findall(r'^([\w-]+) = "([^"]+)"$', section, re.M))
    assert scripts == {"tf-gulp": "tf_gulp.cli.main:main"}
    assert sorted(gulp2.COMMANDS) == GULPIO2_SCRIPTS
    for name, func in gulp2.COMMANDS.items():
        assert callable(func), name


def test_install_scripts_is_opt_in_and_keeps_gulpio2s(tmp_path):
    import subprocess
    import sys

    gulpio2s = tmp_path / "gulp2_sanity_check"
    gulpio2s.write_text("#!/bin/sh\necho gulpio2's own\n")
    written, kept = gulp2.install_scripts(str(tmp_path))
    assert kept == ["gulp2_sanity_check"]
    assert sorted(written + kept) == GULPIO2_SCRIPTS
    assert gulpio2s.read_text() == "#!/bin/sh\necho gulpio2's own\n"
    # A written command runs tf_gulp's, with this Python.
    r = subprocess.run([str(tmp_path / "gulp2_video_folder"), "--frame_size", "32", "in", "out"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH":
                                                             str(REPO_ROOT)}, timeout=120)
    assert r.returncode == 2 and "tf-gulp ingest" in r.stdout + r.stderr, r
    assert sys.executable in (tmp_path / "gulp2_video_folder").read_text()
    written, kept = gulp2.install_scripts(str(tmp_path), force=True)
    assert kept == [] and "tf_gulp" in gulpio2s.read_text()


def make_20bn(root: pathlib.Path, ids_labels, broken=()):
    """gulpio2's layout: videos/<id>/<anything>.mp4 and a JSON list of {id, template}."""
    for i, (id_, _label) in enumerate(ids_labels):
        path = root / "videos" / id_ / f"source_{id_}.mp4"
        if id_ in broken:
            path.parent.mkdir(parents=True)
            path.write_bytes(b"not a video")
        else:
            write_video(path, num_frames=16, rate=8, video=i)
    listing = root / f"list_{ids_labels[0][0]}.json"
    listing.write_text(json.dumps([{"id": i, "template": label} for i, label in ids_labels]))
    return str(listing)


def test_20bn_json_videos_ingests_and_extends_as_gulpio2(tmp_path, capsys):
    out = tmp_path / "out"
    first = make_20bn(tmp_path, [("0", "b"), ("1", "a"), ("2", "b")])
    assert gulp2.gulp2_20bn_json_videos(["--videos_per_chunk", "2", "--num_workers", "1",
                                         first, str(tmp_path / "videos"), str(out)]) == 0
    # gulpio2's files, and nothing else (no ingest record).
    assert sorted(os.listdir(out)) == ["data_0.gulp", "data_1.gulp", "label2idx.json",
                                       "meta_0.gmeta", "meta_1.gmeta"]
    assert (out / "label2idx.json").read_text() == json.dumps({"a": 0, "b": 1})
    gd = GulpDirectory(out)
    frames, meta = gd["1"]
    assert meta == {"id": "1", "label": "a", "idx": 0}
    assert len(frames) == 16 and frames[0].shape == (48, 64, 3)  # 2 s at --frame_rate 8
    # A second list into the same folder: appended as new chunks, new labels numbered after.
    second = make_20bn(tmp_path, [("3", "c"), ("4", "a")], broken={"4"})
    assert gulp2.gulp2_20bn_json_videos(["--videos_per_chunk=2", "--num_workers=1",
                                         "--frame_size", "24", second,
                                         str(tmp_path / "videos"), str(out)]) == 0
    assert "Failed to write video with id: 4; no frames" in capsys.readouterr().out
    gd = GulpDirectory(out)
    assert gd.chunk_lookup == {"0": 0, "1": 0, "2": 1, "3": 2}
    assert json.loads((out / "label2idx.json").read_text()) == {"a": 0, "b": 1, "c": 2}
    assert gd["3"][0][0].shape == (24, 32, 3) and gd["3"][1]["idx"] == 2


def test_other_commands_print_the_tf_gulp_command(tmp_path, capsys):
    code = gulp2.gulp2_video_folder(["--frame_size", "128", "--num_workers", "2",
                                     str(tmp_path / "in"), str(tmp_path / "out")])
    assert code == 2 and not (tmp_path / "out").exists()
    err = capsys.readouterr().err
    assert (f"tf-gulp ingest video-folder {tmp_path / 'in'} {tmp_path / 'out'} "
            "--videos-per-chunk 100 --num-workers 2 --shorter-side 128") in err
    assert "--append" in err
    assert gulp2.main(["gulp2_image_list", "--root_path", "/r", "list.txt", "o"]) == 2
    assert "tf-gulp ingest image-list list.txt o --root /r" in capsys.readouterr().err
    assert gulp2.main(["gulp2_register_adapter", "my_adapters", "MyAdapter"]) == 2
    assert "--adapter my_adapters:MyAdapter" in capsys.readouterr().err
    assert gulp2.main(["no_such_command"]) == 2
    with pytest.raises(SystemExit):  # argparse: a missing argument
        gulp2.gulp2_kinetics([])


def test_sanity_check_reports_as_gulpio2(tmp_path, capsys):
    make_gulp_dir(tmp_path, 3, 2, 8, 8, videos_per_chunk=2)
    assert gulp2.gulp2_sanity_check([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("Test passed") == 4
    assert out.startswith("Sanity Check: Check for empty meta files\nTest passed\n")
    with open(tmp_path / "data_1.gulp", "ab") as f:
        f.write(b"\0" * 4)
    assert gulp2.gulp2_sanity_check([str(tmp_path)]) == 1
    assert f"Test failed for: ['{tmp_path / 'data_1.gulp'}']" in capsys.readouterr().out
    assert gulp2.gulp2_sanity_check([str(tmp_path / "missing")]) == 1
