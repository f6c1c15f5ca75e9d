"""Class lists and label maps that must agree between the directories of one model.

A model trained on directory A and validated on directory B only makes sense when a class name has
the same index in both ``label2idx.json`` files. An ingest that numbers the classes it finds
(the folder adapters do, in sorted order) gives a validation folder that lacks one class other
numbers than its training folder, silently. Two things prevent that:

* :func:`read_class_list` reads a class list fixing the numbering, which every built-in adapter
  and ``tf-gulp ingest --class-file`` accept: a class list file, a ``label2idx.json``, or the
  training gulp directory itself (its ``label2idx.json``);
* :func:`note_label_map` remembers the label map of each directory this process reads
  (:class:`~tf_gulp.GulpDataset` calls it) and warns (:class:`LabelMapWarning`, naming both
  directories and the classes that differ) when two of them give one class name different
  indices.
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from tf_gulp._files import absolute, exists, isdir, join, read_regular
from tf_gulp._json import loads_json
from tf_gulp.gulp.index import load_label_map

__all__ = ["LABEL2IDX", "LabelMapWarning", "label_map_differences", "note_label_map",
           "read_class_list", "read_label2idx"]

#: The label map's file name in a gulp directory.
LABEL2IDX = "label2idx.json"


class LabelMapWarning(UserWarning):
    """Two directories read by this process number one class differently."""


def _strip_brackets(text: str) -> str:
    # Something-Something's templates ("Putting [something] on [something]") name classes
    # without the brackets.
    return text.replace("[", "").replace("]", "")


def _index(value: Any, where: str, label: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{where}: class {label!r} has index {value!r}, not an integer")
    try:
        index = int(value)  # Something-Something v2 writes indices as strings ("12")
    except (TypeError, ValueError):
        raise ValueError(f"{where}: class {label!r} has index {value!r}, not an integer") \
            from None
    if index < 0 or str(index) != str(value).strip():
        raise ValueError(f"{where}: class {label!r} has index {value!r}, not an integer >= 0")
    return index


def read_class_list(source: Union[str, os.PathLike]) -> Dict[str, int]:
    """``{class: index}`` fixing the numbering of classes, read from ``source``:

    * a gulp directory: its ``label2idx.json`` (e.g. the training directory, so that a validation
      directory numbers classes the same way);
    * a JSON file: an object ``{class: index}`` (a ``label2idx.json``, Something-Something v2's
      ``labels.json`` with indices as strings) or a list of class names (index = position);
    * any other file: one class name per line (index = line number from 0, blank lines skipped),
      as Something-Something v1's and Jester's ``*-labels.csv``.

    Brackets are removed from class names (Something-Something's templates). Raises
    FileNotFoundError, or ValueError naming the file for one that is not a class list (two
    classes with one index, a negative or non-integer index).
    """
    path = os.fsdecode(source)
    if isdir(path):
        label_path = join(path, LABEL2IDX)
        if not exists(label_path):
            raise FileNotFoundError(f"{path}: a folder without {LABEL2IDX} (give a gulp "
                                    "directory written with labels, or a class list file)")
        return _distinct_indexes(label_path, load_label_map(label_path))
    if not exists(path):
        raise FileNotFoundError(f"{path}: no such file or folder")
    data = read_regular(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a text file ({e})") from None
    if path.lower().endswith(".json"):
        try:
            parsed = loads_json(text)
        except ValueError as e:
            raise ValueError(f"{path}: not valid JSON ({e})") from None
        if isinstance(parsed, dict):
            mapping = {_strip_brackets(str(k)): _index(v, path, str(k)) for k, v in parsed.items()}
        elif isinstance(parsed, list):
            mapping = {_strip_brackets(str(k)): i for i, k in enumerate(parsed)}
        else:
            raise ValueError(f"{path}: expected a JSON object {{class: index}} or a list of "
                             "classes")
    else:
        names = [line.strip() for line in text.splitlines() if line.strip()]
        mapping = {name: i for i, name in enumerate(names)}
        if len(mapping) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"{path}: class {twice!r} is listed twice")
    return _distinct_indexes(path, mapping)


def _distinct_indexes(path: str, mapping: Dict[str, int]) -> Dict[str, int]:
    """``mapping`` when no two classes share an index; ValueError naming ``path`` otherwise."""
    seen: Dict[int, str] = {}
    for label, index in mapping.items():
        other = seen.setdefault(index, label)
        if other != label:
            raise ValueError(f"{path}: classes {other!r} and {label!r} both have index {index}")
    return mapping


def read_label2idx(directory: Union[str, os.PathLike]) -> Optional[Dict[str, int]]:
    """The ``label2idx.json`` of a gulp directory as ``{label: index}``, read by the core's rules
    (GulpDataset's, :func:`tf_gulp.gulp.index.load_label_map`); None when it has none or it is
    not a JSON object of integers (the readers report that themselves)."""
    try:
        return load_label_map(join(os.fsdecode(directory), LABEL2IDX))
    except (OSError, ValueError):
        return None


def label_map_differences(a: Mapping[str, int],
                          b: Mapping[str, int]) -> List[Tuple[str, int, int]]:
    """``(class, index in a, index in b)`` of every class both maps hold with different
    indices, sorted by class."""
    return sorted((k, int(a[k]), int(b[k])) for k in a.keys() & b.keys() if a[k] != b[k])


_seen_lock = threading.Lock()
_seen: Dict[str, Dict[str, int]] = {}  # directory -> the label map it was read with
_warned: set = set()


def note_label_map(directory: Union[str, os.PathLike],
                   label2idx: Optional[Mapping[str, int]] = None) -> None:
    """Remember the label map ``directory`` is read with (``label2idx`` when given, else its
    ``label2idx.json``), and warn (:class:`LabelMapWarning`) when a directory read earlier in
    this process gives one of its classes another index: a model trained on one and validated
    on the other would be scored against the wrong classes. Each pair of directories warns once.
    """
    name = absolute(directory)
    mapping = dict(label2idx) if label2idx is not None else read_label2idx(name)
    if not mapping:
        return
    conflicts = []
    with _seen_lock:
        for other, other_map in _seen.items():
            pair = (other, name) if other < name else (name, other)
            if other == name or pair in _warned:
                continue
            differ = label_map_differences(other_map, mapping)
            if differ:
                _warned.add(pair)
                conflicts.append((other, differ))
        _seen[name] = mapping
    if not conflicts:
        return
    other, differ = conflicts[0]  # one warning per directory, naming the first that disagrees
    shown = ", ".join(f"{label!r}: {i} in {other}, {j} in {name}" for label, i, j in differ[:3])
    more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
    others = (f" (and {len(conflicts) - 1} other director"
              f"{'ies' if len(conflicts) > 2 else 'y'} read earlier)" if len(conflicts) > 1 else "")
    warnings.warn(
        f"{other}{others} and {name} number {len(differ)} class"
        f"{'es' if len(differ) > 1 else ''} differently ({shown}{more}): a model trained on one "
        f"is scored against the wrong classes on the other. Read {name} with the other's "
        f"numbering (label2idx=tf_gulp.gulp.read_label2idx({other!r})), or ingest it again with "
        f"tf-gulp ingest ... --class-file {other}", LabelMapWarning, stacklevel=3)

