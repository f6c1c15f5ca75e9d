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

__all__ = ["INGEST_RECORD", "RECORD_FORMAT", "ids_digest", "new_record", "now",
           "read_ingest_record", "write_ingest_record", "write_json_atomic"]

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


def read_ingest_record(folder: str) -> Optional[Dict[str, Any]]:
    """The ingest record of ``folder`` (``.tf_gulp_ingest.json``), None if there is none.
    Raises :class:`IngestStateError` if it exists but is not a valid record."""
    path = join(folder, INGEST_RECORD)
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise IngestStateError(f"{path}: unreadable ingest record ({e}); delete it, or use "
                               "overwrite") from e
    problem = check_ingest_record(text, path)
    if problem is not None:
        problem = problem[len(path) + 2:] if problem.startswith(path + ": ") else problem
        raise IngestStateError(f"{path}: unreadable ingest record ({problem}); delete it, or "
                               "use overwrite")
    return loads_json(text)


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


def unfinished_ingest_note(folder: str) -> Optional[str]:
    """What an unfinished ingest of ``folder`` has written so far, or None when its ingest record
    says it finished (or there is no readable record). A chunk is finished once its index
    ``meta_N.gmeta`` exists: the ingest writes it last."""
    try:
        record = read_ingest_record(folder)
    except (IngestStateError, OSError, ValueError):
        return None  # the reader's own checks report a damaged record
    if not record or not record.get("runs") or record["runs"][-1].get("complete"):
        return None
    run = record["runs"][-1]
    first, chunks = int(run["first_chunk"]), int(run["num_chunks"])
    per_chunk, total = int(run.get("videos_per_chunk") or 0), int(run.get("num_items") or 0)
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
    """Warn (:class:`UnfinishedIngestWarning`) when ``folder``'s ingest has not finished."""
    note = unfinished_ingest_note(folder)
    if note is not None:
        warnings.warn(note, UnfinishedIngestWarning, stacklevel=3)
