"""ISO-BMFF boxes for Benzina-style files: a small writer (pure Python), and reading through the
C++ reader (cc/mp4, via ``tf_gulp._core``).

Why not pymp4 for writing: it would need its `collections` names patched back in on Python 3.11, it
keeps `hvc1`/`hvcC`/`clap` as opaque bytes anyway, and it has no 64-bit `mdat` size in the form
needed here; the boxes this format needs are few and fixed, so they are written here field by field
and tested by reading them back with tf_gulp's C++ reader (cc/mp4), FFmpeg's ffprobe and PyAV.

Reading is never done in Python: :func:`read_movie`, :func:`describe`, :func:`read_container` and
:func:`iter_boxes` call the same C++ code as the dataset ops (``cc/mp4/mp4_reader``,
``cc/mp4/bzna_container``), so every entry point accepts and refuses the same files.
"""

from __future__ import annotations

import json
import struct
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from tf_gulp._runtime_libs import import_core
from tf_gulp._remote_core import use_remote_paths_in_core

_core = import_core()  # tf_gulp._core, through its one accessor

TIMESCALE = 20
# The reference ImageNet file's splits: test = the last 100000 entries, val = the 50000 before,
# train = the rest.
IMAGENET_TEST = 100_000
IMAGENET_VAL = 50_000
SPLIT_BOX = b"bzsp"  # JSON {"splits": {name: [start, stop]}, "classes": [...]} under moov/udta
_UNITY_MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def box(kind: bytes, *payload: bytes) -> bytes:
    body = b"".join(payload)
    return struct.pack(">I", 8 + len(body)) + kind + body


def full_box(kind: bytes, version: int, flags: int, *payload: bytes) -> bytes:
    return box(kind, struct.pack(">I", (version << 24) | flags), *payload)


def large_box_header(kind: bytes, payload_size: int) -> bytes:
    """The 16-byte header of a box with a 64-bit size (used for mdat)."""
    return struct.pack(">I", 1) + kind + struct.pack(">Q", 16 + payload_size)


def ftyp() -> bytes:
    return box(b"ftyp", b"isom", struct.pack(">I", 0), b"bzna", b"isom")


class TrackSpec:
    """One track: `name` (hdlr), sample byte ranges (absolute offsets), and how to describe them.

    `hevc`: (hvcC box bytes, coded width, coded height) for a video track whose samples are
    length-prefixed HEVC pictures; None for a data track. `clean`: (width, height) for tkhd and
    the clap box.
    """

    def __init__(self, name: str, offsets: Sequence[int], sizes: Sequence[int],
                 hevc: Optional[Tuple[bytes, int, int]] = None,
                 clean: Optional[Tuple[int, int]] = None):
        self.name = name
        self.offsets = list(offsets)
        self.sizes = list(sizes)
        self.hevc = hevc
        self.clean = clean


def _sample_entry(t: TrackSpec) -> bytes:
    if t.hevc is None:
        # A metadata sample entry: content_encoding and mime_format strings.
        return box(b"mett", bytes(6), struct.pack(">H", 1), b"\0", b"application/octet-stream\0")
    hvcc, width, height = t.hevc
    children = hvcc
    if t.clean is not None:
        cw, ch = t.clean
        # clap: clean width/height, and the offset of its centre from the frame's centre
        # (negative: the image sits top-left in a frame padded right/bottom).
        children += box(b"clap", struct.pack(">8i", cw, 1, ch, 1, cw - width, 2, ch - height, 2))
    return box(b"hvc1", bytes(6), struct.pack(">H", 1), bytes(16),
               struct.pack(">HHIIIH", width, height, 0x480000, 0x480000, 0, 1), bytes(32),
               struct.pack(">Hh", 0x18, -1), children)


