"""Crash safety of ``tf-gulp bzna create``: SIGKILL at random moments, then run again.

``tf-gulp bzna create`` (a child process) converts a small image folder and is killed with SIGKILL
at a random moment of an uninterrupted run's duration (measured first): while scanning, encoding
an image, assembling the container, renaming it, or removing the encoded parts. After every kill the
output is either absent or byte for byte the container of an uninterrupted run (never a file that
reads as valid with images missing); running the same command again completes, reusing the images
already encoded, and leaves no temporary file. Kills alternate between one encoder in the main
process (``-j 1``) and two worker processes (``-j 2``, killed as a process group).
TF_GULP_KILL_SEED / TF_GULP_KILL_CYCLES override the seed / number of kills.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest

from hevc_testing import make_split_images
from ingest_testing import cli_command, cli_env
from wait_testing import wait_for

pytest.importorskip("av")

SEED = int(os.environ.get("TF_GULP_KILL_SEED", "20261123"))
CYCLES = int(os.environ.get("TF_GULP_KILL_CYCLES", "20"))


def command(images, out, jobs):
    return cli_command("bzna", "create", images, out, "--preset", "ultrafast", "-j", jobs,
                       "--no-progress")


def test_sigkill_at_random_moments_then_rerun(tmp_path):
    from tf_gulp.bzna.container import describe

    rng = random.Random(SEED)
    images = tmp_path / "img"
    make_split_images(images)
    reference = tmp_path / "reference.bzna"
    started = time.monotonic()
    subprocess.run(command(images, reference, "1"), env=cli_env(), check=True,
                   capture_output=True, timeout=300)
    duration = time.monotonic() - started
    expected = reference.read_bytes()
    assert [t["samples"] for t in describe(str(reference))["tracks"]][0] == 6

    out = tmp_path / "out.bzna"

    def leftovers():
        return sorted(n for n in os.listdir(tmp_path) if n.startswith("out.bzna") and
                      n != "out.bzna")

    kills = complete = missing = reruns = 0
    cycle = 0
    while kills < CYCLES:
        cycle += 1
        jobs = "2" if cycle % 2 else "1"
        proc = subprocess.Popen(command(images, out, jobs), env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        time.sleep(rng.uniform(0.0, duration * 1.1))
        os.killpg(proc.pid, signal.SIGKILL)
        _out, err = proc.communicate(timeout=60)
        killed = proc.returncode == -signal.SIGKILL
        assert killed or proc.returncode == 0, err.decode()
        kills += killed
        if out.exists():
            # Under the final name only ever the complete container.
            assert out.read_bytes() == expected, f"cycle {cycle}: a partial container"
            complete += 1
        else:
            missing += 1
        if out.exists() and not leftovers():
            out.unlink()  # finished: the next run starts from nothing
            continue
        if cycle % 4 == 0 or kills >= CYCLES:
            # The same command again completes (also when the killed run had renamed the
            # container into place but not yet removed the encoded parts).
            before = leftovers()
            result = subprocess.run(command(images, out, jobs), env=cli_env(),
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, (result.stderr, before)
            reruns += 1
            assert out.read_bytes() == expected
            assert leftovers() == [], leftovers()
            out.unlink()
    print(f"{kills} kills over {duration:.2f} s runs ({complete} left the complete container, "
          f"{missing} nothing), {reruns} re-runs")
    assert missing > 0


def _children(pid: int) -> set:
    """The pids of `pid`'s child processes (Linux: /proc/PID/task/*/children)."""
    found = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
            found.update(int(c) for c in f.read().split())
    return found


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads Linux's /proc")
def test_workers_end_with_their_parent_killed_alone(tmp_path):
    """SIGKILL to the main process only (not its process group, as an OOM killer or `kill -9 PID`
    does): its encoder workers end with it, and no part is written after it is gone (before,
    2 workers ran on and wrote the parts already queued to them)."""
    import simplejpeg

    import numpy as np

    rng = np.random.default_rng(5)
    images = tmp_path / "img"
    for k in range(24):
        d = images / "train" / f"c{k % 3}"
        d.mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
        (d / f"{k}.jpg").write_bytes(simplejpeg.encode_jpeg(pixels, quality=90))
    out = tmp_path / "out.bzna"
    parts_dir = tmp_path / "out.bzna.parts"

    def parts():
        return sorted(n for n in os.listdir(parts_dir) if n.endswith(".mp4")) \
            if parts_dir.exists() else []

    proc = subprocess.Popen(cli_command("bzna", "create", images, out, "--preset", "medium",
                                        "-j", "2", "--no-progress"),
                            env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers = set()
    try:
        wait_for(lambda: len(parts()) >= 1 and len(_children(proc.pid)) >= 2,
                 "the first part, with 2 workers running")
        workers = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        at_kill = parts()
        assert len(at_kill) < 24, "the run finished before the kill: nothing to test"
        wait_for(lambda: not any(_running(w) for w in workers) or parts() != at_kill,
                 "the workers to end")
        assert parts() == at_kill, "a worker wrote parts after its parent was killed"
        assert not any(_running(w) for w in workers)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:  # survivors of a failed run, by pid
            if _running(w):
                os.kill(w, signal.SIGKILL)
