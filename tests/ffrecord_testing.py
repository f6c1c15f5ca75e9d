"""Test helpers for FFRecord (a helper module, not a test file).

``ffrecord_bytes`` encodes records field by field with ``struct`` and ``zlib.crc32``, independently
of the C++ writer, so tests can build exact files (and corrupt them on purpose) and compare the
writer's output against them. ``FIXTURES`` is the folder of files written by the reference
implementation (see tests/data/README.md).
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import struct
import zlib
from typing import Dict, List, Sequence

FIXTURES = pathlib.Path(__file__).parent / "data" / "ffrecord"
EXPECTED: Dict = json.loads((FIXTURES / "EXPECTED.json").read_text())


def ffrecord_bytes(records: Sequence[bytes], meta_crc: bool = True) -> bytes:
    """The bytes of an FFRecord file holding ``records`` (meta_crc 0 when ``meta_crc`` is False)."""
    n = len(records)
    header = 12 + 12 * n
    offsets, pos = [], header
    for r in records:
        offsets.append(pos)
        pos += len(r)
    table = struct.pack("<q", n)
    table += struct.pack(f"<{n}I", *[zlib.crc32(r) for r in records])
    table += struct.pack(f"<{n}q", *offsets)
    crc = zlib.crc32(table) if meta_crc else 0
    return struct.pack("<I", crc) + table + b"".join(records)


def offset_field(n: int, i: int) -> int:
    """Byte offset of record i's offset in a file of n records."""
    return 12 + 4 * n + 8 * i


def patch(data: bytes, at: int, fmt: str, value, reseal: bool = True) -> bytes:
    """``data`` with ``struct.pack(fmt, value)`` written at ``at``; with ``reseal`` the metadata
    checksum is recomputed, so only the structural error remains."""
    out = bytearray(data)
    out[at:at + struct.calcsize(fmt)] = struct.pack(fmt, value)
    if reseal:
        n = struct.unpack_from("<q", out, 4)[0]
        out[0:4] = struct.pack("<I", zlib.crc32(bytes(out[4:12 + 12 * n])))
    return bytes(out)


def sha256(data) -> str:
    return hashlib.sha256(bytes(data)).hexdigest()


def fixture_records(name: str) -> List[bytes]:
    """The records of a fixture file, parsed here with struct (no project code)."""
    data = (FIXTURES / name).read_bytes()
    n = struct.unpack_from("<q", data, 4)[0]
    offsets = list(struct.unpack_from(f"<{n}q", data, 12 + 4 * n)) + [len(data)]
    return [data[offsets[i]:offsets[i + 1]] for i in range(n)]


def sample_records(n: int, seed: int = 0) -> List[bytes]:
    """``n`` records of varied sizes (0 to ~3 KB), record i starting with its index."""
    out = []
    for i in range(n):
        size = (i * 7919 + seed * 31) % 3000
        body = bytes((i * 13 + k + seed) % 256 for k in range(min(size, 64))) * (size // 64 + 1)
        out.append(f"{i}:".encode() + body[:size])
    return out
