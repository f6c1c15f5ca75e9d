"""The ingest record (``.tf_gulp_ingest.json``): what a resumable ingest planned and has finished.

Its format, reading (:func:`read_ingest_record`, judged by the same code as the readers and
``tf-gulp check``: ``cc/gulp/ingest_record.h``) and writing
(:func:`write_ingest_record`, the one function that writes it), and the digest of item ids that
identifies "the same ingest". :class:`~tf_gulp.gulp.ingest.GulpIngestor` decides what goes in it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import warnings
from typing import Any, Dict, Optional, Sequence

from tf_gulp._files import join, read_regular
from tf_gulp._json import loads_json
from tf_gulp._durable import write_atomically
from tf_gulp.gulp.chunk import normalize_id
from tf_gulp.gulp.index import check_ingest_record
from tf_gulp.gulp.ingest_results import IngestStateError

__all__ = ["INGEST_RECORD", "RECORD_FORMAT", "DamagedIngestRecordError",
           "DamagedIngestRecordWarning", "ids_digest", "new_record", "now", "read_ingest_record",
           "run_problem", "write_ingest_record", "write_json_atomic"]

#: Name of the ingest record kept in the output folder by resumable ingests.
INGEST_RECORD = ".tf_gulp_ingest.json"
RECORD_FORMAT = "tf_gulp ingest record"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_json_atomic(path: str, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` via a fsynced temporary file and a rename.

    A failed write (a full disk, a read-only file system) raises
    :class:`~tf_gulp._output_errors.OutputError` naming ``path`` and leaves ``path`` as it was and
    no temporary file."""
    text = json.dumps(obj, indent=1) + "\n"  # first: a TypeError leaves no file
    write_atomically(path, text.encode("utf-8"))


