"""Small text formatting helpers shared by the library's reports and the tf-gulp command."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KiB"``: binary units, one decimal (whole bytes below 1 KiB)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover
