"""Summarizing a gulp directory: what ``tf-gulp info`` prints.

:func:`directory_info` returns a JSON-friendly dict: chunks, items, frames, bytes, frames per item,
a histogram of frame sizes (width x height, read from the JPEG headers of the first frame of each
item, or of every frame), the JPEG kinds (colour space and chroma subsampling), bytes per frame,
label counts (``meta_data[0][label_field]``) with their ``label2idx.json`` index, and the ingest
record's summary when ``tf-gulp ingest`` wrote the directory.
"""

from __future__ import annotations

import collections
import json
import statistics
from typing import Any, Dict, List, Optional, Tuple

import simplejpeg

from tf_gulp._progress import progress_bar
from tf_gulp._files import PositionalReader, absolute, exists, file_size, join
from tf_gulp._format import human_bytes
from tf_gulp.gulp.chunk import GulpDataError, first_meta, pread_exact
from tf_gulp.gulp.directory import GulpDirectory
from tf_gulp.gulp.index import load_label_map
from tf_gulp.gulp.ingest import read_ingest_record

__all__ = ["directory_info", "format_info"]


def _summary(values: List[int]) -> Dict[str, Any]:
    if not values:
        return {"min": None, "median": None, "mean": None, "max": None}
    return {"min": min(values), "median": statistics.median(values),
            "mean": round(statistics.fmean(values), 2), "max": max(values)}


def directory_info(path: str, all_frames: bool = False, label_field: str = "label",
                   top_labels: Optional[int] = None, progress: bool = False) -> Dict[str, Any]:
    """Summary of the gulp directory ``path`` (see the module docstring).

    Reads the indexes and, frame by frame, the JPEG headers it summarizes: each distinct frame
    once, one frame in memory at a time, so time and memory follow the bytes read whatever counts a
    damaged index claims.

    Args:
        path: the directory (local, or on one of TensorFlow's file systems).
        all_frames: read the header of every frame for the size histogram, not only the first
            frame of each item.
        label_field: the meta field that holds labels.
        top_labels: keep only this many most frequent labels in ``labels`` (None: all).
        progress: show a progress bar (items) on stderr when it takes more than a second.

    Raises:
        FileNotFoundError: no such directory, or no chunk in it. GulpDataError / ValueError: the
        directory is one GulpDataset refuses (the same rules and message; ``tf-gulp check`` lists
        every problem).
    """
    gd = GulpDirectory(path)  # judged as GulpDataset judges it
    try:
        frames_per_item: List[int] = []
        bytes_per_frame: List[int] = []
        sizes: collections.Counter = collections.Counter()
        kinds: collections.Counter = collections.Counter()
        labels: collections.Counter = collections.Counter()
        with progress_bar(progress, total=len(gd.merged_meta_dict), unit="item", desc="info",
                          delay=1.0, dynamic_ncols=True) as bar:
            for chunk in gd.chunks():
                # Only a regular file: opening a FIFO for reading would wait for a writer forever.
                with PositionalReader(chunk.data_file_path, GulpDataError) as data:
                    _chunk_info(chunk.data_file_path, data, chunk.meta_dict, all_frames,
                                label_field, frames_per_item, bytes_per_frame, sizes, kinds,
                                labels, bar)
        label2idx: Optional[Dict[str, int]] = None
        label_path = join(path, "label2idx.json")
        if exists(label_path):
            # Judged as GulpDataset judges it: a JSON object of integer indexes.
            label2idx = load_label_map(label_path)
        label_rows = [{"label": label, "count": count,
                       "index": (label2idx or {}).get(label)}
                      for label, count in labels.most_common(top_labels)]
        data_bytes = sum(file_size(c.data_file_path, GulpDataError) for c in gd.chunks())
        meta_bytes = sum(file_size(c.meta_file_path, GulpDataError) for c in gd.chunks())
        ingest = None
        try:
            record = read_ingest_record(path)
        except Exception:  # an unreadable record is tf-gulp check's business
            record = None
        if record is not None and record["runs"]:
            ingest = [_run_summary(run) for run in record["runs"] if isinstance(run, dict)]
        return {
            "path": absolute(path),
            "chunks": gd.num_chunks,
            "items": len(gd.merged_meta_dict),
            "frames": len(bytes_per_frame),
            "data_bytes": data_bytes,
            "index_bytes": meta_bytes,
            "frames_per_item": _summary(frames_per_item),
            "bytes_per_frame": _summary(bytes_per_frame),
            "frame_sizes": dict(sizes.most_common()),
            "frame_sizes_from": "every frame" if all_frames else "the first frame of each item",
            "jpeg_kinds": dict(kinds.most_common()),
            "label_field": label_field,
            "distinct_labels": len(labels),
            "labels": label_rows,
            "label2idx_entries": None if label2idx is None else len(label2idx),
            "ingest": ingest,
        }
    finally:
        gd.close()


