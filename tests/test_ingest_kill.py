"""Crash safety of ``tf-gulp ingest``: SIGKILL at random moments, resume, repeat.

An ingest subprocess (``python -m tf_gulp.cli ingest video-folder ...``) is killed with SIGKILL at
a random moment, then run again with the same command, over and over. After every kill:

* ``tf-gulp check`` finds no error in what is there (leftovers of the interrupted write are
  warnings);
* ``tf_gulp.GulpDataset`` reads every complete chunk, and each clip's JPEG bytes are exactly those
  of an uninterrupted ingest of the same input (when no chunk is complete yet, the documented
  "no gulp chunks" NotFoundError);
* a chunk, once complete, is never rewritten (same inode, size and mtime).

At the end the resumed ingest must equal the uninterrupted one byte for byte (every data_N.gulp,
meta_N.gmeta and label2idx.json), with no leftover file. Kills alternate between the whole process
group and only the main process (its workers must then die with it: PR_SET_PDEATHSIG), and between
2 workers and 1 (the in-process writer). TF_GULP_KILL_SEED / TF_GULP_KILL_CYCLES override the
seed / number of kills.
"""

import os
import random
import signal
import subprocess
import time

import pytest

from ingest_testing import chunk_files, cli_command, cli_env, make_video_folder, run_cli

tf = pytest.importorskip("tensorflow")
pytest.importorskip("av")

import tf_gulp  # noqa: E402
from tf_gulp.gulp.check import check_directory  # noqa: E402

SEED = int(os.environ.get("TF_GULP_KILL_SEED", "20261122"))
CYCLES = int(os.environ.get("TF_GULP_KILL_CYCLES", "24"))


