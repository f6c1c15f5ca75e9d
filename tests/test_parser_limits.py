"""Inputs that crashed the whole process through the C++ parsers (issue 13) now fail cleanly.

A `.gmeta` or `label2idx.json` nested 300,000 deep or holding `1e400`, and MP4 boxes nested
200,000 deep (in a per-image sample or a container's moov), each read through the TF ops. Every
case runs in a child process, so a regression (a segfault, an abort) fails its test instead of
taking pytest down with it; the child reports the exception it got as one JSON line.
"""

from __future__ import annotations

import json
import os
import pathlib
import struct
import subprocess
import sys
from typing import Dict

import pytest

from gulp_testing import make_gulp_dir
from tf_gulp.bzna import container as C

# Not resolve(): under `bazel test` this file is a symlink in the runfiles tree, whose tf_gulp holds
# the built op library; the source tree it points into has none, so a child process started there
# (cwd / PYTHONPATH) would import an unbuilt tf_gulp.
REPO_ROOT = pathlib.Path(os.path.abspath(__file__)).parent.parent

# Runs `CALL` (an expression of `tf_gulp`, `tf_gulp.ops` and `arg`) and prints how it ended.
CHILD = r"""
import json, sys
import tensorflow as tf
import tf_gulp, tf_gulp.ops
from tf_gulp.bzna.dataset import BenzinaDataset
from tf_gulp.ops.bzna.bzna_ops import bzna_track_index
arg = sys.argv[2]
try:
    result = eval(sys.argv[1])
    print(json.dumps({"error": None, "result": repr(result)[:200]}))
except tf.errors.OpError as e:
    print(json.dumps({"error": type(e).__name__, "message": e.message}))
"""


def run_in_child(call: str, arg: str) -> Dict[str, str]:
    """`call` evaluated in a fresh interpreter; the dict it printed (asserts it exited cleanly)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    proc = subprocess.run([sys.executable, "-c", CHILD, call, arg], env=env, capture_output=True,
                          text=True, timeout=300, cwd=str(REPO_ROOT))
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode} (negative: killed by signal {-proc.returncode}); "
        f"stderr tail:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


READ_DECODED = "list(tf_gulp.GulpDataset(arg))"
READ_RAW = "list(tf_gulp.GulpDataset(arg, decode=False))"

DEEP = 300000


@pytest.fixture
def gulp(tmp_path):
    return make_gulp_dir(tmp_path / "g", num_videos=2, frames_per_video=2, height=8, width=8,
                         videos_per_chunk=1)


@pytest.mark.parametrize("read", [READ_DECODED, READ_RAW], ids=["decode", "raw"])
@pytest.mark.parametrize("gmeta", [
    "[" * DEEP + "]" * DEEP,
    "[" * DEEP,
    '{"x": {"frame_info": [], "meta_data": [' + "[" * DEEP + "]" * DEEP + "]}}",
], ids=["deep-array", "deep-unterminated", "deep-meta"])
def test_deeply_nested_gmeta_is_data_loss(gulp, read, gmeta):
    pathlib.Path(gulp["path"], "meta_1.gmeta").write_text(gmeta)
    got = run_in_child(read, gulp["path"])
    assert got["error"] == "DataLossError", got
    assert "meta_1.gmeta" in got["message"] and "nested deeper than 1000 levels at byte offset" in \
        got["message"], got


@pytest.mark.parametrize("read", [READ_DECODED, READ_RAW], ids=["decode", "raw"])
@pytest.mark.parametrize("gmeta", [
    "1e400",
    '{"x": {"frame_info": [[0, 0, 1e400]], "meta_data": []}}',
    '{"x": {"frame_info": [], "meta_data": [{"label": -1e400}]}}',
], ids=["top-level", "frame-info", "meta-data"])
def test_number_out_of_range_in_gmeta_is_data_loss(gulp, read, gmeta):
    pathlib.Path(gulp["path"], "meta_0.gmeta").write_text(gmeta)
    got = run_in_child(read, gulp["path"])
    assert got["error"] == "DataLossError", got
    assert "meta_0.gmeta" in got["message"] and "out of the range of a double" in got["message"]
    assert "byte offset" in got["message"], got


@pytest.mark.parametrize("label2idx", ['{"a": 1e400}', "[" * DEEP], ids=["number", "deep"])
def test_bad_label2idx_is_data_loss(gulp, label2idx):
    pathlib.Path(gulp["path"], "label2idx.json").write_text(label2idx)
    got = run_in_child(READ_RAW, gulp["path"])
    assert got["error"] == "DataLossError", got
    assert "label2idx.json" in got["message"], got


def nested_boxes(kind: bytes, n: int) -> bytes:
    """`n` boxes of `kind`, each holding the next."""
    return b"".join(struct.pack(">I", 8 * (n - i)) + kind for i in range(n))


NESTED_SAMPLE = C.box(b"moov", C.box(b"trak", nested_boxes(b"mdia", 200000)))


def test_nested_boxes_in_a_sample_are_data_loss_in_decode_hevc(tmp_path):
    path = tmp_path / "sample.mp4"
    path.write_bytes(NESTED_SAMPLE)
    got = run_in_child("tf_gulp.ops.decode_hevc(open(arg, 'rb').read(), what='my sample')",
                       str(path))
    assert got["error"] == "DataLossError", got
    assert "my sample" in got["message"] and "nested more than 16" in got["message"], got


def test_nested_boxes_in_a_sample_inside_a_container_are_data_loss(tmp_path):
    """The per-image MP4 of entry 0 of a Benzina container is the hostile one."""
    path = tmp_path / "nested.bzna"
    head = C.ftyp()
    target = struct.pack("<q", 5)
    payload = NESTED_SAMPLE + target
    offset = len(head) + 8
    tracks = [C.TrackSpec("bzna_input", [offset], [len(NESTED_SAMPLE)]),
              C.TrackSpec("bzna_target", [offset + len(NESTED_SAMPLE)], [8])]
    path.write_bytes(head + C.box(b"mdat", payload) + C.moov(tracks))
    got = run_in_child("list(BenzinaDataset(arg))", str(path))
    assert got["error"] == "DataLossError", got
    assert "nested.bzna: sample 0 (byte offset" in got["message"], got
    assert "nested more than 16" in got["message"], got


def test_nested_boxes_in_a_containers_moov_are_data_loss(tmp_path):
    path = tmp_path / "deep_moov.bzna"
    path.write_bytes(C.ftyp() + NESTED_SAMPLE)
    got = run_in_child("bzna_track_index(arg, 'bzna_input')", str(path))
    assert got["error"] == "DataLossError", got
    assert "deep_moov.bzna" in got["message"] and "nested more than 16" in got["message"], got
