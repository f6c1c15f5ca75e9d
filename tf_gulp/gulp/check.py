"""Checking a gulp directory: what ``tf-gulp check`` runs.

:func:`check_directory` applies the gulp rules of the C++ core (``cc/gulp``, the same code that
GulpDataset, :class:`~tf_gulp.gulp.GulpDirectory` and :class:`~tf_gulp.gulp.GulpChunk` use; see
``docs/gulp_dataset.md``, "What readers refuse") and lists every finding instead of stopping at the
first. So an **error** here is exactly what makes the readers refuse the directory, with the same
message, and a **warning** is something they cope with:

errors: no such directory; two files for one chunk number (``data_1.gulp`` and ``data_01.gulp``);
a ``.gmeta`` without its ``.gulp``; a ``.gulp`` without its ``.gmeta`` that no unfinished ingest
is writing; a chunk that a finished ``tf-gulp ingest`` wrote and that is now missing; no chunk at
all; an index that is empty, not a JSON object of entries, lists an id twice, or has an entry
without a ``frame_info`` list; a frame that is not ``[offset, pad, total_length]`` with
``pad < total_length`` (a frame of no JPEG bytes), runs past the end of its ``.gulp``, or shares
bytes with another frame; an id in two chunks; ``label2idx.json`` that is not a JSON object of
integers; with ``decode=True``: a frame that is not a JPEG, that libjpeg-turbo cannot decode
without a warning (truncated, corrupt), or whose header is over the limits of
the core's JPEG decoder
(``cc/codec/jpeg_decoder.h``).

warnings: ``*.tmp`` files and a ``.gulp`` an unfinished ingest is writing (readers skip them); an
unfinished ingest; an unreadable ingest record; an id without frames or ``meta_data``; bytes of a
``.gulp`` no frame accounts for (an interrupted append; gulpio2's sanity check flags them, readers
ignore them); an empty chunk; a string label missing from ``label2idx.json`` (GulpDataset fails on
those items); with ``decode=True``, frames of one id with different sizes (GulpDataset cannot stack
them).

Each problem names the file and, where it applies, the id, the frame and the byte offset. A
problem repeated many times (frames sharing bytes, missing chunks of a finished ingest) is listed
20 times, then counted in one line. The directory may be local or on any of TensorFlow's file
systems (``gs://``, ``ram://``, ...).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import simplejpeg

from tf_gulp._progress import progress_bar
from tf_gulp._files import PositionalReader, exists, isdir
from tf_gulp.gulp.chunk import GulpDataError, pread_exact
from tf_gulp.gulp.index import _core, check_directory_index

__all__ = ["CheckReport", "Problem", "check_directory"]


@dataclasses.dataclass
class Problem:
    """One finding: ``severity`` is ``"error"`` or ``"warning"``; ``file`` is a name inside the
    directory (or the directory itself)."""

    severity: str
    file: str
    message: str
    id: Optional[str] = None
    frame: Optional[int] = None
    offset: Optional[int] = None

    def __str__(self) -> str:
        where = self.file
        if self.id is not None:
            where += f": id {self.id!r}"
        if self.frame is not None:
            where += f" frame {self.frame}"
        if self.offset is not None:
            where += f" at offset {self.offset}"
        return f"{self.severity}: {where}: {self.message}"


@dataclasses.dataclass
class CheckReport:
    """The result of :func:`check_directory`."""

    path: str
    chunks: int = 0
    ids: int = 0
    frames: int = 0
    bytes: int = 0
    decoded: bool = False
    problems: List[Problem] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)

    @property
    def errors(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def add(self, severity: str, file: str, message: str, **where: Any) -> None:
        self.problems.append(Problem(severity, file, message, **where))


def _decode_frames(data_path: str, data_name: str,
                   frames: List[Tuple[str, int, int, int]]) -> List[Problem]:
    """Decode each distinct byte range once (an index may point many frames at the same bytes: an
    error reported by the overlap check, which must not also cost a decode per frame)."""
    problems: List[Problem] = []
    sizes: Dict[str, Tuple[int, int, int]] = {}
    seen: Dict[Tuple[int, int], Optional[Tuple[int, int]]] = {}
    try:
        reader = PositionalReader(data_path)
    except (OSError, ValueError) as e:
        return [Problem("error", data_name, f"cannot open: {e}")]
    try:
        for key, index, offset, size in frames:
            if (offset, size) in seen:
                known = seen[(offset, size)]
                if known is not None:
                    _same_size(problems, sizes, data_name, key, index, offset, *known)
                continue
            seen[(offset, size)] = None
            try:
                data = pread_exact(reader, size, offset, data_path, key, index)
            except GulpDataError as e:
                problems.append(Problem("error", data_name, str(e), key, index, offset))
                continue
            if data[:2] != b"\xff\xd8":
                # Not a JPEG: a PNG frame decodes as GulpDataset decodes it (cc/codec/picture);
                # anything else is refused with the dataset's own reason.
                try:
                    height, width = _core().gulp_decode_frame(bytes(data))
                except ValueError as e:
                    problems.append(Problem("error", data_name, f"cannot decode the frame, not a "
                                            f"JPEG ({e})", key, index, offset))
                    continue
                seen[(offset, size)] = (height, width)
                _same_size(problems, sizes, data_name, key, index, offset, height, width)
                continue
            try:
                height, width, _colorspace, _sub = simplejpeg.decode_jpeg_header(data)
                # The header's size is checked (the core's limits) before anything is decoded.
                problem = _core().jpeg_header_problem(bytes(data), width, height)
                if problem is not None:
                    problems.append(Problem("error", data_name, problem, key, index, offset))
                    continue
                # Decoded by the core as GulpDataset decodes it, so what the dataset refuses
                # (a CMYK frame, which simplejpeg would convert) is an error here too.
                height, width = _core().gulp_decode_frame(bytes(data))
            except ValueError as e:
                problems.append(Problem("error", data_name, f"cannot decode JPEG ({e})", key,
                                        index, offset))
                continue
            seen[(offset, size)] = (height, width)
            _same_size(problems, sizes, data_name, key, index, offset, height, width)
    finally:
        reader.close()
    return problems


def _same_size(problems: List[Problem], sizes: Dict[str, Tuple[int, int, int]], data_name: str,
               key: str, index: int, offset: int, height: int, width: int) -> None:
    first = sizes.setdefault(key, (index, height, width))
    if (first[1], first[2]) != (height, width):
        problems.append(Problem(
            "warning", data_name, f"frame is {width}x{height} but frame {first[0]} is "
            f"{first[2]}x{first[1]} (GulpDataset needs one size per clip)", key, index, offset))


def _relative(root: str, path: str) -> str:
    """``path`` as a name inside ``root`` (the directory itself stays as given)."""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def _frames_to_decode(chunk: Dict[str, Any]) -> List[Tuple[str, int, int, int]]:
    """``(id, frame index, offset, JPEG bytes)`` of every frame of a chunk index."""
    out = []
    frames = chunk["frames"].tolist()
    row = 0
    for key, count in zip(chunk["ids"], chunk["frame_counts"].tolist()):
        for index in range(count):
            offset, pad, length = frames[row]
            out.append((key, index, offset, length - pad))
            row += 1
    return out


def check_directory(path: str, decode: bool = False, num_workers: int = 1,
                    label_field: str = "label", progress: bool = False) -> CheckReport:
    """Check the gulp directory ``path`` (see the module docstring for what is checked).

    Runs in time proportional to the bytes it reads (the indexes; with ``decode`` the data files,
    each distinct frame once), whatever counts a damaged index or ingest record claims.

    Args:
        path: the directory (local, or on one of TensorFlow's file systems).
        decode: also read and decode every frame.
        num_workers: processes decoding chunks in parallel (with ``decode``).
        label_field: the meta field holding labels, checked against ``label2idx.json``.
        progress: show a progress bar (bytes checked) on stderr when the check takes more than a
            second.

    Raises:
        FileNotFoundError / NotADirectoryError: ``path`` is not a directory.
    """
    if not exists(path):
        raise FileNotFoundError(f"{path}: no such directory")
    if not isdir(path):
        from tf_gulp._format_sniffer import wrong_reader_message

        # Another format (an FFRecord or .bzna file, a video...): what it is and what reads it.
        raise NotADirectoryError(wrong_reader_message(path, "a gulp directory", "a gulp directory")
                                 or f"{path}: not a directory")
    report = CheckReport(path, decoded=decode)
    with progress_bar(progress, unit="B", unit_scale=True, unit_divisor=1024, desc="check",
                      delay=1.0, dynamic_ncols=True) as bar:
        found = check_directory_index(path, label_field, progress=bar.update)
        chunks = found["chunks"]
        for p in found["problems"]:
            report.add(p["severity"], _relative(path, p["file"]), p["message"], id=p["id"],
                       frame=p["frame"], offset=p["offset"])
        report.notes.extend(found["notes"])
        report.chunks = len(chunks)
        report.ids = sum(len(c["ids"]) for c in chunks)
        report.frames = sum(int(c["frame_counts"].sum()) for c in chunks)
        report.bytes = sum(int(c["data_size"]) for c in chunks)
        if decode:
            tasks = [(c["data_path"], _relative(path, c["data_path"]), _frames_to_decode(c))
                     for c in chunks if len(c["ids"])]
            work = [int(c["data_size"]) for c in chunks if len(c["ids"])]
            bar.total = bar.n + sum(work)
            if num_workers > 1 and len(tasks) > 1:
                with concurrent.futures.ProcessPoolExecutor(min(num_workers, len(tasks))) as pool:
                    for problems, done in zip(pool.map(_decode_frames, *zip(*tasks)), work):
                        report.problems.extend(problems)
                        bar.update(done)
            else:
                for task, done in zip(tasks, work):
                    report.problems.extend(_decode_frames(*task))
                    bar.update(done)
    return report
