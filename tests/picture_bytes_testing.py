"""BMPs and GIFs written byte by byte, for what PIL never writes: top-down BMP rows, 8-bit BMPs
with a colour palette of fewer than 256 entries, GIFs whose first frame is smaller than the
logical screen and sits at an offset, with a local colour table, a transparent index or interlaced
rows. Built from the format specifications (Microsoft's BITMAPINFOHEADER, GIF89a), no encoder
library, so a decoder bug that PIL-written files hide (rows always bottom-up, frame always the
whole screen) shows."""

from __future__ import annotations

import struct
from typing import Optional, Sequence, Tuple

import numpy as np


def bmp(pixels: np.ndarray, *, top_down: bool = False,
        palette: Optional[Sequence[Tuple[int, int, int]]] = None) -> bytes:
    """An uncompressed BMP (BITMAPINFOHEADER). `pixels`: (H, W, 3) RGB (24-bit), (H, W, 4) RGBA
    (32-bit, BI_RGB), or (H, W) palette indices (8-bit) with `palette` of RGB triples. Rows are
    stored top row first when `top_down` (a negative height), else bottom row first."""
    h, w = pixels.shape[:2]
    if pixels.ndim == 2:
        bits, stored = 8, pixels.astype(np.uint8)
    elif pixels.shape[2] == 3:
        bits, stored = 24, pixels[..., ::-1]
    else:
        bits, stored = 32, pixels[..., [2, 1, 0, 3]]
    row_bytes = (w * bits + 31) // 32 * 4
    rows = [np.ascontiguousarray(r).tobytes().ljust(row_bytes, b"\0") for r in stored]
    data = b"".join(rows if top_down else rows[::-1])
    colours = b"".join(bytes([b, g, r, 0]) for r, g, b in (palette or ()))
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bits, 0, len(data),
                       2835, 2835, len(palette or ()), 0)
    offset = 14 + len(info) + len(colours)
    return b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset) + info + colours + data


def _lzw_literals(indices: Sequence[int], min_bits: int) -> bytes:
    """GIF LZW data that codes each index as itself: a clear code before the table would grow
    past the first code width, so every code is min_bits + 1 bits (valid LZW, no compression)."""
    clear, width = 1 << min_bits, min_bits + 1
    run = (1 << width) - clear - 2  # literals after a clear before the decoder widens its codes
    codes = []
    for n, index in enumerate(indices):
        if n % run == 0:
            codes.append(clear)
        codes.append(index)
    codes.append(clear + 1)
    out, buffer, bits = bytearray(), 0, 0
    for code in codes:
        buffer |= code << bits
        bits += width
        while bits >= 8:
            out.append(buffer & 255)
            buffer >>= 8
            bits -= 8
    if bits:
        out.append(buffer & 255)
    return bytes(out)


def gif(screen: Tuple[int, int], offset: Tuple[int, int], indices: np.ndarray,
        palette: Sequence[Tuple[int, int, int]], *, local: bool = False,
        transparent: Optional[int] = None, interlaced: bool = False, background: int = 0) -> bytes:
    """A GIF89a of one frame: `indices` (fh, fw) at `offset` (left, top) on a `screen` (width,
    height), with `palette` as the global colour table (or the frame's local one), an optional
    transparent index (graphic control extension) and optionally interlaced rows."""
    sw, sh = screen
    left, top = offset
    fh, fw = indices.shape
    size_bits = max(1, (len(palette) - 1).bit_length())
    table = b"".join(bytes(c) for c in palette).ljust(3 * (1 << size_bits), b"\0")
    out = b"GIF89a" + struct.pack("<HHBBB", sw, sh, 0 if local else 0x80 | (size_bits - 1),
                                  background, 0)
    if not local:
        out += table
    if transparent is not None:
        out += b"\x21\xf9\x04\x01\x00\x00" + bytes([transparent]) + b"\x00"
    flags = (0x80 | (size_bits - 1) if local else 0) | (0x40 if interlaced else 0)
    out += b"\x2c" + struct.pack("<HHHHB", left, top, fw, fh, flags)
    if local:
        out += table
    rows = list(range(fh))
    if interlaced:  # rows 0, 8, ..., then 4, 12, ..., then 2, 6, ..., then 1, 3, ...
        rows = [y for start, step in ((0, 8), (4, 8), (2, 4), (1, 2))
                for y in range(start, fh, step)]
    min_bits = max(2, size_bits)
    data = _lzw_literals([int(i) for y in rows for i in indices[y]], min_bits)
    out += bytes([min_bits])
    for i in range(0, len(data), 255):
        out += bytes([len(data[i:i + 255])]) + data[i:i + 255]
    return out + b"\x00\x3b"


def gif_composite(screen: Tuple[int, int], offset: Tuple[int, int], indices: np.ndarray,
                  palette: Sequence[Tuple[int, int, int]],
                  transparent: Optional[int] = None) -> np.ndarray:
    """The rule docs/images.md states for `gif(...)`'s picture: the screen black, the frame's
    colours at its offset (cut at the screen's edge), its transparent pixels black."""
    sw, sh = screen
    left, top = offset
    out = np.zeros((sh, sw, 3), np.uint8)
    colours = np.asarray(palette, np.uint8)[indices]
    if transparent is not None:
        colours[indices == transparent] = 0
    fh, fw = indices.shape
    h, w = min(fh, sh - top), min(fw, sw - left)
    out[top:top + h, left:left + w] = colours[:h, :w]
    return out
