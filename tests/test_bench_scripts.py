"""The benchmark scripts and the rest of the Python tree: what no test run would otherwise catch.

Nothing in the suite runs bench/, tools/ or examples/ end to end on every change, so a name left
undefined in a rarely taken branch (bench_ffrecord.py's cold-cache rounds once called an `evict`
it never imported) waits for the next person who runs that benchmark; the package and the tests
are linted too, so an import left behind or a result computed and never checked shows. And the decode bound every
gulp benchmark divides by must do GulpDataset's work, pixel for pixel, or its "fraction of the
bound" measures something else."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from gulp_testing import SyntheticAdapter

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "bench"))

import bench_fair_peers  # noqa: E402
import decode_bound  # noqa: E402
import iterator_timing  # noqa: E402


def test_python_uses_only_names_it_defines():
    # pyflakes' rules (undefined names, unused or shadowed imports, unused results), through ruff
    # (a dev requirement). A name imported only to be re-exported is marked so where it is imported.
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F,E9",
         "--output-format", "concise", "bench", "tools", "examples", "tests", "tf_gulp"],
        cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def gulp_dir(tmp_path_factory):
    # 4:2:0, where smooth and fast chroma upsampling give different pixels (at 4:4:4, as gulpio2
    # writes, they coincide and a bound with the wrong one would pass).
    from tf_gulp.gulp import GulpIngestor

    path = str(tmp_path_factory.mktemp("bound") / "gulp")
    GulpIngestor(SyntheticAdapter([4, 3, 5], 48, 64), path, 2, num_workers=1, progress=False,
                 jpeg_subsampling="420")()
    return path


@pytest.fixture(scope="module")
def op_library_bound():
    bound = decode_bound.OpTurboJpeg(decode_bound.op_turbojpeg_path())
    yield bound
    bound.close()


@pytest.fixture(params=["simplejpeg", "op library"])
def bound_decode(request, op_library_bound):
    return (decode_bound.decode_clip if request.param == "simplejpeg"
            else op_library_bound.decode_clip)


def test_op_library_bound_uses_the_library_the_op_links(op_library_bound):
    from tf_gulp.ops.library import LIBRARY_NAME, library_dir

    linked = subprocess.run(["ldd", str(pathlib.Path(library_dir()) / LIBRARY_NAME)],
                            capture_output=True, text=True, check=True).stdout
    resolved = [line.split("=>")[1].split("(")[0].strip()
                for line in linked.splitlines() if "libturbojpeg" in line]
    assert len(resolved) == 1
    assert pathlib.Path(resolved[0]).resolve() == pathlib.Path(op_library_bound.path).resolve()


def test_op_library_bound_names_a_damaged_frame(op_library_bound, gulp_dir):
    import tf_gulp

    frames = list(next(iter(tf_gulp.GulpDataset(gulp_dir, decode=False, label_field=None)))
                  ["frames"].numpy())
    with pytest.raises(RuntimeError, match="tjDecompress"):
        op_library_bound.decode_clip([frames[0], frames[1][:40]])


def test_bound_decodes_what_gulp_dataset_decodes(gulp_dir, bound_decode):
    import tf_gulp

    raw = {e["id"].numpy(): list(e["frames"].numpy())
           for e in tf_gulp.GulpDataset(gulp_dir, decode=False, label_field=None)}
    decoded = {e["id"].numpy(): e["frames"].numpy()
               for e in tf_gulp.GulpDataset(gulp_dir, label_field=None)}
    assert raw.keys() == decoded.keys() and len(raw) == 3
    for vid, frames in raw.items():
        clip = bound_decode(frames)
        assert clip.dtype == np.uint8 and clip.shape == decoded[vid].shape
        np.testing.assert_array_equal(clip, decoded[vid], err_msg=str(vid))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_bound_reader_decodes_every_frame_once_per_call(gulp_dir, threads, bound_decode):
    import tf_gulp

    clips = [list(e["frames"].numpy())
             for e in tf_gulp.GulpDataset(gulp_dir, decode=False, label_field=None)]
    closers = []
    read = decode_bound.bound_reader(clips, threads, closers, bound_decode)
    try:
        assert read() == read() == 12
    finally:
        for close in closers:
            close()
    assert len(closers) == (0 if threads == 1 else 1)


def test_fair_peers_destroys_each_runs_iterators_before_the_next_run():
    # A Python-iterated run's iterator is retired when its last element is read; left alive, each
    # one's autotuning and read-ahead threads would run beside every later reader.
    alive_at_start = []

    def python_loop() -> int:
        alive_at_start.append(len(iterator_timing._RETIRED))
        return sum(1 for _ in iterator_timing.iterate(range(5)))

    results = bench_fair_peers.measure([bench_fair_peers.Reader("loop", python_loop)], rounds=3)
    assert alive_at_start == [0, 0, 0, 0]  # the untimed run, then 3 rounds
    assert not iterator_timing._RETIRED
    runs = results["loop"]["runs"]
    assert [r["items"] for r in runs] == [5, 5, 5]
    assert all(r["teardown_seconds"] >= 0 for r in runs)