def _chunk_info(data_path: str, data: PositionalReader, meta: Dict[str, Any], all_frames: bool,
                label_field: str, frames_per_item: List[int], bytes_per_frame: List[int],
                sizes: collections.Counter, kinds: collections.Counter,
                labels: collections.Counter, bar: Any) -> None:
    """Adds one chunk's items to the counters (``meta``: an index the core has judged)."""
    data_size = data.size()
    headers: Dict[Tuple[int, int], Tuple[str, Optional[str]]] = {}  # (offset, length) -> size, kind
    for key, entry in meta.items():
        infos = entry["frame_info"]
        frames_per_item.append(len(infos))
        bytes_per_frame.extend(length - pad for _offset, pad, length in infos)
        meta_0 = first_meta(entry)
        if isinstance(meta_0, dict) and label_field in meta_0:
            label = meta_0[label_field]
            labels[label if isinstance(label, str) else json.dumps(label)] += 1
        bar.update(1)
        for index, (offset, pad, length) in enumerate(infos if all_frames else infos[:1]):
            if offset + length > data_size:
                raise GulpDataError(f"{data_path}: id {key!r} frame {index}: offset {offset} + "
                                    f"length {length} ends past the end of the file "
                                    f"({data_size} bytes)")
            found = headers.get((offset, length - pad))
            if found is None:
                jpeg = pread_exact(data, length - pad, offset, data_path, key, index)
                try:
                    height, width, colorspace, subsampling = simplejpeg.decode_jpeg_header(jpeg)
                    found = (f"{width}x{height}", colorspace if colorspace == "Gray"
                             else f"{colorspace} {subsampling}")
                except ValueError:
                    found = ("unreadable", None)
                headers[(offset, length - pad)] = found
            sizes[found[0]] += 1
            if found[1] is not None:
                kinds[found[1]] += 1


def _run_summary(run: Dict[str, Any]) -> Dict[str, Any]:
    """One run of the ingest record, as shown; a damaged field shows as None."""
    signature = run.get("signature")
    skipped = run.get("skipped")
    return {"input": signature.get("input") if isinstance(signature, dict) else None,
            "items": run.get("num_items"), "chunks": run.get("num_chunks"),
            "complete": bool(run.get("complete")), "started": run.get("started"),
            "finished": run.get("finished"),
            "skipped": len(skipped) if isinstance(skipped, list) else 0}


def format_info(info: Dict[str, Any], max_rows: int = 20) -> str:
    """Human-readable text of :func:`directory_info`'s result."""
    lines = [f"{info['path']}",
             f"  chunks        {info['chunks']}",
             f"  items         {info['items']:,}",
             f"  frames        {info['frames']:,}",
             f"  bytes         {human_bytes(info['data_bytes'])} data + "
             f"{human_bytes(info['index_bytes'])} index"]
    fpi = info["frames_per_item"]
    if fpi["min"] is not None:
        lines.append(f"  frames/item   min {fpi['min']}, median {fpi['median']}, "
                     f"mean {fpi['mean']}, max {fpi['max']}")
    bpf = info["bytes_per_frame"]
    if bpf["min"] is not None:
        lines.append(f"  bytes/frame   min {human_bytes(bpf['min'])}, "
                     f"median {human_bytes(bpf['median'])}, max {human_bytes(bpf['max'])}")
    if info["jpeg_kinds"]:
        kinds = ", ".join(f"{k} ({v:,})" for k, v in info["jpeg_kinds"].items())
        lines.append(f"  JPEG kinds    {kinds}")
    if info["frame_sizes"]:
        lines.append(f"  frame sizes (WxH, {info['frame_sizes_from']}):")
        total = sum(info["frame_sizes"].values())
        rows = list(info["frame_sizes"].items())
        for size, count in rows[:max_rows]:
            lines.append(f"    {size:>12}  {count:>9,}  {100.0 * count / total:5.1f}%")
        if len(rows) > max_rows:
            rest = sum(c for _s, c in rows[max_rows:])
            lines.append(f"    {'(others)':>12}  {rest:>9,}  {len(rows) - max_rows} more sizes")
    if info["labels"]:
        extra = "" if info["label2idx_entries"] is None else \
            f", label2idx.json has {info['label2idx_entries']}"
        lines.append(f"  labels ({info['distinct_labels']} distinct in "
                     f"'{info['label_field']}'{extra}):")
        for row in info["labels"][:max_rows]:
            index = "" if row["index"] is None else f"  [{row['index']}]"
            lines.append(f"    {row['count']:>9,}  {row['label']}{index}")
        if len(info["labels"]) > max_rows:
            lines.append(f"    ... {len(info['labels']) - max_rows} more (--all-labels)")
    else:
        lines.append(f"  labels        none in '{info['label_field']}'")
    for i, run in enumerate(info["ingest"] or []):
        state = "complete" if run["complete"] else "UNFINISHED (run it again to finish)"
        src = run["input"]
        if isinstance(src, dict):
            src = ", ".join(f"{k}={v}" for k, v in src.items() if k in (
                "adapter", "root", "list_file", "labels_file", "csv_file", "data_dir"))
        skipped = f", {run['skipped']} skipped" if run["skipped"] else ""
        lines.append(f"  ingest {i + 1}      {run['items']} items in {run['chunks']} chunks, "
                     f"{state}{skipped}; {src}")
    return "\n".join(lines)
