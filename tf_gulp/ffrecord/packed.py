"""Packed folders: a directory tree stored as one FFRecord file, compatible with the reference's
``pack_folder`` / ``PackedFolder``.

Layout: every file of the tree is a record, in depth-first order with each directory's entries sorted
by name; the last record is the index: the 9 bytes ``piouhjgbr`` followed by a pickle of nested
``OrderedDict``\\ s (file name -> record index, directory name -> nested dict; empty directories kept).

The index is a pickle, and unpickling untrusted data can run arbitrary code. :class:`PackedFolder`
therefore loads it with an unpickler that can build nothing but dicts, ``OrderedDict``\\ s, strings and
integers; anything else (a hostile file) raises ``pickle.UnpicklingError`` before any code could run.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import posixpath
from typing import Any, Iterable, List, Union

import numpy as np

from tf_gulp._files import Closing
from tf_gulp.ffrecord.reader import FileReader
from tf_gulp.ffrecord.writer import FileWriter

__all__ = ["MAGIC_BYTES", "PackedFolder", "pack_folder"]

MAGIC_BYTES = b"piouhjgbr"
# The reference pickles with Python's default protocol of its time (4); so do we, byte for byte.
_PICKLE_PROTOCOL = 4


class _RefusedClass(pickle.UnpicklingError):
    """The index asked for a class that it may not build."""


class _IndexUnpickler(pickle.Unpickler):
    """Unpickles a packed folder's index: only dict and OrderedDict may be constructed."""

    _ALLOWED = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("builtins", "dict"): dict,
    }

    def find_class(self, module: str, name: str) -> Any:
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise _RefusedClass(
                f"refusing to load {module}.{name} from a packed folder's index: it may only hold "
                "dicts, strings and integers (the file is corrupt or hostile)"
            ) from None

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("a packed folder's index has no persistent references")


#: Deepest directory nesting accepted in an index (a deeper one is corrupt or hostile: no file system
#: path of 4096 bytes goes deeper than 2048 levels, and no sane dataset comes near this).
MAX_INDEX_DEPTH = 1024


