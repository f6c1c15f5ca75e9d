"""GulpIngestor's safety: resuming, append / overwrite, bad items (stop or skip), the ingest
record, the folder lock, workers stopping with the ingest."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tf_gulp.gulp import GulpDirectory
from tf_gulp.gulp.ingest import (INGEST_RECORD, GulpIngestor, IngestError, IngestStateError,
                                 read_ingest_record)

from gulp_testing import SyntheticAdapter
from ingest_testing import REPO_ROOT, chunk_files, listing
from wait_testing import wait_for


class Flaky(SyntheticAdapter):
    """SyntheticAdapter whose items in ``bad`` fail: in iter_data (``where="adapter"``) or as a
    frame that is not an image (``where="frames"``)."""

    def __init__(self, counts, bad=(), where="adapter", **kwargs):
        super().__init__(counts, 8, 8, **kwargs)
        self.bad = set(bad)
        self.where = where

    def item_ids(self):
        return [f"vid{i:04d}" for i in range(len(self))]

    def item_source(self, index):
        return f"/src/{index}.avi"

    def iter_data(self, slice_element=None):
        for i, item in zip(range(len(self))[slice_element or slice(None)],
                           super().iter_data(slice_element)):
            if i in self.bad:
                if self.where == "adapter":
                    raise OSError(f"cannot read item {i}")
                item = dict(item, frames=[b"not a jpeg"])
            yield item


def ingest(adapter, out, **kwargs):
    kwargs.setdefault("progress", False)
    kwargs.setdefault("resumable", True)
    per_chunk = kwargs.pop("videos_per_chunk", 2)
    workers = kwargs.pop("num_workers", 1)
    return GulpIngestor(adapter, out, per_chunk, workers, **kwargs)()


def stats(path):
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def test_resume_writes_only_missing_chunks(tmp_path):
    out = tmp_path / "out"
    adapter = Flaky([1, 2, 3, 1, 2, 3, 1])
    summary = ingest(adapter, out)
    assert summary.status == "complete" and summary.chunks_written == 4 and summary.items == 7
    full = chunk_files(out)
    record = read_ingest_record(str(out))
    assert record["runs"][0]["complete"] and record["runs"][0]["num_chunks"] == 4

    # Simulate an interruption: chunk 1 never published, chunk 2 half-written, record unfinished.
    os.unlink(out / "meta_1.gmeta")
    os.unlink(out / "data_1.gulp")
    os.unlink(out / "meta_2.gmeta")
    (out / "data_2.gulp.tmp").write_bytes(b"partial")
    record["runs"][0]["complete"] = False
    (out / INGEST_RECORD).write_text(json.dumps(record))
    kept = {n: stats(out / n) for n in ("data_0.gulp", "meta_0.gmeta", "data_3.gulp",
                                        "meta_3.gmeta")}
    summary = ingest(adapter, out)
    assert summary.chunks_written == 2 and summary.chunks_resumed == 2 and summary.items == 4
    assert chunk_files(out) == full
    assert {n: stats(out / n) for n in kept} == kept     # complete chunks untouched
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]
    assert read_ingest_record(str(out))["runs"][0]["complete"]
    # And again: nothing to do.
    summary = ingest(adapter, out)
    assert summary.status == "already complete" and summary.chunks_written == 0


def test_resume_refuses_another_input(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(IngestError):
        ingest(Flaky([1] * 6, bad=[4]), out)
    names = listing(out)
    assert "meta_0.gmeta" in names and "meta_2.gmeta" not in names
    with pytest.raises(IngestStateError, match="videos_per_chunk: 2 then, 3 now"):
        ingest(Flaky([1] * 6, bad=[4]), out, videos_per_chunk=3)
    with pytest.raises(IngestStateError, match="num_items: 6 then, 7 now"):
        ingest(Flaky([1] * 7), out)
    with pytest.raises(IngestStateError, match="unfinished ingest"):
        ingest(Flaky([1] * 6, bad=[4]), out, jpeg_quality=50)
    # The input is fixed: resuming finishes it (bad is not part of the input's identity).
    summary = ingest(Flaky([1] * 6), out)
    assert summary.chunks_resumed == 2 and summary.chunks_written == 1
    assert len(GulpDirectory(out).merged_meta_dict) == 6


def test_existing_dataset_needs_append_or_overwrite(tmp_path):
    out = tmp_path / "out"
    ingest(Flaky([1, 1, 1]), out, write_label2idx=True)
    before = chunk_files(out)
    # if_exists="error" is what tf-gulp ingest passes unless --append.
    with pytest.raises(FileExistsError, match="append"):
        ingest(Flaky([1, 1], labels=("q",)), out, if_exists="error")
    assert chunk_files(out) == before

    class Renamed(Flaky):
        def item_ids(self):
            return [f"new{i}" for i in range(len(self))]

        def iter_data(self, slice_element=None):
            for item in super().iter_data(slice_element):
                yield dict(item, id="new" + str(int(item["id"][3:])))

    appended = Renamed([2, 2, 2], labels=("a", "c"))
    appended.label2idx = {"a": 0, "b": 1, "c": 2}
    summary = ingest(appended, out, if_exists="append", write_label2idx=True)
    assert summary.first_chunk == 2 and summary.chunks_written == 2
    gd = GulpDirectory(out)
    assert gd.chunk_lookup["new0"] == 2 and gd.chunk_lookup["new2"] == 3
    assert json.loads((out / "label2idx.json").read_text()) == {"a": 0, "b": 1, "c": 2}
    runs = read_ingest_record(str(out))["runs"]
    assert [r["first_chunk"] for r in runs] == [0, 2] and all(r["complete"] for r in runs)
    # The same append again: it is complete, nothing happens.
    assert ingest(appended, out, if_exists="append").status == "already complete"
    # Appending ids that are there already is refused.
    with pytest.raises(IngestStateError, match="already in"):
        ingest(Flaky([1, 1]), out, if_exists="append")
    # A conflicting label mapping is refused.
    clash = Renamed([1], labels=("a",))
    clash.item_ids = lambda: ["zzz"]
    clash.label2idx = {"a": 7}
    with pytest.raises(IngestStateError, match="maps 'a' to 0"):
        ingest(clash, out, if_exists="append", write_label2idx=True)

    summary = ingest(Flaky([3]), out, if_exists="overwrite")
    assert summary.first_chunk == 0
    assert listing(out) == ["data_0.gulp", "meta_0.gmeta"]
    assert len(read_ingest_record(str(out))["runs"]) == 1


@pytest.mark.parametrize("num_workers", [1, 2])
@pytest.mark.parametrize("where", ["adapter", "frames"])
def test_skip_bad_lists_items_and_keeps_the_rest(tmp_path, num_workers, where):
    out = tmp_path / "out"
    adapter = Flaky([1, 2, 3, 1, 2, 3, 1], bad=[1, 4, 5], where=where)
    summary = ingest(adapter, out, skip_bad=True, num_workers=num_workers)
    assert [s.index for s in summary.skipped] == [1, 4, 5]
    assert [s.id for s in summary.skipped] == ["vid0001", "vid0004", "vid0005"]
    assert [s.source for s in summary.skipped][0] == "/src/1.avi"
    if where == "adapter":
        assert summary.skipped[0].reason == "OSError: cannot read item 1"
    else:
        assert "not a JPEG" in summary.skipped[0].reason
    gd = GulpDirectory(out)
    assert list(gd.merged_meta_dict) == ["vid0000", "vid0002", "vid0003", "vid0006"]
    assert [gd.chunk_lookup[i] for i in gd.merged_meta_dict] == [0, 1, 1, 3]
    assert chunk_files(out)["meta_2.gmeta"] == b"{}"       # every item of chunk 2 was bad
    recorded = read_ingest_record(str(out))["runs"][0]["skipped"]
    assert [s["index"] for s in recorded] == [1, 4, 5]
    # The summary of a later run repeats them.
    assert [s.index for s in ingest(adapter, out).skipped] == [1, 4, 5]


@pytest.mark.parametrize("num_workers", [1, 2])
def test_bad_item_stops_cleanly(tmp_path, num_workers):
    out = tmp_path / "out"
    with pytest.raises(IngestError) as e:
        ingest(Flaky([1] * 8, bad=[5], where="frames"), out, num_workers=num_workers)
    assert e.value.index == 5 and e.value.id == "vid0005" and e.value.source == "/src/5.avi"
    assert "not a JPEG" in str(e.value) and "/src/5.avi" in str(e.value)
    names = listing(out)
    assert "meta_2.gmeta" not in names and not [n for n in names if n.endswith(".tmp")]
    assert not read_ingest_record(str(out))["runs"][0]["complete"]
    # Resuming with skip_bad finishes it.
    summary = ingest(Flaky([1] * 8, bad=[5], where="frames"), out, skip_bad=True,
                     num_workers=num_workers)
    assert [s.index for s in summary.skipped] == [5]
    assert len(GulpDirectory(out).merged_meta_dict) == 7


def test_folder_lock(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    script = textwrap.dedent(f"""
        import fcntl, os, sys, time
        fd = os.open({str(out)!r}, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(30)
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(IngestStateError, match="another ingest"):
            ingest(Flaky([1]), out)
    finally:
        holder.kill()
        holder.wait()
    ingest(Flaky([1]), out)


class Gated(SyntheticAdapter):
    """Items from `gated_from` on wait until the file `gate` exists (polled, with a generous limit
    that only a broken test reaches): an ingest caught mid-chunk in a known state, not at a time."""

    def __init__(self, frame_counts, height, width, gate: str, gated_from: int):
        super().__init__(frame_counts, height, width)
        self.gate = gate
        self.gated_from = gated_from

    def iter_data(self, slice_element=None):
        start = (slice_element or slice(None)).indices(len(self))[0]
        for i, item in enumerate(super().iter_data(slice_element), start):
            if i >= self.gated_from:
                wait_for(lambda: os.path.exists(self.gate), "the test to open the gate")
            yield item


def test_interrupt_drops_chunks_being_written(tmp_path):
    # SIGINT (Ctrl-C) on the main process: workers stop at their next item and drop their chunk.
    # Chunks 0 and 1 (items 0-19) are written; chunks 2 and 3 wait at their first item for the
    # gate, which the child's SIGINT handler opens as it raises KeyboardInterrupt, so the signal
    # always comes mid-ingest, whatever the machine's speed.
    out, gate = tmp_path / "out", tmp_path / "gate"
    script = textwrap.dedent(f"""
        import signal, sys
        sys.path[:0] = [{str(REPO_ROOT)!r}, {str(REPO_ROOT / 'tests')!r}]
        from test_ingest_resume import Gated
        from tf_gulp.gulp.ingest import GulpIngestor

        def interrupted(signum, frame):
            open({str(gate)!r}, "w").close()
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, interrupted)
        print("start", flush=True)
        try:
            GulpIngestor(Gated([1] * 40, 8, 8, {str(gate)!r}, 20), {str(out)!r}, 10, 2,
                         progress=False, resumable=True)()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "start"
        done = {"data_0.gulp", "meta_0.gmeta", "data_1.gulp", "meta_1.gmeta"}
        wait_for(lambda: out.is_dir() and done <= set(os.listdir(out)),
                 "chunks 0 and 1 to be written")
        assert not gate.exists()
        proc.send_signal(signal.SIGINT)
        out_text, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert "interrupted" in out_text
    names = listing(out)
    assert not [n for n in names if n.endswith(".tmp")], names
    assert len(names) % 2 == 0
    assert done <= set(names)
    # Resume.
    summary = ingest(Gated([1] * 40, 8, 8, str(gate), 20), out, videos_per_chunk=10,
                     num_workers=2)
    assert summary.chunks_written + summary.chunks_resumed == 4
    assert summary.chunks_resumed >= 2
    assert len(GulpDirectory(out).merged_meta_dict) == 40


def test_not_resumable_mode_keeps_old_behaviour(tmp_path):
    out = tmp_path / "out"
    GulpIngestor(Flaky([1, 1]), out, 1, 1, progress=False)()
    assert listing(out, hidden=True) == ["data_0.gulp", "data_1.gulp", "meta_0.gmeta",
                                         "meta_1.gmeta"]


class WithOptions(Flaky):
    """Flaky with adapter options in its description, as the folder adapters have."""

    def __init__(self, counts, fps, **kwargs):
        super().__init__(counts, **kwargs)
        self.fps = fps

    def describe(self):
        return {"adapter": "with-options", "root": "/src",
                "options": {"fps": self.fps, "size": 64, "gray": False, "keyframes": "all"}}


def test_resume_refusal_names_just_the_changed_option(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(IngestError):
        ingest(WithOptions([1] * 6, fps=8, bad=[4]), out)
    with pytest.raises(IngestStateError) as e:
        ingest(WithOptions([1] * 6, fps=12), out)
    message = str(e.value)
    assert "(options.fps: 8 then, 12 now)" in message, message
    assert "size" not in message and "keyframes" not in message, message
