"""Containers in the layout of Benzina's own toolchain (image2mp4 -> create_container -> concat ->
index_metadata), written for the tests with tf_gulp's box writer (`tf_gulp.bzna.container.box` /
`full_box`) and x265 pictures from `tf_gulp.bzna.create.encode_hevc`; no reference code.

Where that layout differs from the files tf_gulp writes (docs/benzina.md lists the same):

- per-image MP4s, as FFmpeg's MP4 muxer and image2mp4 leave them: `ftyp` isom/isom; video traks
  (bzna_input, bzna_thumb) with v0 `tkhd`/`mdhd`, an `hvc1` sample entry holding `hvcC`, `fiel`,
  `colr`, `pasp`, `clap`, `btrt` (clap inserted before the last child), `stbl` in FFmpeg's order
  (stsd, stts, stsc, stsz, stco) with the constant-size `stsz` form; meta traks (bzna_fname,
  bzna_target) with v1 `tkhd`/`mdhd` and `stbl` order stsd, stts, stsz, stsc, stco; no bzna_target
  trak at all for an entry without a target; bare file names (no folder); when the image fits in
  512x512 the thumbnail trak is a copy of the input trak;
- the container: `mvhd` v1; traks bzna_input / bzna_target / bzna_fname / bzna_thumb with v1
  `tkhd`/`mdhd` and `stsz` before `stsc`; the thumbnail trak's `hvc1` holds `hvcC`, `fiel`, `colr`,
  `pasp` (its last two children dropped); no split table (`udta`); the target track stops at the
  first entry without a target.
"""

from __future__ import annotations

import struct
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tf_gulp.bzna import container as C
from tf_gulp.bzna import create as K

box, full_box = C.box, C.full_box
TIMESCALE = 20
MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def mvhd_v1(duration: int, next_track_id: int) -> bytes:
    return full_box(b"mvhd", 1, 0, struct.pack(">QQIQ", 0, 0, TIMESCALE, duration),
                    struct.pack(">IH", 0x10000, 0), bytes(10), MATRIX, bytes(24),
                    struct.pack(">I", next_track_id))


def mvhd_v0(duration: int, next_track_id: int) -> bytes:
    return full_box(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, TIMESCALE, duration),
                    struct.pack(">IH", 0x10000, 0x100), bytes(10), MATRIX, bytes(24),
                    struct.pack(">I", next_track_id))


def tkhd(version: int, flags: int, track_id: int, n: int, width: int, height: int) -> bytes:
    times = (struct.pack(">QQI", 0, 0, track_id) + bytes(4) + struct.pack(">Q", TIMESCALE * n)
             if version == 1 else struct.pack(">III", 0, 0, track_id) + bytes(4)
             + struct.pack(">I", TIMESCALE * n))
    return full_box(b"tkhd", version, flags, times, bytes(8), struct.pack(">hhhH", 0, 0, 0, 0),
                    MATRIX, struct.pack(">II", width << 16, height << 16))


def mdhd(version: int, n: int) -> bytes:
    times = (struct.pack(">QQIQ", 0, 0, TIMESCALE, TIMESCALE * n) if version == 1
             else struct.pack(">IIII", 0, 0, TIMESCALE, TIMESCALE * n))
    return full_box(b"mdhd", version, 0, times, struct.pack(">HH", 0x55C4, 0))


def hdlr(handler: bytes, name: str) -> bytes:
    return full_box(b"hdlr", 0, 0, bytes(4), handler, bytes(12), name.encode() + b"\0")


def mett(mime: bytes) -> bytes:
    return box(b"mett", bytes(6), struct.pack(">H", 1), b"\0", mime + b"\0")


def hvc1(width: int, height: int, children: Sequence[bytes]) -> bytes:
    return box(b"hvc1", bytes(6), struct.pack(">H", 1), bytes(16),
               struct.pack(">HHIIIH", width, height, 0x480000, 0x480000, 0, 1), bytes(32),
               struct.pack(">Hh", 0x18, -1), *children)


def video_children(hvcc: bytes, coded: Tuple[int, int], clean: Tuple[int, int]) -> List[bytes]:
    """hvcC, then the boxes FFmpeg's muxer adds, with clap put before the last one as image2mp4
    does."""
    (fw, fh), (cw, ch) = coded, clean
    clap = box(b"clap", struct.pack(">8i", cw, 1, ch, 1, cw - fw, 2, ch - fh, 2))
    return [hvcc,
            box(b"fiel", bytes([1, 0])),
            box(b"colr", b"nclx", struct.pack(">HHHB", 2, 2, 2, 0x80)),
            box(b"pasp", struct.pack(">II", 1, 1)),
            clap,
            box(b"btrt", struct.pack(">III", 0, 1_000_000, 1_000_000))]