class DamagedIngestRecordError(IngestStateError):
    """An ingest record that exists but is not valid; ``problem`` says which field is wrong."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: unreadable ingest record ({problem}); delete it, or use "
                         "overwrite")
        self.path = path
        self.problem = problem


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def run_problem(run: Any) -> Optional[str]:
    """Why ``run`` (an entry of a record's ``runs``) is not a run as this package reads it, or None.
    The fields cc/gulp/ingest_record.h requires (integers ``first_chunk``, ``num_chunks`` >= 0, a
    boolean ``complete``), and the optional ones Python reads, when present: ``num_items``,
    ``videos_per_chunk`` (integers >= 0), ``signature`` (an object), ``skipped`` (a list of
    objects with an integer ``index``)."""
    if not isinstance(run, dict):
        return f"{json.dumps(run)[:40]}, not a run object"
    for key in ("first_chunk", "num_chunks"):
        if not _is_count(run.get(key)):
            return f'"{key}" is {json.dumps(run.get(key))[:40]}, not an integer >= 0'
    if not isinstance(run.get("complete"), bool):
        return f'"complete" is {json.dumps(run.get("complete"))[:40]}, not true or false'
    for key in ("num_items", "videos_per_chunk"):
        if run.get(key) is not None and not _is_count(run[key]):
            return f'"{key}" is {json.dumps(run[key])[:40]}, not an integer >= 0'
    if run.get("signature") is not None and not isinstance(run["signature"], dict):
        return f'"signature" is {json.dumps(run["signature"])[:40]}, not an object'
    skipped = run.get("skipped")
    if skipped is not None and not (isinstance(skipped, list) and all(
            isinstance(s, dict) and _is_count(s.get("index")) for s in skipped)):
        return '"skipped" is not a list of objects with an integer "index"'
    return None


def read_ingest_record(folder: str) -> Optional[Dict[str, Any]]:
    """The ingest record of ``folder`` (``.tf_gulp_ingest.json``), None if there is none.
    Raises :class:`DamagedIngestRecordError` (an :class:`IngestStateError`) if it exists but is not
    a valid record (the file, or a field of one of its runs: :func:`run_problem`)."""
    path = join(folder, INGEST_RECORD)
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise DamagedIngestRecordError(path, str(e)) from e
    problem = check_ingest_record(text, path)
    if problem is not None:
        problem = problem[len(path) + 2:] if problem.startswith(path + ": ") else problem
        raise DamagedIngestRecordError(path, problem)
    record = loads_json(text)
    for i, run in enumerate(record["runs"]):
        problem = run_problem(run)
        if problem is not None:
            raise DamagedIngestRecordError(path, f"run {i}: {problem}")
    return record


def ids_digest(ids: Sequence[Any]) -> str:
    h = hashlib.sha256()
    for id_ in ids:
        h.update(normalize_id(id_).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def new_record() -> Dict[str, Any]:
    """An ingest record without runs (:meth:`GulpIngestor` appends one run per ingest)."""
    return {"format": RECORD_FORMAT, "version": 1, "runs": []}


def write_ingest_record(folder: str, record: Dict[str, Any]) -> None:
    """Write ``record`` as ``folder``'s ingest record, atomically (a kill leaves old or new)."""
    write_json_atomic(os.path.join(folder, INGEST_RECORD), record)


class UnfinishedIngestWarning(UserWarning):
    """A gulp directory is read while its ingest is unfinished (still running, or stopped)."""


class DamagedIngestRecordWarning(UserWarning):
    """A gulp directory's ingest record is damaged: it is ignored and the finished chunks read."""


def unfinished_ingest_note(folder: str) -> Optional[str]:
    """What an unfinished ingest of ``folder`` has written so far, or None when its ingest record
    says it finished (or there is none). A chunk is finished once its index ``meta_N.gmeta``
    exists: the ingest writes it last. Raises :class:`DamagedIngestRecordError` for a damaged
    record."""
    record = read_ingest_record(folder)
    if not record or not record["runs"] or record["runs"][-1]["complete"]:
        return None
    run = record["runs"][-1]
    first, chunks = run["first_chunk"], run["num_chunks"]
    per_chunk, total = run.get("videos_per_chunk") or 0, run.get("num_items") or 0
    done = [k for k in range(chunks) if os.path.exists(join(folder, f"meta_{first + k}.gmeta"))]
    if per_chunk > 0 and total > 0:
        written = sum(max(0, min(per_chunk, total - k * per_chunk)) for k in done)
        counts = (f"{written} of its {total} items are written ({len(done)} of {chunks} "
                  f"chunks), {total - written} are missing")
    else:
        counts = f"{len(done)} of its {chunks} chunks are written, {chunks - len(done)} missing"
    return (f"{folder}: its ingest is unfinished (still running or stopped): {counts}; reading "
            "what is written. Run the same tf-gulp ingest command again to finish it")


def warn_if_unfinished(folder: str) -> None:
    """Warn (:class:`UnfinishedIngestWarning`) when ``folder``'s ingest has not finished, and
    (:class:`DamagedIngestRecordWarning`) when its ingest record is damaged: a reader then goes on
    with the chunks whose index exists, as the C++ directory rules ignore a record they cannot
    read, and the warning says so instead of leaving the user to guess."""
    try:
        note = unfinished_ingest_note(folder)
    except DamagedIngestRecordError as e:
        warnings.warn(f"{e.path}: damaged ingest record ({e.problem}): ignored, so whether an "
                      "ingest is unfinished cannot be told; reading the chunks whose "
                      "meta_N.gmeta exists (a data_N.gulp without one is refused). Re-run the "
                      "ingest with --overwrite to rewrite the directory, or delete the record "
                      "if its ingest finished", DamagedIngestRecordWarning, stacklevel=3)
        return
    except (OSError, ValueError):
        return  # an unreadable directory: the reader's own checks report it
    if note is not None:
        warnings.warn(note, UnfinishedIngestWarning, stacklevel=3)