def _trak(t: TrackSpec, track_id: int) -> bytes:
    n = len(t.sizes)
    if t.hevc is not None:
        w, h = t.clean if t.clean is not None else t.hevc[1:]
    else:
        w = h = 0
    tkhd = full_box(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, track_id, 0, n), bytes(8),
                    struct.pack(">hhhH", 0, 0, 0, 0), _UNITY_MATRIX,
                    struct.pack(">II", w << 16, h << 16))
    mdhd = full_box(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, TIMESCALE, n, 0x55C4, 0))
    handler = b"vide" if t.hevc is not None else b"meta"
    hdlr = full_box(b"hdlr", 0, 0, bytes(4), handler, bytes(12), t.name.encode() + b"\0")
    media_header = (full_box(b"vmhd", 0, 1, bytes(8)) if t.hevc is not None
                    else full_box(b"nmhd", 0, 0))
    dinf = box(b"dinf", full_box(b"dref", 0, 0, struct.pack(">I", 1), full_box(b"url ", 0, 1)))
    stsd = full_box(b"stsd", 0, 0, struct.pack(">I", 1), _sample_entry(t))
    stts = full_box(b"stts", 0, 0, struct.pack(">III", 1, n, 1))
    stsc = full_box(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1))  # one sample per chunk
    stsz = full_box(b"stsz", 0, 0, struct.pack(">II", 0, n), struct.pack(f">{n}I", *t.sizes))
    if any(o + s > 0xFFFFFFFF for o, s in zip(t.offsets, t.sizes)):
        stco = full_box(b"co64", 0, 0, struct.pack(">I", n), struct.pack(f">{n}Q", *t.offsets))
    else:
        stco = full_box(b"stco", 0, 0, struct.pack(">I", n), struct.pack(f">{n}I", *t.offsets))
    stbl = box(b"stbl", stsd, stts, stsc, stsz, stco)
    return box(b"trak", tkhd, box(b"mdia", mdhd, hdlr, box(b"minf", media_header, dinf, stbl)))


def moov(tracks: Sequence[TrackSpec], metadata: Optional[dict] = None) -> bytes:
    duration = max((len(t.sizes) for t in tracks), default=0)
    mvhd = full_box(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, TIMESCALE, duration),
                    struct.pack(">IH", 0x10000, 0x100), bytes(10), _UNITY_MATRIX, bytes(24),
                    struct.pack(">I", len(tracks) + 1))
    body = [mvhd] + [_trak(t, i + 1) for i, t in enumerate(tracks)]
    if metadata is not None:
        body.append(box(b"udta", box(SPLIT_BOX, json.dumps(metadata, sort_keys=True).encode())))
    return box(b"moov", *body)


# ---------------------------------------------------------------------------------------------
# Reading: the C++ reader through tf_gulp._core

def iter_boxes(data: bytes, start: int = 0,
               end: Optional[int] = None) -> Iterator[Tuple[bytes, int, int]]:
    """(type, payload start, box end) of each box in data[start:end] (cc/mp4's box walk);
    ``_core.DataLossError`` (a ValueError) naming the byte offset when a size lies."""
    return iter(_core.mp4_boxes(data, start, end))


def read_movie(path: str) -> "_core.Mp4Movie":
    """The MP4 file `path` parsed by cc/mp4 (only its box headers and its moov box are read).

    Local files are opened by the C++ reader (a FIFO is refused without blocking); a path of
    TensorFlow's file systems (``gs://``, ``ram://``, ...) through ``tf.io.gfile``, which
    ``tf_gulp._files`` hands to ``_core`` (it has no TensorFlow of its own).

    Raises FileNotFoundError (no such file), ValueError (not a regular file), or
    ``_core.DataLossError`` (a ValueError naming the file and the byte offset) for bad boxes.
    """
    use_remote_paths_in_core(path)
    return _core.read_mp4(path)


def _metadata(movie: "_core.Mp4Movie") -> Optional[dict]:
    table = movie.split_table
    if table is None:
        return None
    # cc/mp4 checked it is a JSON object (with bounded nesting), naming the box's offset if not.
    return json.loads(table[0].decode("utf-8"))