def wait_group_gone(pgid, timeout=20.0):
    """Wait until no process of group ``pgid`` is left (workers die with their parent)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def read_dataset(path):
    """{id: [jpeg bytes]} read by GulpDataset, and the decoded frame count."""
    clips = {}
    for e in tf_gulp.GulpDataset(path, decode=False):
        clips[e["id"].numpy().decode()] = [bytes(b) for b in e["frames"].numpy()]
    frames = sum(int(e["frames"].shape[0]) for e in tf_gulp.GulpDataset(path))
    return clips, frames


def reference_clips(path):
    from tf_gulp.gulp import GulpDirectory
    with GulpDirectory(path) as gd:
        return {id_: gd.read_jpegs(id_)[0] for id_ in gd.merged_meta_dict}


def complete_chunk_stats(path):
    out = {}
    for name in os.listdir(path):
        if name.startswith("meta_") and name.endswith(".gmeta"):
            n = name[len("meta_"):-len(".gmeta")]
            for f in (name, f"data_{n}.gulp"):
                st = os.stat(os.path.join(path, f))
                out[f] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def test_sigkill_at_random_moments_then_resume(tmp_path):
    rng = random.Random(SEED)
    videos = tmp_path / "videos"
    make_video_folder(videos, {"a": 8, "b": 8, "c": 6}, num_frames=10, width=48, height=32)
    common = ["--videos-per-chunk", "2", "--shorter-side", "24", "--fps", "20", "--no-progress"]

    reference = tmp_path / "reference"
    started = time.monotonic()
    code, out, err = run_cli("ingest", "video-folder", videos, reference, "--num-workers", "1",
                             *common)
    assert code == 0, err
    chunk_time = (time.monotonic() - started) / 11   # writing one chunk, roughly
    expected_files = chunk_files(reference)
    expected_clips = reference_clips(reference)
    assert len(expected_clips) == 22 and len([n for n in expected_files if "gmeta" in n]) == 11

    # The same bytes with 2 workers as with 1.
    probe = tmp_path / "probe"
    subprocess.run(cli_command("ingest", "video-folder", videos, probe, "--num-workers", "2",
                               *common), env=cli_env(), check=True, capture_output=True)
    assert chunk_files(probe) == expected_files
    num_chunks = len([n for n in expected_files if n.endswith(".gmeta")])

    def progress(out_dir, since=0):
        """(complete chunks, whether a chunk is being written: a .gulp.tmp written since
        ``since`` (time.time_ns()), not one left by an earlier kill)."""
        done, writing = 0, False
        try:
            with os.scandir(out_dir) as entries:
                for e in entries:
                    if e.name.endswith(".gmeta"):
                        done += 1
                    elif e.name.endswith(".gulp.tmp"):
                        try:
                            writing = writing or e.stat().st_mtime_ns >= since
                        except FileNotFoundError:
                            pass
        except FileNotFoundError:
            pass
        return done, writing

    def complete_chunks(out_dir):
        return progress(out_dir)[0]

    def run_once(out_dir, workers, kill_group, finish):
        """Start the ingest and SIGKILL it at a random moment, unless ``finish``. The moment is
        drawn relative to progress, so it does not depend on how fast this machine is: one kill
        in five at a random time in the first 0.6 s (start-up, planning, the first chunk), the
        others once a randomly chosen number of chunks is complete and another one is being
        written, plus up to two chunks' writing time (inside the next chunks' writing and
        publishing). Returns whether it was killed."""
        before = complete_chunks(out_dir)
        launched = time.time_ns()
        proc = subprocess.Popen(
            cli_command("ingest", "video-folder", videos, out_dir, "--num-workers", workers,
                        *common),
            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        killed = False
        if not finish and before < num_chunks:
            if rng.random() < 0.2:
                deadline = time.monotonic() + rng.uniform(0.0, 0.6)
                target = None
            else:
                deadline = None
                target = rng.randint(before, num_chunks - 1)
            while proc.poll() is None:
                if target is not None:
                    done, writing = progress(out_dir, launched)
                if target is not None and done >= target and writing:
                    deadline = time.monotonic() + rng.uniform(0.0, 2 * chunk_time)
                    target = None
                if deadline is not None and time.monotonic() >= deadline:
                    if kill_group:
                        os.killpg(proc.pid, signal.SIGKILL)     # everything at once
                    else:
                        os.kill(proc.pid, signal.SIGKILL)       # the main process only
                    killed = True
                    break
                time.sleep(0.003)
        _stdout, stderr = proc.communicate(timeout=300)
        assert wait_group_gone(proc.pid), "ingest workers outlived the killed ingest"
        if killed and proc.returncode == -signal.SIGKILL:
            return True
        assert proc.returncode == 0, stderr.decode()
        return False

    def check_state(out_dir, frozen, with_cli):
        report = check_directory(str(out_dir))
        # Killed before its first chunk: nothing to read yet, which readers refuse and check
        # says (the one error allowed here; no chunk can be damaged).
        errors = [str(p) for p in report.errors
                  if "found yet: the unfinished ingest has not finished one" not in p.message]
        assert not errors, errors
        with_cli = with_cli and report.ok
        if any(p.file.endswith(".tmp") or p.file.endswith(".gulp") for p in report.warnings):
            mid_write[0] += 1
        chunks_seen.append(report.chunks)
        if with_cli:
            code, check_out, _ = run_cli("check", out_dir)
            assert code == 0, check_out
        stats = complete_chunk_stats(out_dir)
        for name, stat in frozen.items():
            assert stats.get(name) == stat, f"{name} changed after it was complete"
        frozen.update(stats)
        if report.chunks == 0:
            with pytest.raises(tf.errors.NotFoundError, match="no gulp chunks"):
                tf_gulp.GulpDataset(str(out_dir))
            return
        clips, frames = read_dataset(str(out_dir))
        assert len(clips) == report.ids > 0
        for id_, jpegs in clips.items():
            assert jpegs == expected_clips[id_], id_
        assert frames == sum(len(j) for j in clips.values())

    # Rounds: ingest into a fresh folder, killing and re-running until a run finishes, so kills
    # land in every phase (startup, first chunks, the middle, the last chunk, the final record).
    kills = rounds = cycle = 0
    mid_write = [0]        # kills that left an unfinished chunk behind
    chunks_seen = []       # complete chunks found after each run
    while kills < CYCLES:
        rounds += 1
        out_dir = tmp_path / f"out{rounds}"
        frozen = {}
        while True:
            cycle += 1
            workers = "1" if cycle % 3 == 0 else "2"
            # Once every chunk is complete the round is finished off (a kill now could only
            # hit start-up or the final record write).
            killed = run_once(out_dir, workers, kill_group=cycle % 2 == 0,
                              finish=kills >= CYCLES or complete_chunks(out_dir) >= num_chunks)
            kills += killed
            if out_dir.exists():
                check_state(out_dir, frozen, with_cli=cycle % 8 == 0)
            if not killed:
                break
        assert chunk_files(out_dir) == expected_files, f"round {rounds}"
        leftovers = [n for n in os.listdir(out_dir) if n.endswith(".tmp")]
        assert not leftovers, leftovers

    print(f"seed {SEED}: {kills} kills in {rounds} rounds, {mid_write[0]} leaving an "
          f"unfinished chunk; complete chunks after each run: {chunks_seen}")
    code, check_out, _ = run_cli("check", out_dir, "--decode", "--strict")
    assert code == 0, check_out
    # Running it once more changes nothing.
    code, out, _ = run_cli("ingest", "video-folder", videos, out_dir, *common)
    assert code == 0 and "already complete" in out
    assert chunk_files(out_dir) == expected_files
