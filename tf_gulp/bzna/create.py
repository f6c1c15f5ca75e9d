"""Writing Benzina-style datasets: every image as a single-frame H.265 MP4 inside one container.

    from tf_gulp.bzna import create_dataset
    create_dataset("/data/imagenet_jpeg", "/data/imagenet.bzna")      # train/ val/ test/ folders
    create_dataset("list.txt", "out.bzna")                             # "path label [split]" lines

Each image becomes a per-image MP4 the way Benzina's converter makes it: x265 (through PyAV),
`yuvj420p` full range, crf `DEFAULT_CRF` (28; the reference's 10 is `crf="reference"`, see
docs/benzina.md for what each costs), `hvc1` sample entry with `hvcC`, the picture padded right/bottom to
a multiple of 512 by repeating edge pixels, `tkhd` and `clap` giving the clean (unpadded) size, a
thumbnail (longer side <= 512, padded into a 512x512 frame; none when the image already fits), and
the target (int64 LE) and file name inside; tracks `bzna_input`, `bzna_fname`, `bzna_target`,
`bzna_thumb`. The container holds them back to back in a 64-bit `mdat`, then all targets, then all
file names, and a `moov` with the same four tracks (`co64` once an offset passes 4 GiB) plus the
split table (`moov/udta/bzsp`, JSON).

Crash safety and resumption: per-image MP4s are written to `<output>.parts/` (each to a temporary
name, then renamed), so an interrupted run resumes with the images already encoded; the container
is assembled under a temporary name, fsynced, and renamed into place. A failure to write the output
(a full disk, a quota, a read-only file system, no permission) raises
:class:`~tf_gulp._output_errors.OutputError` naming the file, removes the temporary file it was
writing and keeps the images encoded so far: the same call completes once there is room.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import os
import shutil
import struct
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tf_gulp._progress import progress_bar
from tf_gulp import _args as A
from tf_gulp._runtime_libs import import_core
from tf_gulp.bzna._x265 import DEFAULT_CRF, REFERENCE_CRF, X265_CRF_RANGE, X265_PRESETS
from tf_gulp._durable import replace_durably, write_atomically
from tf_gulp._output_errors import OutputError, writing_output
from tf_gulp._parent_death import end_with_parent, parent_alive
from tf_gulp.bzna import container as C
from tf_gulp.class_folders import class_folder_names, scan_class_folders, warn_empty_classes

_core = import_core()  # tf_gulp._core, through its one accessor

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm")
SPLITS = ("train", "val", "test")
FRAME_MULTIPLE = 512
THUMB_SIDE = 512


@dataclass
class Entry:
    path: str      # absolute path of the source image
    name: str      # stored file name (relative path)
    target: int    # class index, -1 when unknown
    split: str


# ---------------------------------------------------------------------------------------------
# Inputs

def scan_folder(root: str, ignored: Optional[Dict[str, int]] = None
                ) -> Tuple[List[Entry], List[str]]:
    """Entries of an image folder: `train/ val/ test/` splits of `<class>/<image>` folders, or
    `<class>/<image>` folders directly (one "train" split). Classes are the sorted union of the
    class folders, numbered as Keras's image_dataset_from_directory numbers them
    (tf_gulp.class_folders): a folder without images keeps its index, with a warning. The files
    left out are counted into `ignored` ({extension: count}) when given."""
    root = os.path.abspath(root)
    split_dirs = [s for s in SPLITS if os.path.isdir(os.path.join(root, s))]
    layout = [(s, os.path.join(root, s)) for s in split_dirs] or [("train", root)]
    classes = sorted({c for _, d in layout for c in class_folder_names(d)})
    index = {c: i for i, c in enumerate(classes)}
    entries = []
    used = set()
    for split, d in layout:
        scan = scan_class_folders(d, IMAGE_EXTENSIONS, warn=False)
        for rel, k in scan.files:
            full = os.path.join(d, rel)
            c = scan.class_names[k]
            used.add(c)
            entries.append(Entry(full, os.path.relpath(full, root), index[c], split))
        if ignored is not None:
            for ext, n in scan.ignored.items():
                ignored[ext] = ignored.get(ext, 0) + n
    if not entries:
        raise ValueError(f"{root}: no images found (expected train/ val/ test/ folders of "
                         f"<class>/<image> folders, or <class>/<image> folders)")
    warn_empty_classes(root, [c for c in classes if c not in used], index, "bzna create: ")
    return entries, classes


def read_list(list_file: str) -> Tuple[List[Entry], List[str]]:
    """Entries of a list file: one `path label [split]` per line (paths relative to the file's
    folder; label an integer, -1 for none; split train/val/test, default train)."""
    base = os.path.dirname(os.path.abspath(list_file))
    entries = []
    with open(list_file, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in SPLITS):
                raise ValueError(f"{list_file}:{lineno}: expected 'path label [train|val|test]'")
            try:
                label = int(parts[1])
            except ValueError:
                raise ValueError(f"{list_file}:{lineno}: label {parts[1]!r} is not an integer") from None
            path = parts[0] if os.path.isabs(parts[0]) else os.path.join(base, parts[0])
            entries.append(Entry(path, parts[0], label, parts[2] if len(parts) == 3 else "train"))
    if not entries:
        raise ValueError(f"{list_file}: no entries")
    return entries, []


# ---------------------------------------------------------------------------------------------
# Encoding one image

def load_rgb(path: str) -> np.ndarray:
    import av

    with av.open(path) as c:
        frame = next(c.decode(video=0))
        return frame.to_ndarray(format="rgb24")


def pad_to(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
    h, w = rgb.shape[:2]
    return np.pad(rgb, ((0, height - h), (0, width - w), (0, 0)), mode="edge")


def _round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


def encode_hevc(rgb: np.ndarray, crf: int = 10, preset: str = "medium") -> Tuple[bytes, bytes]:
    """(hvcC box, sample of length-prefixed NAL units) of one picture encoded by x265 (PyAV).

    The picture is muxed by FFmpeg's MP4 muxer in memory, and the two parts are taken from it.
    """
    import av

    h, w = rgb.shape[:2]
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        stream = out.add_stream("libx265", rate=1)
        stream.width, stream.height = w, h
        stream.pix_fmt = "yuvj420p"
        stream.codec_tag = "hvc1"
        stream.options = {"crf": str(crf), "preset": preset,
                          "x265-params": "log-level=none:pools=1:frame-threads=1"}
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        frame = frame.reformat(format="yuvj420p")
        frame.pts = 0
        for packet in list(stream.encode(frame)) + list(stream.encode(None)):
            packet.dts = packet.pts
            out.mux(packet)
    data = buf.getvalue()
    # FFmpeg's MP4, read by cc/mp4 (the reader the datasets use).
    tracks = [t for t in _core.parse_mp4(data, "x265/MP4 muxer output").tracks
              if t["hvcc"] is not None]
    if len(tracks) != 1 or tracks[0]["samples"] != 1:
        raise RuntimeError("x265/MP4 muxer output without exactly one HEVC sample and an hvcC")
    at, size = tracks[0]["hvcc"]
    hvcc = data[at:at + size]
    offsets, sizes = tracks[0]["offsets"].tolist(), tracks[0]["sizes"].tolist()
    sample = data[offsets[0]:offsets[0] + sizes[0]]
    return hvcc, sample


def thumbnail(rgb: np.ndarray) -> Optional[np.ndarray]:
    """The picture scaled so its longer side is at most 512, or None when it already fits."""
    h, w = rgb.shape[:2]
    if max(h, w) <= THUMB_SIDE:
        return None
    import av

    scale = THUMB_SIDE / max(h, w)
    tw, th = max(1, round(w * scale)), max(1, round(h * scale))
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
    return frame.reformat(width=tw, height=th, interpolation="AREA").to_ndarray(format="rgb24")


def image_mp4(rgb: np.ndarray, target: int, filename: str, crf: int = 10,
              preset: str = "medium") -> bytes:
    """One per-image MP4 (Benzina's per-image layout)."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected uint8 [H, W, 3], got {rgb.dtype} {rgb.shape}")
    h, w = rgb.shape[:2]
    fh, fw = _round_up(h, FRAME_MULTIPLE), _round_up(w, FRAME_MULTIPLE)
    hvcc, full = encode_hevc(pad_to(rgb, fh, fw), crf, preset)
    thumb = thumbnail(rgb)
    if thumb is None:
        thumb_desc, thumb_clean, thumb_bytes = (hvcc, fw, fh), (w, h), b""
    else:
        th, tw = thumb.shape[:2]
        t_hvcc, thumb_bytes = encode_hevc(pad_to(thumb, THUMB_SIDE, THUMB_SIDE), crf, preset)
        thumb_desc, thumb_clean = (t_hvcc, THUMB_SIDE, THUMB_SIDE), (tw, th)
    name = filename.encode("utf-8") + b"\0"
    head = C.ftyp()
    base = len(head) + 8
    payload = full + thumb_bytes + struct.pack("<q", target) + name
    o_full = base
    o_thumb = base + len(full) if thumb_bytes else base
    o_target = base + len(full) + len(thumb_bytes)
    o_name = o_target + 8
    tracks = [
        C.TrackSpec("bzna_input", [o_full], [len(full)], hevc=(hvcc, fw, fh), clean=(w, h)),
        C.TrackSpec("bzna_fname", [o_name], [len(name)]),
        C.TrackSpec("bzna_target", [o_target], [8]),
        C.TrackSpec("bzna_thumb", [o_thumb], [len(thumb_bytes) or len(full)], hevc=thumb_desc,
                    clean=thumb_clean),
    ]
    return head + C.box(b"mdat", payload) + C.moov(tracks)


def _thumb_range(mp4: bytes) -> Tuple[int, int, bytes]:
    """(offset, size, hvcC) of the bzna_thumb sample inside a per-image MP4 we wrote."""
    movie = _core.parse_mp4(mp4, "per-image MP4")
    thumb = next((t for t in movie.tracks if t["name"] == "bzna_thumb"), None)
    if thumb is None or thumb["samples"] != 1:
        raise ValueError("per-image MP4 without a bzna_thumb track of one sample")
    hvcc = b""
    if thumb["hvcc"] is not None:
        at, size = thumb["hvcc"]
        hvcc = mp4[at:at + size]
    return int(thumb["offsets"][0]), int(thumb["sizes"][0]), hvcc


# ---------------------------------------------------------------------------------------------
# The container

def _encode_one(args) -> Tuple[int, str]:
    index, entry_path, name, target, part, crf, preset = args
    if os.path.exists(part):
        return index, part
    data = image_mp4(load_rgb(entry_path), target, name, crf, preset)
    if not parent_alive():  # a worker whose parent was killed writes nothing more
        os._exit(1)
    write_atomically(part, data, tmp=f"{part}.tmp.{os.getpid()}")
    return index, part


def create_dataset(source: str, output: str, *, crf: int = DEFAULT_CRF, preset: str = "medium",
                   workers: Optional[int] = None, progress: bool = True,
                   overwrite: bool = False) -> Dict[str, object]:
    """Converts an image folder or list file (see the module doc) into `output` (.bzna).

    `crf`: x265's constant rate factor, or ``"reference"`` for the reference toolchain's 10
    (:data:`REFERENCE_CRF`: several times the bytes of the default for a little more PSNR; see
    docs/benzina.md, "Size and quality"). `workers`: parallel single-threaded encoders (default:
    every usable core). The free space is checked before anything is encoded.

    Returns a summary: entries, splits, classes, bytes, ignored ({extension: count} of the files
    an image folder's scan left out). Re-running after an interruption reuses the
    images already encoded; an existing `output` is an error unless `overwrite` (or unless the
    interrupted run had renamed it into place, complete, and not yet removed its parts: then the
    re-run removes them and returns).

    Raises :class:`~tf_gulp._output_errors.OutputError` (an OSError) when the output cannot be
    written (a full disk, a read-only file system, no permission): the images encoded so far are
    kept in ``<output>.parts/`` and the same call resumes once there is room.
    """
    what = "create_dataset: "
    source = A.path(source, "source", what=what)
    output = A.path(output, "output", what=what)
    if crf == "reference":
        crf = REFERENCE_CRF
    crf = A.integer(crf, "crf", minimum=X265_CRF_RANGE[0], maximum=X265_CRF_RANGE[1], what=what)
    A.choice(preset, "preset", X265_PRESETS, what=what)
    workers = A.optional_integer(workers, "workers", minimum=1, what=what)
    progress = A.boolean(progress, "progress", what=what)
    overwrite = A.boolean(overwrite, "overwrite", what=what)
    try:
        return _create(source, output, crf=crf, preset=preset, workers=workers,
                       progress=progress, overwrite=overwrite)
    except OutputError as e:
        if not e.hint:
            e.hint = (f"the images encoded so far are kept in {output}.parts: run the same "
                      "conversion again to resume")
        raise


def _create(source: str, output: str, *, crf: int, preset: str, workers: Optional[int],
            progress: bool, overwrite: bool) -> Dict[str, object]:
    if os.path.exists(output) and not overwrite and not os.path.isdir(output + ".parts"):
        raise FileExistsError(f"{output} exists (pass overwrite=True / --overwrite)")
    ignored: Dict[str, int] = {}
    if os.path.isdir(source):
        entries, classes = scan_folder(source, ignored)
    else:
        entries, classes = read_list(source)
    order = {s: i for i, s in enumerate(SPLITS)}
    entries.sort(key=lambda e: order[e.split])  # stable: train, then val, then test
    parts_dir = output + ".parts"
    manifest = {"entries": [[e.path, e.name, e.target, e.split] for e in entries], "crf": crf,
                "preset": preset}
    manifest_path = os.path.join(parts_dir, "manifest.json")
    if os.path.isdir(parts_dir):
        try:
            with open(manifest_path, encoding="utf-8") as f:
                same = json.load(f) == manifest
        except (OSError, ValueError):
            same = False
        if os.path.exists(output) and not overwrite:
            if not same and os.listdir(parts_dir):
                raise FileExistsError(f"{output} exists (pass overwrite=True / --overwrite)")
            # The container is renamed into place only once complete, and the parts removed
            # after (the manifest last): this is a run that was stopped between the two, or
            # while removing the parts. Finish its clean-up.
            _remove_parts(parts_dir)
            return dict(_summary(entries, classes, output), ignored=ignored)
        if not same:  # another conversion's leftovers: start over
            shutil.rmtree(parts_dir)
    parts = [os.path.join(parts_dir, f"{i:09d}.mp4") for i in range(len(entries))]
    check_free_space(entries, parts, output, crf)
    with writing_output(parts_dir):
        os.makedirs(parts_dir, exist_ok=True)
    write_atomically(manifest_path, json.dumps(manifest).encode("utf-8"))

    jobs = [(i, e.path, e.name, e.target, parts[i], crf, preset) for i, e in enumerate(entries)]
    # One single-threaded x265 per usable core: a one-frame stream gains nothing from frame
    # threads, and a process per core beats one encoder's wavefront threads (docs/benchmarks.md).
    workers = workers or usable_cores()
    bar = None
    if progress:
        bar = progress_bar(True, total=len(jobs), unit="img", desc="bzna create")
    if workers == 1:
        for job in jobs:
            _encode_one(job)
            if bar:
                bar.update()
    else:
        # Workers end with this process: killed alone (SIGKILL), it must leave no encoder
        # running on and writing parts.
        with concurrent.futures.ProcessPoolExecutor(workers, initializer=end_with_parent,
                                                    initargs=(os.getpid(),)) as pool:
            for _ in pool.map(_encode_one, jobs, chunksize=4):
                if bar:
                    bar.update()
    if bar:
        bar.close()
    return dict(_assemble(entries, classes, parts, output, parts_dir), ignored=ignored)


def usable_cores() -> int:
    """The cores this process may run on (its affinity, e.g. a container's CPU set)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# Upper estimates of a per-image MP4's bytes per pixel of its picture (thumbnail, headers, label
# and name included), by crf: the most of any photo in bench/bench_bzna_size.py's run
# (bench/results/bzna_size.json) plus a quarter, so the space check errs on the safe side. A crf
# between two rows takes the smaller crf's row (fewer bytes at a larger crf); below 10, unmeasured,
# a generous bound.
_BYTES_PER_PIXEL = ((0, 4.0), (10, 1.6), (14, 1.35), (18, 1.05), (22, 0.8), (24, 0.7), (26, 0.6),
                    (28, 0.5))


def estimated_bytes_per_pixel(crf: int) -> float:
    """An upper estimate of a .bzna's bytes per pixel at `crf` (photos; see _BYTES_PER_PIXEL)."""
    bound = _BYTES_PER_PIXEL[0][1]
    for at, value in _BYTES_PER_PIXEL:
        if crf >= at:
            bound = value
    return bound


def check_free_space(entries: Sequence[Entry], parts: Sequence[str], output: str,
                     crf: int) -> None:
    """Refuse to start when the disk cannot hold the parts still to encode plus the container
    (about as large as all the parts): a run needs about twice the output's size while it runs.
    The parts already encoded count at their size, the others at the estimate for their pixels.
    Raises OutputError (ENOSPC) saying how much is needed and how much is free."""
    import errno

    from PIL import Image

    done, todo = 0, 0.0
    for entry, part in zip(entries, parts):
        if os.path.exists(part):
            done += os.path.getsize(part)
            continue
        try:
            with Image.open(entry.path) as im:  # the header only
                w, h = im.size
        except (OSError, ValueError):
            continue  # the encoder reports an unreadable image
        todo += w * h * estimated_bytes_per_pixel(crf)
    container = done + todo
    needed = int(todo + container)
    folder = os.path.dirname(os.path.abspath(output))
    free = shutil.disk_usage(folder).free
    if needed > free:
        from tf_gulp._format import human_bytes

        raise OutputError(errno.ENOSPC, os.strerror(errno.ENOSPC), output,
                          f"it needs about {human_bytes(needed)} free in {folder} (the images still "
                          f"to encode, about {human_bytes(todo)}, then the container, about "
                          f"{human_bytes(container)}), and {human_bytes(free)} is free; it stopped "
                          "before encoding anything")


def _assemble(entries: Sequence[Entry], classes: Sequence[str], parts: Sequence[str],
              output: str, parts_dir: str) -> Dict[str, object]:
    sizes = [os.path.getsize(p) for p in parts]
    names = [e.name.encode("utf-8") + b"\0" for e in entries]
    head = C.ftyp()
    payload_size = sum(sizes) + 8 * len(entries) + sum(len(n) for n in names)
    base = len(head) + 16
    tmp = output + ".tmp"
    with writing_output(output):
        try:
            _write_container(tmp, head, payload_size, parts, sizes, entries, names, classes,
                             base)
            replace_durably(tmp, output)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _remove_parts(parts_dir)
    return _summary(entries, classes, output)


def _write_container(tmp: str, head: bytes, payload_size: int, parts: Sequence[str],
                     sizes: Sequence[int], entries: Sequence[Entry], names: Sequence[bytes],
                     classes: Sequence[str], base: int) -> None:
    input_offsets, thumb_offsets, thumb_sizes = [], [], []
    pos = base
    thumb_hvcc = None
    with open(tmp, "wb") as out:
        out.write(head)
        out.write(C.large_box_header(b"mdat", payload_size))
        for p, size in zip(parts, sizes):
            with open(p, "rb") as f:
                data = f.read()
            t_off, t_size, t_hvcc = _thumb_range(data)
            thumb_hvcc = thumb_hvcc or t_hvcc
            input_offsets.append(pos)
            thumb_offsets.append(pos + t_off)
            thumb_sizes.append(t_size)
            out.write(data)
            pos += size
        target_offsets = [pos + 8 * i for i in range(len(entries))]
        out.write(b"".join(struct.pack("<q", e.target) for e in entries))
        pos += 8 * len(entries)
        name_offsets = []
        for n in names:
            name_offsets.append(pos)
            pos += len(n)
        out.write(b"".join(names))
        splits = _splits(entries)
        metadata = {"format": "tf_gulp.bzna/1", "splits": splits, "classes": list(classes)}
        tracks = [
            C.TrackSpec("bzna_input", input_offsets, sizes),
            C.TrackSpec("bzna_target", target_offsets, [8] * len(entries)),
            C.TrackSpec("bzna_fname", name_offsets, [len(n) for n in names]),
            # One sample entry for all thumbnails (all 512x512 x265 pictures); each sample is
            # decodable with its own per-image MP4's parameter sets.
            C.TrackSpec("bzna_thumb", thumb_offsets, thumb_sizes,
                        hevc=(thumb_hvcc, THUMB_SIDE, THUMB_SIDE)),
        ]
        out.write(C.moov(tracks, metadata))
        out.flush()
        os.fsync(out.fileno())


def _remove_parts(parts_dir: str) -> None:
    """Removes the encoded parts, the manifest last: a run killed meanwhile leaves a folder that the
    next run still recognizes as this conversion's."""
    manifest = os.path.join(parts_dir, "manifest.json")
    with os.scandir(parts_dir) as entries:
        for entry in entries:
            if entry.path != manifest:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(manifest)
    shutil.rmtree(parts_dir, ignore_errors=True)


def _splits(entries: Sequence[Entry]) -> Dict[str, List[int]]:
    """{split: [start, stop)} of the entries (sorted train, val, test)."""
    splits, start = {}, 0
    for s in SPLITS:
        count = sum(1 for e in entries if e.split == s)
        if count:
            splits[s] = [start, start + count]
        start += count
    return splits


def _summary(entries: Sequence[Entry], classes: Sequence[str], output: str) -> Dict[str, object]:
    return {"path": output, "entries": len(entries), "splits": _splits(entries),
            "classes": len(classes), "bytes": os.path.getsize(output)}