def _load_index(data: bytes, num_files: int, where: str,
                record: int) -> "collections.OrderedDict[str, Any]":
    what = f"{where}: record {record} (the packed folder's index)"
    try:
        # The unpickler is a stack machine (no recursion however deep the data nests).
        structure = _IndexUnpickler(io.BytesIO(data)).load()
    except _RefusedClass as e:
        raise pickle.UnpicklingError(f"{what}: {e}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, MemoryError, UnicodeDecodeError) as e:
        # Truncated or corrupt pickle data: whatever the unpickler stumbled on.
        raise pickle.UnpicklingError(f"{what}: cannot be unpickled, it is truncated or corrupt "
                                     f"({type(e).__name__}: {e})") from None

    # Walked with an explicit stack, so that a hostile index nested 100,000 deep is an error
    # rather than a RecursionError.
    if not isinstance(structure, dict):
        raise ValueError(f"{what}: the index entry for '/' is not a directory")
    stack = [(structure, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth >= MAX_INDEX_DEPTH:
            raise ValueError(f"{what}: directories nested deeper than {MAX_INDEX_DEPTH} levels "
                             f"(at {path[:200]!r}...)")
        for name, child in node.items():
            if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
                raise ValueError(f"{what}: bad name {name!r} in the index under {path or '/'!r}")
            if isinstance(child, dict):
                stack.append((child, posixpath.join(path, name), depth + 1))
            elif isinstance(child, int) and not isinstance(child, bool):
                if not 0 <= child < num_files:
                    raise ValueError(
                        f"{what}: {posixpath.join(path, name)!r} points to record {child}, outside "
                        f"the {num_files} file records"
                    )
            else:
                raise ValueError(f"{what}: bad index entry for {posixpath.join(path, name)!r}")
    return structure


def _parts(path: Union[str, os.PathLike, None]) -> List[str]:
    if path is None:
        return []
    text = os.fsdecode(path).replace(os.sep, "/")
    return [p for p in text.split("/") if p not in ("", ".")]


class PackedFolder(Closing):
    """A folder packed by :func:`pack_folder` (or the reference's ``pack_folder``).

    Paths are relative to the packed folder, with ``/`` separators (``"sub/deep/e.txt"``).
    ``read_one`` / ``read`` return uint8 numpy arrays, like :class:`FileReader`.

    Raises:
      ValueError: the file is not a packed folder (no index record, or an index that is not a tree
        of names and record numbers, or one nested deeper than ``MAX_INDEX_DEPTH``).
      pickle.UnpicklingError: the index cannot be unpickled (truncated, corrupt), or tries to build
        anything but dicts, strings and integers.
      Each message names the file and the index's record number.
    """

    def __init__(self, ffr_file: Union[str, os.PathLike], check_data: bool = True) -> None:
        self.reader = FileReader(ffr_file, check_data)
        where = os.fsdecode(ffr_file)
        if self.reader.n == 0:
            raise ValueError(f"{where} is not a packed folder: it has no records")
        meta = self.reader.read_one(self.reader.n - 1).tobytes()
        if len(meta) <= len(MAGIC_BYTES) or not meta.startswith(MAGIC_BYTES):
            raise ValueError(f"{where} is not a packed folder: its last record is not an index")
        self.structure = _load_index(meta[len(MAGIC_BYTES):], self.reader.n - 1, where,
                                     self.reader.n - 1)

    def num_files(self) -> int:
        return self.reader.n - 1

    def _node(self, path: Union[str, os.PathLike, None]) -> Any:
        node: Any = self.structure
        for part in _parts(path):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def _index(self, fname: Union[str, os.PathLike]) -> int:
        node = self._node(fname)
        if node is None:
            raise FileNotFoundError(f"{os.fsdecode(fname)!r} is not in the packed folder")
        if isinstance(node, dict):
            raise IsADirectoryError(f"{os.fsdecode(fname)!r} is a directory in the packed folder")
        return node

    def exists(self, path: Union[str, os.PathLike]) -> bool:
        return self._node(path) is not None

    def is_file(self, path: Union[str, os.PathLike]) -> bool:
        return isinstance(self._node(path), int)

    def is_dir(self, path: Union[str, os.PathLike]) -> bool:
        return isinstance(self._node(path), dict)

    def list(
        self,
        path: Union[str, os.PathLike, None] = None,
        list_file: bool = True,
        list_dir: bool = True,
        recursive: bool = False,
    ) -> List[str]:
        """Names in directory ``path`` (default: the top), in stored (sorted) order; with
        ``recursive``, entries of subdirectories follow each directory as ``"dir/name"``."""
        node = self._node(path)
        if node is None:
            raise FileNotFoundError(f"{os.fsdecode(path)!r} is not in the packed folder")
        if not isinstance(node, dict):
            raise NotADirectoryError(f"{os.fsdecode(path)!r} is a file in the packed folder")
        out: List[str] = []
        # Depth first, each directory's entries in stored order; an explicit stack of iterators
        # instead of recursion (the index may nest up to MAX_INDEX_DEPTH levels).
        stack = [("", iter(node.items()))]
        while stack:
            prefix, entries = stack[-1]
            for name, child in entries:
                is_dir = isinstance(child, dict)
                if (is_dir and list_dir) or (not is_dir and list_file):
                    out.append(prefix + name)
                if is_dir and recursive:
                    stack.append((prefix + name + "/", iter(child.items())))
                    break
            else:
                stack.pop()
        return out

    def read_one(self, fname: Union[str, os.PathLike]) -> np.ndarray:
        return self.reader.read_one(self._index(fname))

    def read(self, fnames: Iterable[Union[str, os.PathLike]]) -> List[np.ndarray]:
        return self.reader.read([self._index(f) for f in fnames])

    def close(self) -> None:
        self.reader.close()


def pack_folder(
    folder: Union[str, os.PathLike], out_file: Union[str, os.PathLike], verbose: bool = False
) -> int:
    """Packs the tree under ``folder`` into the FFRecord file ``out_file`` (see the module doc).

    Symbolic links are followed (a link cycle is an error); anything that is neither a regular file
    nor a directory is an error. Returns the number of files packed.
    """
    root = os.path.abspath(os.fsdecode(folder))
    if not os.path.isdir(root):
        raise NotADirectoryError(f"{root} is not a directory")
    files: List[str] = []
    seen = set()

    def scan(directory: str) -> "collections.OrderedDict[str, Any]":
        real = os.path.realpath(directory)
        if real in seen:
            raise ValueError(f"{directory}: a symbolic link cycle")
        seen.add(real)
        tree: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isdir(path):
                tree[name] = scan(path)
            elif os.path.isfile(path):
                tree[name] = len(files)
                files.append(path)
            else:
                raise ValueError(f"{path}: not a regular file or directory")
        seen.discard(real)
        return tree

    structure = scan(root)
    meta = MAGIC_BYTES + pickle.dumps(structure, protocol=_PICKLE_PROTOCOL)
    width = len(str(len(files)))
    with FileWriter(out_file, len(files) + 1) as writer:
        for i, path in enumerate(files):
            with open(path, "rb") as f:
                writer.write_one(f.read())
            if verbose:
                print(f"{i:0{width}d}/{len(files)} {os.path.relpath(path, root)}", flush=True)
        writer.write_one(meta)
    return len(files)