def stbl_ffmpeg(entry: bytes, size: int, offset: int) -> bytes:
    """One sample, in FFmpeg's order, with the constant-size stsz form (sample_size != 0)."""
    return box(b"stbl",
               full_box(b"stsd", 0, 0, struct.pack(">I", 1), entry),
               full_box(b"stts", 0, 0, struct.pack(">III", 1, 1, TIMESCALE)),
               full_box(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1)),
               full_box(b"stsz", 0, 0, struct.pack(">II", size, 1)),
               full_box(b"stco", 0, 0, struct.pack(">II", 1, offset)))


def stbl_reference(entry: bytes, sizes: Sequence[int], offsets: Sequence[int]) -> bytes:
    """stsz (one size per sample) before stsc, as Benzina's own boxes come; co64 past 4 GiB."""
    n = len(sizes)
    wide = any(o > 0xFFFFFFFF for o in offsets)
    chunk_offsets = (full_box(b"co64", 0, 0, struct.pack(f">I{n}Q", n, *offsets)) if wide
                     else full_box(b"stco", 0, 0, struct.pack(f">I{n}I", n, *offsets)))
    return box(b"stbl",
               full_box(b"stsd", 0, 0, struct.pack(">I", 1), entry),
               full_box(b"stts", 0, 0, struct.pack(">III", 1, n, TIMESCALE)),
               full_box(b"stsz", 0, 0, struct.pack(f">II{n}I", 0, n, *sizes)),
               full_box(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1)),
               chunk_offsets)


def dinf() -> bytes:
    return box(b"dinf", full_box(b"dref", 0, 0, struct.pack(">I", 1), full_box(b"url ", 0, 1)))


def video_trak_ffmpeg(name: str, flags: int, track_id: int, entry: bytes, clean: Tuple[int, int],
                      size: int, offset: int) -> bytes:
    return box(b"trak", tkhd(0, flags, track_id, 1, *clean),
               box(b"mdia", mdhd(0, 1), hdlr(b"vide", name),
                   box(b"minf", full_box(b"vmhd", 0, 1, bytes(8)), dinf(),
                       stbl_ffmpeg(entry, size, offset))))


def meta_trak(name: str, track_id: int, mime: bytes, sizes: Sequence[int],
              offsets: Sequence[int]) -> bytes:
    return box(b"trak", tkhd(1, 0, track_id, len(sizes), 0, 0),
               box(b"mdia", mdhd(1, len(sizes)), hdlr(b"meta", name),
                   box(b"minf", full_box(b"nmhd", 0, 0), dinf(),
                       stbl_reference(mett(mime), sizes, offsets))))


def per_image_mp4(rgb: np.ndarray, target: Optional[int], name: str,
                  preset: str = "ultrafast") -> bytes:
    """One image as image2mp4 leaves it (see the module doc)."""
    h, w = rgb.shape[:2]
    fh, fw = K._round_up(h, K.FRAME_MULTIPLE), K._round_up(w, K.FRAME_MULTIPLE)
    hvcc, full = K.encode_hevc(K.pad_to(rgb, fh, fw), 10, preset)
    input_entry = hvc1(fw, fh, video_children(hvcc, (fw, fh), (w, h)))
    thumb = K.thumbnail(rgb)
    if thumb is not None:
        th, tw = thumb.shape[:2]
        t_hvcc, thumb_bytes = K.encode_hevc(K.pad_to(thumb, K.THUMB_SIDE, K.THUMB_SIDE), 10, preset)
        side = K.THUMB_SIDE
        thumb_entry = hvc1(side, side, video_children(t_hvcc, (side, side), (tw, th)))
    else:
        thumb_bytes = b""
    head = box(b"ftyp", b"isom", struct.pack(">I", 0), b"isom")
    base = len(head) + 8
    target_bytes = b"" if target is None else struct.pack("<q", target)
    fname = name.encode() + b"\0"
    payload = full + thumb_bytes + target_bytes + fname
    o_thumb = base + len(full)
    o_target = o_thumb + len(thumb_bytes)
    o_name = o_target + len(target_bytes)
    traks = [video_trak_ffmpeg("bzna_input", 0, 1, input_entry, (w, h), len(full), base),
             meta_trak("bzna_fname", 2, b"text/plain", [len(fname)], [o_name])]
    if target is not None:
        traks.append(meta_trak("bzna_target", 3, b"application/octet-stream", [8], [o_target]))
    if thumb is not None:
        traks.append(video_trak_ffmpeg("bzna_thumb", 3, len(traks) + 1, thumb_entry, (tw, th),
                                       len(thumb_bytes), o_thumb))
    else:  # a copy of the input trak
        traks.append(video_trak_ffmpeg("bzna_thumb", 3, len(traks) + 1, input_entry, (w, h),
                                       len(full), base))
    moov = box(b"moov", mvhd_v0(TIMESCALE, len(traks) + 1), *traks)
    return head + box(b"mdat", payload) + moov


