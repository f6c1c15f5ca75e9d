"""Class folders (``root/<class>/<file>``), numbered as Keras's ``image_dataset_from_directory``
numbers them, and the files a scan leaves out, counted by extension.

One numbering for every tool that reads class folders (``tf-gulp ingest image-folder`` /
``video-folder``, ``tf-gulp bzna create``, the FFRecord recipe): the classes are the root's
subfolders whose names do not start with ``.``, in sorted order (Python's string order, as Keras
sorts them), numbered from 0. A folder that holds no file the tool takes keeps its number (the
classes after it do not shift), with a :class:`EmptyClassWarning`. What a scan leaves out (files
of other extensions, files directly in the root, hidden files) is counted by extension, for the
summary every ingest ends with (:func:`ignored_summary`).
"""

from __future__ import annotations

import collections
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

__all__ = ["ClassFolders", "ClassTable", "EmptyClassWarning", "class_folder_names",
           "ignored_summary", "names_by_index", "scan_class_folders", "write_label2idx"]

NO_EXTENSION = "(no extension)"
#: The label table's file name, in a gulp directory or next to FFRecord files.
LABEL_TABLE = "label2idx.json"


class EmptyClassWarning(UserWarning):
    """A class folder holds no file the tool takes; it keeps its index."""


def class_folder_names(root: str) -> List[str]:
    """The class names of ``root``: its subfolders (symlinks followed) not starting with ``.``,
    sorted, as ``tf.keras.utils.image_dataset_from_directory`` lists them."""
    return [name for name in sorted(os.listdir(root))
            if not name.startswith(".") and os.path.isdir(os.path.join(root, name))]


def extension_of(name: str) -> str:
    """A file's extension as the summaries count it: lower case with the dot, or
    ``"(no extension)"``."""
    ext = os.path.splitext(name)[1].lower()
    return ext or NO_EXTENSION


@dataclass
class ClassFolders:
    """What :func:`scan_class_folders` found.

    Attributes:
      class_names: the classes, index = position (Keras's ``class_names``).
      files: ``(relative path, class index)`` per file taken, class by class, files sorted.
      ignored: ``{extension: count}`` of the files left out.
      empty: the classes with no file taken.
    """

    class_names: List[str]
    files: List[Tuple[str, int]] = field(default_factory=list)
    ignored: Dict[str, int] = field(default_factory=dict)
    empty: List[str] = field(default_factory=list)


def scan_class_folders(root: str, extensions: Optional[Iterable[str]], what: str = "",
                       warn: bool = True) -> ClassFolders:
    """Every file under ``root/<class>/`` (any depth, hidden files and folders skipped) whose
    extension is in ``extensions`` (lower case, with the dot; None: every file), numbered by
    class as Keras numbers them. With ``warn``, one :class:`EmptyClassWarning` names the classes
    left empty; ``what`` begins it (e.g. the command's name)."""
    exts = None if extensions is None else {e.lower() for e in extensions}
    names = class_folder_names(root)
    found = ClassFolders(class_names=names)
    ignored: Dict[str, int] = collections.Counter()
    for name in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, name)):
            ignored[extension_of(name)] += 1  # files directly in the root belong to no class
    for index, name in enumerate(names):
        before = len(found.files)
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, name), followlinks=True):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for file in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, file), root).replace(os.sep, "/")
                if file.startswith(".") or (exts is not None and extension_of(file) not in exts):
                    ignored[extension_of(file)] += 1
                else:
                    found.files.append((rel, index))
        if len(found.files) == before:
            found.empty.append(name)
    found.ignored = dict(sorted(ignored.items()))
    if warn:
        warn_empty_classes(root, found.empty, {n: i for i, n in enumerate(names)}, what)
    return found


def warn_empty_classes(root: str, empty: List[str], indices: Mapping[str, int],
                       what: str = "") -> None:
    """One :class:`EmptyClassWarning` naming the classes with no file and their kept indices."""
    if not empty:
        return
    listed = ", ".join(f"{name!r} (index {indices[name]})" for name in empty[:5])
    more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
    warnings.warn(f"{what}{root}: {len(empty)} class folder{'s' if len(empty) > 1 else ''} "
                  f"hold{'' if len(empty) > 1 else 's'} no file to take: {listed}{more}; "
                  f"{'they keep their indices' if len(empty) > 1 else 'it keeps its index'} "
                  f"(as Keras's image_dataset_from_directory numbers folders), so the classes "
                  f"after {'them' if len(empty) > 1 else 'it'} do not shift",
                  EmptyClassWarning, stacklevel=3)


def ignored_summary(ignored: Mapping[str, int]) -> str:
    """``"ignored 3 files: 2 .gif, 1 .txt"``, or ``"ignored no files"``."""
    total = sum(ignored.values())
    if not total:
        return "ignored no files"
    parts = ", ".join(f"{n} {ext}" for ext, n in sorted(ignored.items(),
                                                        key=lambda kv: (-kv[1], kv[0])))
    return f"ignored {total} file{'s' if total != 1 else ''}: {parts}"


def names_by_index(label2idx: Mapping[str, int]) -> List[Optional[str]]:
    """``class_names`` of a label table ``{name: index}``: position i holds the name of index i
    (None for an index no name has); negative indices are left out."""
    size = max((i for i in label2idx.values() if i >= 0), default=-1) + 1
    names: List[Optional[str]] = [None] * size
    for name, index in sorted(label2idx.items(), key=lambda kv: kv[1]):
        if index >= 0 and names[index] is None:
            names[index] = name
    return names


def write_label2idx(directory: str, class_names: Iterable[str]) -> str:
    """Writes ``directory/label2idx.json`` (``{name: index}``, the table GulpDataset and
    FFRecordDataset read their ``class_names`` from) atomically; returns its path."""
    from tf_gulp._durable import write_atomically  # pylint: disable=import-outside-toplevel

    path = os.path.join(directory, LABEL_TABLE)
    table = {name: i for i, name in enumerate(class_names)}
    write_atomically(path, (json.dumps(table, indent=1) + "\n").encode("utf-8"))
    return path


class ClassTable:
    """``class_names`` and ``num_classes`` of a dataset, as Keras's
    ``image_dataset_from_directory`` gives ``class_names``: from the dataset's label table
    (``label2idx.json``, a Benzina file's split table), set by the dataset as ``_class_names``.
    Both are None where the dataset has no table."""

    _class_names: Optional[Tuple[Optional[str], ...]] = None

    @property
    def class_names(self) -> Optional[List[Optional[str]]]:
        """The class of each label index (index i: ``class_names[i]``), or None."""
        return None if self._class_names is None else list(self._class_names)

    @property
    def num_classes(self) -> Optional[int]:
        """``len(class_names)`` (one more than the highest label index), or None."""
        return None if self._class_names is None else len(self._class_names)


def read_label_table(directory: str) -> Optional[Dict[str, int]]:
    """``directory/label2idx.json`` as ``{name: index}`` (local or any TensorFlow file system);
    None when there is none or it is not a JSON object of integers. The one reader of the table
    for every format (a gulp directory's, the FFRecord recipe's)."""
    from tf_gulp.gulp.label_maps import read_label2idx  # pylint: disable=import-outside-toplevel

    return read_label2idx(directory)