def _track_summary(t: dict, sample_bytes: bool) -> dict:
    return {"name": t["name"], "handler": t["handler"], "samples": t["samples"],
            "bytes": t["bytes"] if sample_bytes else 0, "entry": t["entry"],
            "width": int(t["width"]), "height": int(t["height"])}


def describe(path: str, sample_bytes: bool = True) -> Dict[str, object]:
    """Tracks (name, handler, sample count, total bytes unless not `sample_bytes`, sample entry,
    tkhd size) and the split table (None for files without one) of any MP4 (a container or a
    per-image MP4), as cc/mp4 reads them: every sample's range is checked against the file."""
    movie = read_movie(path)
    return {"path": path, "file_bytes": movie.size,
            "tracks": [_track_summary(t, sample_bytes) for t in movie.tracks],
            "metadata": _metadata(movie)}


class Container:
    """A Benzina container as the datasets read it (:func:`read_container`)."""

    def __init__(self, path: str, movie: "_core.Mp4Movie") -> None:
        index = movie.entry_index()  # raises for a container the datasets refuse
        self.path = path
        self.file_bytes: int = movie.size
        self.tracks: List[dict] = [_track_summary(t, True) for t in movie.tracks]
        self.metadata: Optional[dict] = _metadata(movie)
        self.entries: int = index["entries"]  # samples of bzna_input
        self.targets: int = index["targets"]  # entries [targets, entries) have no target

    def describe(self) -> Dict[str, object]:
        """The :func:`describe` dict of the file."""
        return {"path": self.path, "file_bytes": self.file_bytes, "tracks": list(self.tracks),
                "metadata": self.metadata}

    def split_range(self, split: Optional[str],
                    splits: Optional[Mapping[str, Sequence[int]]] = None) -> Tuple[int, int]:
        """[start, stop) of `split` (None: every entry): from `splits` when given, else the file's
        split table (files written by tf_gulp), else the reference ImageNet ranges (files of
        150000 entries or more without a table, like Benzina's ilsvrc2012.bzna). ValueError
        naming the file for an unknown split or a range outside the file."""
        path, n = self.path, self.entries
        if split is None:
            return 0, n
        if splits is None:
            splits = (self.metadata or {}).get("splits")
        if splits is None:  # the reference's ImageNet layout
            if n < IMAGENET_TEST + IMAGENET_VAL:
                raise ValueError(f"{path}: {n} entries and no split table: too few for the "
                                 f"reference ImageNet splits; pass splits={{name: (start, stop)}} "
                                 f"(see docs/benzina.md)")
            splits = {"train": [0, n - IMAGENET_TEST - IMAGENET_VAL],
                      "val": [n - IMAGENET_TEST - IMAGENET_VAL, n - IMAGENET_TEST],
                      "test": [n - IMAGENET_TEST, n]}
        if split not in splits:
            raise ValueError(f"{path}: no split {split!r} (splits: {sorted(splits)})")
        try:
            start, stop = (int(v) for v in splits[split])
        except (TypeError, ValueError):
            raise ValueError(f"{path}: split {split!r} must be a (start, stop) pair of entry "
                             f"indices, got {splits[split]!r}") from None
        if not 0 <= start <= stop <= n:
            raise ValueError(f"{path}: split {split!r} = [{start}, {stop}) is not within the "
                             f"file's {n} entries")
        return start, stop


def read_container(path: str) -> Container:
    """`path` read and judged by cc/mp4/bzna_container, as ``BenzinaDataset`` judges it.

    Raises FileNotFoundError (no such file, or no bzna_input / bzna_target track),
    ValueError for a file the datasets refuse (``_core.DataLossError`` for damaged boxes or
    samples past the end of the file; a bzna_target track longer than the bzna_input track), each
    naming the file.
    """
    return Container(path, read_movie(path))