def _thumb_sample(mp4: bytes) -> Tuple[int, int, bytes]:
    """(offset, size, hvc1 box) of the bzna_thumb trak of a per_image_mp4() file, found by
    walking its boxes."""
    for kind, p, e in C.iter_boxes(mp4):
        if kind != b"moov":
            continue
        for k2, p2, e2 in C.iter_boxes(mp4, p, e):
            if k2 != b"trak" or b"bzna_thumb\0" not in mp4[p2:e2]:
                continue
            stack, found = [(p2, e2)], {}
            while stack:
                a, b = stack.pop()
                for k, q, r in C.iter_boxes(mp4, a, b):
                    if k in (b"mdia", b"minf", b"stbl"):
                        stack.append((q, r))
                    elif k == b"stsd":
                        found["entry"] = mp4[q + 8:r]
                    elif k == b"stsz":
                        found["size"] = struct.unpack(">I", mp4[q + 4:q + 8])[0]
                    elif k == b"stco":
                        found["offset"] = struct.unpack(">I", mp4[q + 8:q + 12])[0]
            return found["offset"], found["size"], found["entry"]
    raise ValueError("no bzna_thumb trak")


def strip_last_children(entry: bytes, count: int) -> bytes:
    """An hvc1 box without its last `count` child boxes (index_metadata drops clap and the box
    after it from the thumbnail track's sample entry)."""
    children = [entry[p - 8:e] for _, p, e in C.iter_boxes(entry, 8 + 78)]
    return hvc1(*struct.unpack(">HH", entry[32:36]), children[:len(children) - count])


def write_container(path: str, mp4s: Sequence[bytes], targets: Sequence[Optional[int]],
                    names: Sequence[str], input_repeat: Optional[Sequence[int]] = None) -> None:
    """The container as concat + index_metadata leave it. `input_repeat` (entry -> index into
    `mp4s`) lets a large container point many entries at the same per-image MP4s."""
    order = list(range(len(mp4s))) if input_repeat is None else list(input_repeat)
    n = len(order)
    head = box(b"ftyp", b"isom", struct.pack(">I", 0), b"bzna", b"isom")
    base = len(head) + 16
    mp4_offsets, pos = [], base
    for m in mp4s:
        mp4_offsets.append(pos)
        pos += len(m)
    # Targets stop at the first entry without one.
    stored_targets = []
    for i in order:
        if targets[i] is None:
            break
        stored_targets.append(targets[i])
    target_offset = pos
    pos += 8 * len(stored_targets)
    fnames = [names[i].encode() + b"\0" for i in order]
    fname_offsets = []
    for f in fnames:
        fname_offsets.append(pos)
        pos += len(f)
    thumbs = [_thumb_sample(m) for m in mp4s]
    thumb_entry = strip_last_children(thumbs[order[0]][2], 2)
    traks = [
        meta_trak("bzna_input", 1, b"video/mp4", [len(mp4s[i]) for i in order],
                  [mp4_offsets[i] for i in order]),
        meta_trak("bzna_target", 2, b"application/octet-stream", [8] * len(stored_targets),
                  [target_offset + 8 * k for k in range(len(stored_targets))]),
        meta_trak("bzna_fname", 3, b"text/plain", [len(f) for f in fnames], fname_offsets),
        box(b"trak", tkhd(1, 3, 4, n, K.THUMB_SIDE, K.THUMB_SIDE),
            box(b"mdia", mdhd(1, n), hdlr(b"vide", "bzna_thumb"),
                box(b"minf", full_box(b"vmhd", 0, 1, bytes(8)), dinf(),
                    stbl_reference(thumb_entry, [thumbs[i][1] for i in order],
                                   [mp4_offsets[i] + thumbs[i][0] for i in order])))),
    ]
    moov = box(b"moov", mvhd_v1(TIMESCALE * n, 5), *traks)
    with open(path, "wb") as f:
        f.write(head)
        f.write(C.large_box_header(b"mdat", pos - base))
        f.write(b"".join(mp4s))
        f.write(b"".join(struct.pack("<q", t) for t in stored_targets))
        f.write(b"".join(fnames))
        f.write(moov)


def read_moov(path) -> Tuple[bytes, int, int]:
    """(moov box bytes, its byte offset, file size) of a well-formed file, the moov located by
    cc/mp4 (tf_gulp._core): tests rebuild a file's moov to make bad variants of it."""
    movie = C.read_movie(str(path))
    at, size = movie.moov
    with open(path, "rb") as f:
        f.seek(at)
        return f.read(size), at, movie.size
