"""Writing gulp directories from an adapter: :class:`GulpIngestor` plans an ingest and runs it.

The ingest is split by job: :mod:`~tf_gulp.gulp.chunk_writer` writes one chunk
(:class:`ChunkWriter`), :mod:`~tf_gulp.gulp.ingest_workers` writes chunks in a process pool,
:mod:`~tf_gulp.gulp.ingest_progress` shows progress, :mod:`~tf_gulp.gulp.ingest_record` reads and
writes the ingest record, :mod:`~tf_gulp.gulp.directory_lock` keeps other ingests out, and
:mod:`~tf_gulp.gulp.ingest_results` holds the errors and results. This module decides what to
write (new chunks, resumed ones, append / overwrite) and keeps the record up to date; the names
above are re-exported here.

Safety rules (what ``tf-gulp ingest`` relies on):

* A chunk appears only once complete (see :class:`~tf_gulp.gulp.GulpChunk`): its ``.gulp`` is
  renamed into place, then its ``.gmeta``, which is the commit point. Whenever the process is
  killed, the directory holds complete chunks, plus possibly ``*.tmp`` files and ``.gulp`` files
  without their ``.gmeta``. Readers ignore ``*.tmp`` files; GulpDataset skips such a ``.gulp`` only
  while the ingest record (below) says an unfinished ingest planned that chunk, so a
  crash-safe ingest must be ``resumable`` (``tf-gulp ingest`` always is).
* With ``resumable=True`` the plan of the ingest (which items go to which chunk number) is recorded
  in ``.tf_gulp_ingest.json`` in the output folder before the first chunk is written. Running the
  same ingest again (same adapter description, same items, same chunking and JPEG settings) then
  writes only the chunks whose ``.gmeta`` is missing; complete chunks are never rewritten. Running
  it after it completed does nothing.
* A folder that already holds chunks gets new chunks numbered after the existing ones
  (``if_exists="append"``, the default: gulpio2's behaviour), or is refused (``"error"``, what
  ``tf-gulp ingest`` does unless told ``--append``), or is emptied first (``"overwrite"``: the
  existing chunks, ``label2idx.json`` and the ingest record are deleted).
* An item that fails (a file that cannot be decoded, an adapter exception) stops the ingest: the
  chunk being written is dropped, the other workers stop at their next item and drop their chunk
  too, and :class:`IngestError` names the item and its file. With ``skip_bad=True`` the item is
  left out instead and listed in :attr:`IngestSummary.skipped`. An item without frames is left out
  with gulpio2's message (``skip_empty=True``, the default) and listed there too.
* A failure to write the output (a full disk, a quota, a read-only file system, no permission) is
  never an item's fault: it stops the ingest (``skip_bad`` or not) with
  :class:`~tf_gulp._output_errors.OutputError` (an ``OSError``) naming the output file, leaves no
  temporary file, and the same ingest run again once there is room resumes it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from typing import Any, Dict, List, Optional, Tuple, Union


from tf_gulp._progress import progress_bar
from tf_gulp import _args as A
from tf_gulp._durable import fsync_dir
from tf_gulp._output_errors import OutputError, writing_output
from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.chunk import (GulpChunk, GulpDataError, default_jpeg_quality, load_meta_file,
                                normalize_id)
from tf_gulp.gulp.chunk_writer import ChunkWriter, chunk_slices
from tf_gulp.gulp.directory import (GulpDirectory, chunk_file_names, list_chunk_files,
                                    next_chunk_number)
from tf_gulp.gulp.directory_lock import DirectoryLock
from tf_gulp.gulp.ingest_progress import Meter
from tf_gulp.gulp.ingest_record import (INGEST_RECORD, ids_digest, new_record, now,
                                        read_ingest_record, write_ingest_record, write_json_atomic)
from tf_gulp.gulp.ingest_results import (ChunkResult, IngestError, IngestStateError,
                                         IngestSummary, SkippedItem)
from tf_gulp.gulp.ingest_workers import write_chunks_in_pool

__all__ = ["ChunkWriter", "GulpIngestor", "IngestError", "IngestStateError", "IngestSummary",
           "SkippedItem", "chunk_slices", "INGEST_RECORD", "read_ingest_record"]

_IF_EXISTS = ("error", "append", "overwrite")

LABEL2IDX = "label2idx.json"


@dataclasses.dataclass
class _Plan:
    run: Dict[str, Any]
    todo: List[Tuple[int, slice]]          # (chunk number, adapter slice)
    done: List[int]
    earlier_skips: List[SkippedItem]


def _changed_settings(then: Any, now: Any, prefix: str = "") -> List[str]:
    """``"name: <then> then, <now> now"`` for each input setting that differs, nested dicts (an
    adapter's options) compared key by key (``options.fps``), so a refusal names just what
    changed, not both whole dicts."""
    if not (isinstance(then, dict) and isinstance(now, dict)):
        return [f"input: {then!r} then, {now!r} now"]
    changes: List[str] = []
    for k in sorted(set(then) | set(now), key=str):
        a, b = then.get(k), now.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            changes.extend(_changed_settings(a, b, f"{prefix}{k}."))
        else:
            changes.append(f"{prefix}{k}: {a!r} then, {b!r} now")
    return changes


class GulpIngestor:
    """Write a whole adapter into ``output_folder`` as chunks ``data_<N>.gulp`` / ``meta_<N>.gmeta``
    of ``videos_per_chunk`` items each.

    With ``num_workers > 1`` chunks are written in parallel by a process pool (so the adapter must
    be picklable); with 0 or 1 they are written in this process. See the module docstring for what
    happens on interruption, failure, existing output and resumption.

    Args:
        adapter: the source of items (:class:`AbstractDatasetAdapter`).
        output_folder: created if it does not exist.
        videos_per_chunk: items per chunk.
        num_workers: processes writing chunks in parallel.
        if_exists: what to do when the folder already holds chunks: ``"append"`` (default, as
            gulpio2: new chunks numbered after the existing ones; ids already there are refused
            when the adapter lists its ids), ``"error"`` (raises FileExistsError, unless it is this
            same ingest, interrupted or complete, and ``resumable``; ``tf-gulp ingest``'s default)
            or ``"overwrite"``.
        jpeg_quality, jpeg_subsampling: JPEG settings for frames given as arrays (see
            :class:`GulpChunk`; quality 90 by default, gulpio2's).
        progress: show a tqdm progress bar (items, frames/s, ETA) on stderr when it is a
            terminal (none in logs or captured output).
        mp_context: multiprocessing start method or context for the pool (default: the platform's).
        resumable: keep the ingest record (``.tf_gulp_ingest.json``) that makes the ingest
            resumable; ``tf-gulp ingest`` always sets it.
        skip_bad: leave out items that fail instead of stopping.
        skip_empty: leave out items without frames with gulpio2's message (``Failed to write
            video with id: ...``) instead of treating them as failed items (see
            :class:`ChunkWriter`).
        write_label2idx: write the adapter's ``label2idx`` attribute (when it has a non-empty one)
            to ``label2idx.json``; an existing file must agree with it.
        description: JSON-serializable description of the input, part of what identifies "the
            same ingest" for resuming (default: ``adapter.describe()`` if it exists, else the
            adapter's class name).
    """

    def __init__(self, adapter: AbstractDatasetAdapter, output_folder: Union[str, os.PathLike],
                 videos_per_chunk: int, num_workers: int, *, if_exists: str = "append",
                 jpeg_quality: Optional[int] = None, jpeg_subsampling: str = "444",
                 progress: bool = True, mp_context: Union[None, str, Any] = None,
                 resumable: bool = False, skip_bad: bool = False, skip_empty: bool = True,
                 write_label2idx: bool = False, description: Any = None) -> None:
        what = "GulpIngestor: "
        A.choice(if_exists, "if_exists", _IF_EXISTS, what=what)
        self.adapter = adapter
        self.output_folder = A.path(output_folder, "output_folder", what=what)
        self.videos_per_chunk = A.integer(videos_per_chunk, "videos_per_chunk", minimum=1,
                                          what=what)
        self.num_workers = A.integer(num_workers, "num_workers", minimum=0, what=what)
        jpeg_quality = A.optional_integer(jpeg_quality, "jpeg_quality", minimum=1, maximum=100,
                                          what=what)
        for flag, value in (("progress", progress), ("resumable", resumable),
                            ("skip_bad", skip_bad), ("skip_empty", skip_empty),
                            ("write_label2idx", write_label2idx)):
            A.boolean(value, flag, what=what)
        self.if_exists = if_exists
        self.jpeg_quality = default_jpeg_quality() if jpeg_quality is None else jpeg_quality
        self.jpeg_subsampling = jpeg_subsampling
        self.progress = progress
        self.mp_context = mp_context
        self.resumable = resumable
        self.skip_bad = skip_bad
        self.skip_empty = skip_empty
        self.write_label2idx = write_label2idx
        self.description = description

    # -- planning ------------------------------------------------------------------------------

    def _chunk(self, n: int) -> GulpChunk:
        data_name, meta_name = chunk_file_names(n)
        return GulpChunk(os.path.join(self.output_folder, data_name),
                         os.path.join(self.output_folder, meta_name),
                         jpeg_quality=self.jpeg_quality, jpeg_subsampling=self.jpeg_subsampling)

    def _item_ids(self) -> Optional[List[str]]:
        item_ids = getattr(self.adapter, "item_ids", None)
        if item_ids is None:
            return None
        return [normalize_id(i) for i in item_ids()]

    def _signature(self, ids: Optional[List[str]]) -> Dict[str, Any]:
        description = self.description
        if description is None:
            describe = getattr(self.adapter, "describe", None)
            description = describe() if describe is not None else (
                f"{type(self.adapter).__module__}.{type(self.adapter).__qualname__}")
        return {"input": json.loads(json.dumps(description)), "num_items": len(self.adapter),
                "ids_sha256": None if ids is None else ids_digest(ids),
                "videos_per_chunk": self.videos_per_chunk, "jpeg_quality": self.jpeg_quality,
                "jpeg_subsampling": self.jpeg_subsampling}

    def _refuse_existing(self, existing: List[str]) -> None:
        shown = ", ".join(existing[:4]) + (", ..." if len(existing) > 4 else "")
        raise FileExistsError(
            f"{self.output_folder} already holds gulp chunk files ({len(existing)}: {shown}); "
            "refusing to mix a new dataset into it. Use an empty folder, delete them, or pass "
            "if_exists='append' to add new chunks after the existing ones (or 'overwrite').")

    def _clear(self) -> None:
        """Delete the chunks, label2idx.json and the ingest record (``if_exists='overwrite'``).

        Chunk by chunk, index first, so that at any moment at most one ``.gulp`` lacks its
        ``.gmeta``; the record goes last. (An overwrite interrupted here leaves a dataset that
        lost some chunks; run it again.)"""
        folder = self.output_folder

        def unlink(name: str) -> None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))

        names = set(list_chunk_files(folder))
        numbers = sorted({int(n.split("_", 1)[1].split(".", 1)[0]) for n in names})
        for n in numbers:
            data_name, meta_name = chunk_file_names(n)
            for name in (meta_name, meta_name + ".tmp", data_name, data_name + ".tmp"):
                if name in names:
                    unlink(name)
        for name in (LABEL2IDX, LABEL2IDX + ".tmp", INGEST_RECORD, INGEST_RECORD + ".tmp"):
            unlink(name)
        fsync_dir(folder)

    def _check_labels(self) -> Optional[Dict[str, int]]:
        if not self.write_label2idx:
            return None
        mapping = getattr(self.adapter, "label2idx", None)
        if not mapping:
            return None
        path = os.path.join(self.output_folder, LABEL2IDX)
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as f:
                    existing = json.load(f)
            except ValueError as e:
                raise IngestStateError(f"{path}: not valid JSON ({e})") from e
            if not isinstance(existing, dict):
                raise IngestStateError(f"{path}: not a JSON object")
            for label, index in existing.items():
                if label in mapping and mapping[label] != index:
                    raise IngestStateError(
                        f"{path} maps {label!r} to {index} but this ingest maps it to "
                        f"{mapping[label]}; build the adapter from the existing label2idx.json")
            mapping = dict(existing, **mapping)
        return dict(mapping)

    def _plan(self) -> _Plan:
        folder = self.output_folder
        ids = self._item_ids() if (self.resumable or self.if_exists == "append") else None
        signature = self._signature(ids) if self.resumable else None
        if self.if_exists == "overwrite":
            self._clear()
        self._labels = self._check_labels()
        record = read_ingest_record(folder) if self.resumable else None
        runs = record["runs"] if record else []
        last = runs[-1] if runs else None
        if last is not None:
            if last.get("signature") == signature:
                return self._resume(record, ids)
            if not last.get("complete"):
                raise IngestStateError(self._describe_mismatch(last, signature))
        existing = list_chunk_files(folder)
        if existing and self.if_exists == "error":
            if last is not None:
                raise FileExistsError(
                    f"{folder} already holds a complete gulp dataset written by another ingest "
                    f"({last.get('num_items')} items); use append to add these items after it, "
                    "or overwrite to replace it")
            self._refuse_existing(existing)
        if existing and ids is not None:
            self._refuse_present_ids(ids)
        if record is None or not existing:
            record = new_record()
        slices = chunk_slices(self.videos_per_chunk, len(self.adapter))
        first = next_chunk_number(folder)
        run = {"signature": signature, "first_chunk": first, "num_chunks": len(slices),
               "num_items": len(self.adapter), "videos_per_chunk": self.videos_per_chunk,
               "complete": False, "started": now(), "finished": None, "skipped": []}
        record["runs"].append(run)
        self._record = record
        if self.resumable:
            write_ingest_record(folder, record)
        return _Plan(run, [(first + k, s) for k, s in enumerate(slices)], [], [])

    def _describe_mismatch(self, last: Dict[str, Any], signature: Dict[str, Any]) -> str:
        old = last.get("signature") or {}
        diffs = []
        for key in ("input", "num_items", "ids_sha256", "videos_per_chunk", "jpeg_quality",
                    "jpeg_subsampling"):
            if old.get(key) != signature.get(key):
                if key == "input":
                    diffs.extend(_changed_settings(old.get(key) or {}, signature.get(key) or {}))
                    continue
                if key == "ids_sha256":
                    diffs.append("the list of items changed")
                    continue
                diffs.append(f"{key}: {old.get(key)!r} then, {signature.get(key)!r} now")
        return (f"{self.output_folder} holds an unfinished ingest of a different input or with "
                f"different settings ({'; '.join(diffs[:3]) or 'unknown difference'}). Re-run "
                "that ingest as it was to finish it, or overwrite to start again.")

    def _refuse_present_ids(self, ids: List[str]) -> None:
        try:
            present = GulpDirectory(self.output_folder, require_chunks=False).chunk_lookup
        except (GulpDataError, OSError) as e:
            raise IngestStateError(f"cannot append to {self.output_folder}: {e}") from e
        clash = [i for i in ids if i in present]
        if clash:
            raise IngestStateError(
                f"{len(clash)} of the {len(ids)} ids to append are already in "
                f"{self.output_folder} (first: {clash[0]!r}); ids must be unique in a gulp "
                "directory")

    def _resume(self, record: Dict[str, Any], ids: Optional[List[str]]) -> _Plan:
        self._record = record
        run = record["runs"][-1]
        slices = chunk_slices(self.videos_per_chunk, len(self.adapter))
        first = int(run["first_chunk"])
        todo, done = [], []
        earlier = [SkippedItem.from_json(s) for s in run.get("skipped", [])]
        known = {s.index for s in earlier}
        for k, input_slice in enumerate(slices):
            n = first + k
            chunk = self._chunk(n)
            if not os.path.exists(chunk.meta_file_path):
                todo.append((n, input_slice))
                continue
            if not os.path.exists(chunk.data_file_path):
                raise IngestStateError(f"{chunk.meta_file_path} has no data file; delete it to "
                                       "have the chunk written again")
            done.append(n)
            if ids is None:
                continue
            try:
                present = set(load_meta_file(chunk.meta_file_path, chunk.data_file_path))
            except GulpDataError as e:
                raise IngestStateError(str(e)) from e
            expected = ids[input_slice]
            stray = present - set(expected)
            if stray:
                raise IngestStateError(
                    f"{chunk.meta_file_path} holds ids this ingest does not put there (first: "
                    f"{sorted(stray)[0]!r}); was the folder changed by hand? Use overwrite.")
            for offset, id_ in enumerate(expected):
                index = input_slice.start + offset
                if id_ not in present and index not in known:
                    earlier.append(SkippedItem(index, id_, None,
                                               "skipped by an earlier, interrupted run"))
        if run.get("complete") and not todo:
            return _Plan(run, [], done, earlier)
        run["complete"] = False
        return _Plan(run, todo, done, earlier)

    # -- running -------------------------------------------------------------------------------

    def __call__(self) -> IngestSummary:
        """Write every chunk not written yet. Raises :class:`IngestError` for a failed item
        (unless ``skip_bad``), FileExistsError / :class:`IngestStateError` when the folder does not
        allow this ingest, :class:`~tf_gulp._output_errors.OutputError` (an OSError) when the
        output cannot be written (full disk, read-only, no permission); complete chunks stay in
        every case."""
        try:
            return self._call()
        except OutputError as e:
            if not e.hint:
                e.hint = "complete chunks are kept: run the same ingest again to resume"
            raise

    def _call(self) -> IngestSummary:
        started = time.monotonic()
        final = self.output_folder
        staging = None
        if self.resumable and not os.path.exists(final):
            # A new folder appears with its ingest record already inside: a kill at any moment
            # leaves either no folder or one whose record says what it is.
            with writing_output(final):
                staging = self._make_staging(final)
            self.output_folder = staging
        else:
            with writing_output(final):
                os.makedirs(final, exist_ok=True)
        try:
            with DirectoryLock(self.output_folder):
                plan = self._plan()
                if self._labels and not plan.run.get("complete"):
                    write_json_atomic(os.path.join(self.output_folder, LABEL2IDX), self._labels)
                if staging is not None:
                    try:
                        os.rename(staging, final)
                    except OSError as e:
                        raise IngestStateError(f"{final} appeared while this ingest was "
                                               f"starting ({e.strerror}); run it again") from None
                    staging = None
                    self.output_folder = final
                    fsync_dir(os.path.dirname(os.path.abspath(final)))
                return self._run(plan, started)
        except OutputError as e:
            if staging is not None and e.path.startswith(staging + os.sep):
                # The user knows the output folder, not the staging folder it starts as.
                e.path = os.path.join(final, e.path[len(staging) + 1:])
            raise
        finally:
            self.output_folder = final
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)

    @staticmethod
    def _make_staging(final: str) -> str:
        parent, name = os.path.split(os.path.abspath(final))
        os.makedirs(parent, exist_ok=True)
        prefix = f".{name}.tf_gulp_new."
        for old in os.listdir(parent):  # left by ingests killed while starting
            if old.startswith(prefix) and old[len(prefix):].isdigit():
                pid = int(old[len(prefix):])
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    shutil.rmtree(os.path.join(parent, old), ignore_errors=True)
                except PermissionError:
                    pass
        staging = os.path.join(parent, f"{prefix}{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        os.mkdir(staging)
        return staging

    def _run(self, plan: _Plan, started: float) -> IngestSummary:
        summary = IngestSummary(self.output_folder, "complete",
                                chunks_total=int(plan.run["num_chunks"]),
                                chunks_resumed=len(plan.done),
                                first_chunk=int(plan.run["first_chunk"]),
                                skipped=list(plan.earlier_skips))
        if plan.run.get("complete"):
            summary.status = "already complete"
            summary.skipped = [SkippedItem.from_json(s) for s in plan.run.get("skipped", [])]
            return summary
        total_items = sum(len(range(len(self.adapter))[s]) for _n, s in plan.todo)
        bar = progress_bar(self.progress, total=total_items, unit="item", desc="ingest",
                           dynamic_ncols=True, smoothing=0.05)
        meter = Meter(bar)
        try:
            if self.num_workers <= 1 or len(plan.todo) <= 1:
                self._run_serial(plan, summary, meter)
            else:
                self._run_pool(plan, summary, meter)
        finally:
            meter.close()
        plan.run["complete"] = True
        plan.run["finished"] = now()
        plan.run["skipped"] = [s.to_json() for s in
                               sorted(summary.skipped, key=lambda s: s.index)]
        if self.resumable:
            write_ingest_record(self.output_folder, self._record)
        summary.skipped.sort(key=lambda s: s.index)
        summary.seconds = time.monotonic() - started
        return summary

    def _chunk_done(self, plan: _Plan, summary: IngestSummary, result: ChunkResult) -> None:
        summary.chunks_written += 1
        summary.items += result.items
        summary.frames += result.frames
        summary.bytes += result.bytes
        if result.skipped:
            summary.skipped.extend(result.skipped)
            if self.resumable:  # keep the reasons if this run is interrupted later
                plan.run["skipped"] = [s.to_json() for s in summary.skipped]
                write_ingest_record(self.output_folder, self._record)

    def _run_serial(self, plan: _Plan, summary: IngestSummary, meter: "Meter") -> None:
        writer = ChunkWriter(self.adapter, skip_bad=self.skip_bad, on_item=meter.item,
                             skip_empty=self.skip_empty)
        for n, input_slice in plan.todo:
            result = writer.write(self._chunk(n), input_slice)
            self._chunk_done(plan, summary, result)

    def _run_pool(self, plan: _Plan, summary: IngestSummary, meter: Meter) -> None:
        write_chunks_in_pool(
            self.adapter, [(self._chunk(n), s) for n, s in plan.todo],
            num_workers=self.num_workers, skip_bad=self.skip_bad, mp_context=self.mp_context,
            meter=meter, on_result=lambda result: self._chunk_done(plan, summary, result),
            skip_empty=self.skip_empty)
