"""gulpio2's ``sanity_utils``: the checks its ``gulp2_sanity_check`` script runs, for code that
calls them. ``tf-gulp check`` runs these checks and more (docs/ingest.md); these functions take
any object with gulpio2's ``chunks()`` (a :class:`~tf_gulp.gulp.GulpDirectory`), each chunk
having ``meta_file_path``, ``data_file_path`` and ``meta_dict``.
"""

from __future__ import annotations

import collections
import os
from typing import Any, Dict, Hashable, List, Sequence

__all__ = ["check_data_file_size", "check_data_file_size_larger_zero",
           "check_for_duplicate_ids", "check_for_failures", "check_meta_file_size_larger_zero",
           "extract_all_ids", "get_duplicate_entries"]


def check_meta_file_size_larger_zero(gulp_directory: Any) -> List[str]:
    """The ``.gmeta`` files that are empty."""
    return [c.meta_file_path for c in gulp_directory.chunks()
            if os.stat(c.meta_file_path).st_size == 0]


def check_data_file_size_larger_zero(gulp_directory: Any) -> List[str]:
    """The ``.gulp`` files that are empty."""
    return [c.data_file_path for c in gulp_directory.chunks()
            if os.stat(c.data_file_path).st_size == 0]


def check_data_file_size(gulp_directory: Any) -> List[str]:
    """The ``.gulp`` files whose size is not where their index's frames end.

    gulpio2 takes the end of the last frame of the last id; this takes the furthest frame end of
    any id, which is the same for chunks written in order and also right for chunks whose frames
    are not in file order. A chunk without frames must have an empty ``.gulp``."""
    failures = []
    for chunk in gulp_directory.chunks():
        end = 0
        for entry in chunk.meta_dict.values():
            for info in entry["frame_info"]:
                end = max(end, int(info[0]) + int(info[2]))
        if os.stat(chunk.data_file_path).st_size != end:
            failures.append(chunk.data_file_path)
    return failures


def extract_all_ids(gulp_directory: Any) -> List[str]:
    """Every id of every chunk, in chunk order (repeated ids repeated)."""
    ids: List[str] = []
    for chunk in gulp_directory.chunks():
        ids.extend(chunk.meta_dict.keys())
    return ids


def get_duplicate_entries(list_: Sequence[Hashable]) -> List[Hashable]:
    """The values occurring more than once in ``list_``, each once, in order of first occurrence."""
    counts = collections.Counter(list_)
    return [value for value, n in counts.items() if n > 1]


def check_for_duplicate_ids(gulp_directory: Any) -> List[str]:
    """The ids found in more than one place (two chunks, or twice in one)."""
    return get_duplicate_entries(extract_all_ids(gulp_directory))


def check_for_failures(result: Dict[str, Any]) -> None:
    """Print a check's outcome as gulpio2 does: ``Sanity Check: <message>`` then ``Test passed`` or
    ``Test failed for: <failures>``."""
    print(f"Sanity Check: {result['message']}")
    if result["failures"]:
        print(f"Test failed for: {result['failures']}")
    else:
        print("Test passed")
