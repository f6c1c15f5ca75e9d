"""Dataset adapters: the source side of gulp ingestion.

An adapter describes a collection of videos (or images) to be written into a gulp directory by
:class:`tf_gulp.gulp.GulpIngestor`. It follows gulpio2's adapter contract, so adapters written for
gulpio2 work here unchanged:

* ``len(adapter)`` is the number of items;
* ``adapter.iter_data(slice_element)`` yields the items selected by ``slice_element`` (a ``slice``
  over ``range(len(adapter))``, or ``None`` for all of them), in order, each as a dict::

      {"id": <str or int>, "meta": <JSON-serializable dict>, "frames": <iterable of frames>}

  where a frame is a uint8 numpy array ((H, W, 3) RGB, (H, W) or (H, W, 1) gray, (H, W, 4) RGBA
  whose alpha is dropped) or the bytes of an already-encoded JPEG, which is stored as is.

With ``num_workers > 1`` the ingestor sends the adapter to worker processes, so an adapter must be
picklable: keep file paths and small lists in it, not open files or decoded videos, and load the
frames inside ``iter_data``.

Optional methods the ingestor uses when an adapter has them:

* ``item_ids()``: every item's id, in order, without decoding anything. Lets a resumed ingest check
  that the input did not change, and an append refuse ids the directory already holds.
* ``item_id(index)`` / ``item_source(index)``: an item's id and the file it comes from, for error
  messages about items the adapter failed to produce.
* ``label2idx``: ``{label: index}``, written as ``label2idx.json`` by ``tf-gulp ingest``.
* ``missing()``: items whose file was not found when the adapter was built.

The built-in adapters (what ``tf-gulp ingest`` runs) are below: :class:`ImageFolderAdapter`,
:class:`ImageListAdapter`, :class:`VideoFolderAdapter`, :class:`TwentyBNAdapter`
(Something-Something, Jester) and :class:`KineticsAdapter`. They decode with PyAV / libjpeg-turbo in the worker process
(see :mod:`tf_gulp.gulp.video` for the frame options) and yield frames already JPEG-encoded. A file
that cannot be decoded raises :class:`InputError` naming it.
"""

from __future__ import annotations

import abc
import collections
import csv
import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from tf_gulp._lazy import lazy_exports
from tf_gulp.class_folders import class_folder_names, extension_of, warn_empty_classes
from tf_gulp.gulp.label_maps import label_map_differences, read_class_list
from tf_gulp.gulp.video import (FrameOptions, InputError, decode_video, load_frame_folder,
                                load_image, natural_key)

__all__ = ["AbstractDatasetAdapter", "FrameOptions", "ImageFolderAdapter", "ImageListAdapter",
           "InputError", "KineticsAdapter", "MediaAdapter", "TwentyBNAdapter",
           "VideoFolderAdapter", "IMAGE_EXTENSIONS", "kinetics_clip_name", "label_indices",
           "video_extensions"]


def _existing_file(path: str) -> str:
    """``path`` made absolute; FileNotFoundError naming it where it is no file."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    return os.path.abspath(path)


def _existing_folder(path: str) -> str:
    """``path`` made absolute; FileNotFoundError naming it where it is no folder."""
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path}: no such folder")
    return os.path.abspath(path)


class AbstractDatasetAdapter(abc.ABC):
    """Base class of the adapters that :class:`~tf_gulp.gulp.GulpIngestor` reads from.

    Subclasses implement :meth:`iter_data` and :meth:`__len__`.
    """

    @abc.abstractmethod
    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        """Yield the items selected by ``slice_element``.

        Args:
            slice_element: a ``slice`` of the item indices ``range(len(self))``; ``None`` means
                every item. The ingestor passes contiguous, step-1 slices, one per chunk.

        Yields:
            dicts ``{"id": id, "meta": meta, "frames": frames}``: ``id`` is stored as ``str(id)``,
            ``meta`` must be JSON-serializable, ``frames`` is a sequence of uint8 arrays or JPEG
            bytes (see the module docstring).
        """

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of items this adapter yields for ``iter_data(None)``."""


# --------------------------------------------------------------------------------------------------
# File kinds

#: Image file extensions the image adapters take by default (lower case, with the dot). JPEGs are
#: stored as they are; a GIF's first frame is taken (as Keras and the readers take it); the others
#: are decoded with PyAV (FFmpeg's image decoders).
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".bmp", ".gif", ".tif", ".tiff",
                    ".webp", ".ppm", ".pgm", ".pbm", ".pnm", ".tga", ".qoi")

# Containers FFmpeg detects by content rather than by extension, so they are missing from the
# extension lists of its demuxers.
_EXTRA_VIDEO_EXTENSIONS = ("mpg", "mpeg", "m1v", "m2v", "vob", "ts", "m2ts", "mts", "asf", "wmv",
                           "ogv", "ogm", "rm", "rmvb", "divx", "xvid", "mxf", "h263")
# Extensions FFmpeg's demuxers list that are not videos: text and subtitles, audio-only formats,
# raw streams that need parameters, images.
_NOT_VIDEO_EXTENSIONS = frozenset(
    "txt nfo diz srt sub idx vtt webvtt ass ssa sami smi stl mpl2 pjs aqt jss rt scc mcc sup "
    "json csv xml html md "
    "mp3 mp2 m2a mpa aac ac3 ac4 eac3 ec3 flac m4a m4b mka wav oga ogg opus wv tta ape mpc au "
    "aif aiff aifc amr awb gsm caf w64 voc dts dtshd thd mlp tak shn ra dff dsf sln "
    "dat bit rgb yuv yuv10 v sw ub ul uw al sb sf vb v210 "
    "jpg jpeg png bmp tif tiff webp gif j2k jxl".split())
_video_extensions_cache: Optional[Tuple[str, ...]] = None
# The extensions an error names first (of the many accepted).
_COMMON_EXTENSIONS = {"video": (".mp4", ".avi", ".mkv", ".webm", ".mov", ".mpg"),
                      "image": (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif")}


def video_extensions() -> Tuple[str, ...]:
    """Default video file extensions (lower case, with the dot): every extension that a demuxer
    of PyAV's FFmpeg lists, plus the common containers FFmpeg recognises by content (MPEG-PS/TS,
    ASF/WMV, Ogg video, RealMedia, MXF), minus text, subtitle, audio-only, raw-stream and image
    extensions. Animated GIFs are not included (pass ``extensions`` to take them)."""
    global _video_extensions_cache
    if _video_extensions_cache is None:
        names = set(_EXTRA_VIDEO_EXTENSIONS)
        try:
            import av
            from av.format import ContainerFormat
            for name in av.formats_available:
                try:
                    names.update(ContainerFormat(name, "r").extensions)
                except Exception:  # pragma: no cover - output-only formats
                    continue
        except ImportError:  # pragma: no cover - listing still works without PyAV
            names.update("mp4 m4v mov mkv webm avi flv 3gp 3g2 mj2 f4v".split())
        _video_extensions_cache = tuple(sorted("." + n.lower() for n in names
                                               if n and n.lower() not in _NOT_VIDEO_EXTENSIONS))
    return _video_extensions_cache


def _normalize_extensions(extensions: Optional[Iterable[str]],
                          default: Sequence[str]) -> Optional[Tuple[str, ...]]:
    """Lower-case ``.ext`` tuple; None means every file."""
    if extensions is None:
        return tuple(default)
    exts = []
    for e in extensions:
        e = e.strip().lower()
        if e in ("*", "all"):
            return None
        if e:
            exts.append(e if e.startswith(".") else "." + e)
    if not exts:
        raise ValueError("no file extensions given")
    return tuple(exts)


def _wanted(name: str, extensions: Optional[Tuple[str, ...]]) -> bool:
    if name.startswith("."):
        return False
    return extensions is None or os.path.splitext(name)[1].lower() in extensions


def _walk_files(root: str) -> Iterator[str]:
    """Relative paths (``/``-separated) of the regular files under ``root``, skipping hidden
    files and folders, in sorted order (folders and files by name, numbers compared as numbers)."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted((d for d in dirnames if not d.startswith(".")), key=natural_key)
        rel = os.path.relpath(dirpath, root)
        for name in sorted(filenames, key=natural_key):
            yield name if rel == "." else os.path.join(rel, name).replace(os.sep, "/")


def label_indices(labels: Iterable[Any], base: Optional[Dict[str, int]] = None) -> Dict[str, int]:
    """``{label: index}``: ``base``'s entries as they are, then the labels it lacks in sorted
    order, numbered after its highest index. ``None`` labels are left out."""
    mapping = dict(base or {})
    next_index = max(mapping.values(), default=-1) + 1
    for label in sorted({str(x) for x in labels if x is not None} - set(mapping)):
        mapping[label] = next_index
        next_index += 1
    return mapping


# --------------------------------------------------------------------------------------------------
# Base class of the built-in adapters


class MediaAdapter(AbstractDatasetAdapter):
    """An adapter over a list of items, each one image, one video (optionally a time range of
    it) or one folder of JPEG frames. Subclasses fill ``self.items`` in ``__init__``.

    Each item is a dict ``{"id": str, "kind": "image" | "video" | "frames", "path": str or None
    (None: not found), "label": label or None, "meta": extra meta dict, "start"/"end": seconds
    (videos, optional)}``.

    The stored meta of an item is ``{"id", "label", "idx"}`` (``idx`` the label's index in
    :attr:`label2idx`; both left out when the item has no label) plus the item's extra meta plus,
    for videos and frame folders, ``num_frames``, ``height``, ``width`` (of the stored frames) and,
    for videos, ``fps``.
    """

    #: The adapter's name in ``tf-gulp ingest``.
    name = "media"

    def __init__(self, options: Optional[FrameOptions] = None,
                 label2idx: Optional[Dict[str, int]] = None,
                 class_file: Optional[Union[str, os.PathLike]] = None) -> None:
        self.options = options or FrameOptions()
        self.items: List[Dict[str, Any]] = []
        self.class_file: Optional[str] = None
        if class_file is not None:
            # The numbering is fixed (e.g. the training directory's): a class it lacks is an
            # error in _finish, never a new number that another split would not share.
            fixed = read_class_list(class_file)
            differ = label_map_differences(label2idx or {}, fixed)
            if differ:
                label, old, new = differ[0]
                raise ValueError(f"{os.fspath(class_file)}: numbers {len(differ)} classes "
                                 f"differently from the existing label2idx.json (first: "
                                 f"{label!r} is {new} there, {old} in label2idx.json)")
            label2idx = dict(label2idx or {}, **fixed)
            self.class_file = os.path.abspath(os.fspath(class_file))
        self._base_label2idx = dict(label2idx or {})
        self.label2idx: Dict[str, int] = {}
        # {extension: count} of the input files the scan left out (tf_gulp.class_folders).
        self.ignored: Dict[str, int] = {}

    def _finish(self, source: str, classes: Sequence[str] = ()) -> None:
        """Check ids are unique and build :attr:`label2idx` (call at the end of ``__init__``);
        ``classes`` are numbered even when no item has them (class folders left empty)."""
        seen: Dict[str, int] = {}
        for i, item in enumerate(self.items):
            first = seen.setdefault(item["id"], i)
            if first != i:
                raise ValueError(f"{source}: id {item['id']!r} appears twice (items {first} and "
                                 f"{i}); ids must be unique")
        string_labels = [it["label"] for it in self.items if isinstance(it["label"], str)]
        if self.class_file:
            unknown = sorted(set(string_labels) - set(self._base_label2idx))
            if unknown:
                are = "classes are" if len(unknown) > 1 else "class is"
                raise ValueError(f"{source}: {len(unknown)} {are} not in {self.class_file} "
                                 f"(first: {unknown[0]!r})")
        if not self.class_file:
            string_labels += list(classes)
        if string_labels or self._base_label2idx:
            self.label2idx = label_indices(string_labels, self._base_label2idx)

    def ignored_files(self) -> Dict[str, int]:
        """``{extension: count}`` of the input files this adapter left out (other extensions,
        files directly in a class folders' root, hidden files); what every ingest's summary
        reports (:func:`tf_gulp.class_folders.ignored_summary`)."""
        return dict(self.ignored)

    def __len__(self) -> int:
        return len(self.items)

    def item_ids(self) -> List[str]:
        """Every item's id, in order."""
        return [item["id"] for item in self.items]

    def item_id(self, index: int) -> str:
        """The id of item ``index``."""
        return self.items[index]["id"]

    def item_source(self, index: int) -> Optional[str]:
        """The file (or folder) item ``index`` is read from; None if it was not found."""
        return self.items[index]["path"]

    def missing(self) -> List[Tuple[str, str]]:
        """``(id, what was looked for)`` of the items whose file was not found."""
        return [(item["id"], item.get("looked_for", "")) for item in self.items
                if item["path"] is None]

    def describe(self) -> Dict[str, Any]:
        """What this adapter ingests, as JSON-friendly values (for ingest records)."""
        out: Dict[str, Any] = {"adapter": self.name, "options": self.options.describe()}
        if self.class_file:  # only when given: records of earlier ingests stay resumable
            out["class_file"] = self.class_file
        return out

    def item_meta(self, item: Dict[str, Any]) -> Dict[str, Any]:
        meta: Dict[str, Any] = {"id": item["id"]}
        label = item["label"]
        if label is not None:
            meta["label"] = label
            if isinstance(label, str) and label in self.label2idx:
                meta["idx"] = self.label2idx[label]
            elif isinstance(label, int):
                meta["idx"] = label
        meta.update(item.get("meta") or {})
        return meta

    def load(self, item: Dict[str, Any]) -> Tuple[List[bytes], Dict[str, Any]]:
        """Decode one item: ``(JPEG frames, meta additions)``; raises InputError."""
        path = item["path"]
        if path is None:
            raise InputError(item.get("looked_for") or item["id"], "file not found")
        kind = item["kind"]
        if kind == "image":
            jpeg, _size = load_image(path, self.options)
            return [jpeg], {}
        if kind == "frames":
            return load_frame_folder(path, self.options)
        return decode_video(path, self.options, item.get("start"), item.get("end"))

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        for index in range(len(self.items))[slice_element or slice(None)]:
            item = self.items[index]
            frames, extra = self.load(item)
            meta = self.item_meta(item)
            meta.update(extra)
            yield {"id": item["id"], "meta": meta, "frames": frames}


# --------------------------------------------------------------------------------------------------
# Folders


class _FolderAdapter(MediaAdapter):
    kind = "image"

    def __init__(self, root: str, *, extensions: Optional[Iterable[str]] = None,
                 options: Optional[FrameOptions] = None,
                 label2idx: Optional[Dict[str, int]] = None,
                 class_file: Optional[Union[str, os.PathLike]] = None) -> None:
        super().__init__(options, label2idx, class_file)
        self.root = _existing_folder(root)
        default = self._default_extensions()
        self.extensions = _normalize_extensions(extensions, default)
        self._default_extensions_used = extensions is None
        ignored: Dict[str, int] = collections.Counter()
        at_top = 0
        for rel in _walk_files(self.root):
            # Files directly in root belong to no class; hidden files and other extensions are
            # not taken: all counted for the ingest's summary.
            if "/" not in rel or not _wanted(os.path.basename(rel), self.extensions):
                ignored[extension_of(rel)] += 1
                if "/" not in rel:
                    at_top += _wanted(rel, self.extensions)
                continue
            label = rel.split("/", 1)[0]
            self.items.append({"id": rel, "kind": self.kind,
                               "path": os.path.join(self.root, rel), "label": label})
        self.ignored = dict(sorted(ignored.items()))
        if not self.items:
            raise ValueError(self._nothing_found(root, at_top))
        # Keras's numbering: every class folder, sorted, an empty one keeping its index.
        classes = class_folder_names(self.root)
        self._finish(root, classes)
        taken = {item["label"] for item in self.items}
        warn_empty_classes(root, [c for c in classes if c not in taken and c in self.label2idx],
                           self.label2idx, f"{self.name}: ")

    def _default_extensions(self) -> Sequence[str]:
        return IMAGE_EXTENSIONS

    def _nothing_found(self, root: str, at_top: int) -> str:
        """Where it looked, the layout it expects and a few of the extensions (not all ~180)."""
        exts = list(self.extensions or [])
        common = [e for e in _COMMON_EXTENSIONS[self.kind] if e in exts] or exts[:6]
        more = len(exts) - len(common)
        extensions = ("any" if not exts else
                      ", ".join(common) + (f" and {more} more" if more > 0 else ""))
        hint = (f"; the {at_top} {self.kind} files directly in it belong to no class: move them "
                "into class folders" if at_top else "")
        return (f"{root}: no {self.kind} files in class folders: looked in {self.root} for "
                f"<class>/<file> (e.g. {root}/cats/0001{common[0] if common else ''}) with "
                f"extension {extensions}{hint}")

    def describe(self) -> Dict[str, Any]:
        if self._default_extensions_used:
            exts: Any = "default"
        else:
            exts = list(self.extensions) if self.extensions else "*"
        return dict(super().describe(), root=self.root, extensions=exts)


class ImageFolderAdapter(_FolderAdapter):
    """Images in class folders: ``root/<class>/<image>`` (deeper subfolders belong to their top
    folder's class). One item per image, id = the path relative to ``root`` (``cat/001.jpg``),
    label = the class folder's name; ``label2idx`` numbers the classes in sorted order.

    Args:
        root: the folder holding one subfolder per class. Files directly in it are ignored.
        extensions: file extensions to take (default :data:`IMAGE_EXTENSIONS`; ``["*"]`` for
            every file).
        options: :class:`FrameOptions` (``shorter_side``, ``jpeg_quality``, ``reencode_jpeg``...).
        label2idx: an existing mapping to extend (appending to a directory).
        class_file: fixes the classes' numbering: a gulp directory (e.g. the training split's,
            so that this split numbers classes the same way), a ``label2idx.json``, or a class
            list (see :func:`~tf_gulp.gulp.read_class_list`). A class folder it lacks is an
            error. Without it the class folders are numbered as Keras's
            ``image_dataset_from_directory`` numbers them (:mod:`tf_gulp.class_folders`: sorted
            names; a folder with no file taken keeps its index, with an ``EmptyClassWarning``).

    :meth:`ignored_files` counts, by extension, the files left out (other extensions, files
    directly in ``root``, hidden files).
    """

    name = "image-folder"
    kind = "image"


class VideoFolderAdapter(_FolderAdapter):
    """Videos in class folders: ``root/<class>/<video>``, any format PyAV (FFmpeg) opens. One item
    per video, id = the path relative to ``root`` (``running/abc.mp4``), label = the class folder.

    Args:
        root: the folder holding one subfolder per class.
        extensions: file extensions to take (default :func:`video_extensions`, every extension an
            FFmpeg demuxer knows minus audio/subtitle/text/image ones; ``["*"]`` for every file).
        options: :class:`FrameOptions` (``fps``, ``shorter_side``, ``max_frames``, ...).
        label2idx: an existing mapping to extend.
        class_file: fixes the classes' numbering, as for :class:`ImageFolderAdapter`.
    """

    name = "video-folder"
    kind = "video"

    def _default_extensions(self) -> Sequence[str]:
        return video_extensions()


# --------------------------------------------------------------------------------------------------
# Image list


def _looks_like_int(text: str) -> bool:
    text = text.strip()
    return bool(text) and (text.isdigit() or (text[0] in "+-" and text[1:].isdigit()))


_PATH_COLUMNS = ("path", "file", "filename", "file_name", "image", "img", "image_path")
_LABEL_COLUMNS = ("label", "class", "category", "target", "y")


class ImageListAdapter(MediaAdapter):
    """Images listed in a text or CSV file, with their labels.

    Formats (chosen by the file's extension):

    * ``.csv``: a header row naming a path column (``path``, ``file``, ``filename``, ``image``)
      and optionally a label column (``label``, ``class``, ``category``, ``target``); without a
      recognisable header, column 1 is the path and column 2 the label.
    * anything else: one image per line, ``<path> <label>`` (the label is the last
      whitespace-separated word, so paths may contain spaces) or just ``<path>``; blank lines and
      lines starting with ``#`` are skipped.

    Relative paths are taken from ``root`` (default: the list file's folder). id = the path as
    written in the list. Labels that are all integers are stored as integers (``idx`` = the label,
    no ``label2idx``); otherwise as strings numbered in sorted order.

    Args:
        list_file: the list.
        root: folder relative paths start from.
        options, label2idx: as for :class:`ImageFolderAdapter`.
        class_file: fixes the classes' numbering, as for :class:`ImageFolderAdapter`; labels are
            then class names, even those that look like integers.
    """

    name = "image-list"

    def __init__(self, list_file: str, *, root: Optional[str] = None,
                 options: Optional[FrameOptions] = None,
                 label2idx: Optional[Dict[str, int]] = None,
                 class_file: Optional[Union[str, os.PathLike]] = None) -> None:
        super().__init__(options, label2idx, class_file)
        self.list_file = _existing_file(list_file)
        self.root = os.path.abspath(root) if root else os.path.dirname(self.list_file)
        rows = self._parse(self.list_file)
        if not rows:
            raise ValueError(f"{list_file}: lists no image")
        raw_labels = [label for _p, label, _line in rows if label is not None]
        as_int = bool(raw_labels) and all(_looks_like_int(x) for x in raw_labels) \
            and self.class_file is None
        for path, label, line in rows:
            full = path if os.path.isabs(path) else os.path.join(self.root, path)
            value: Any = label
            if label is not None and as_int:
                value = int(label)
            self.items.append({"id": path, "kind": "image", "path": full, "label": value,
                               "line": line})
        self._finish(list_file)

    @staticmethod
    def _parse(list_file: str) -> List[Tuple[str, Optional[str], int]]:
        rows: List[Tuple[str, Optional[str], int]] = []
        with open(list_file, newline="", encoding="utf-8") as f:
            if list_file.lower().endswith(".csv"):
                table = list(csv.reader(f))
                if not table:
                    return rows
                header = [c.strip().lower() for c in table[0]]
                path_col = next((header.index(c) for c in _PATH_COLUMNS if c in header), None)
                label_col = next((header.index(c) for c in _LABEL_COLUMNS if c in header), None)
                start = 1
                if path_col is None:
                    path_col, label_col, start = 0, (1 if len(table[0]) > 1 else None), 0
                for n, row in enumerate(table[start:], start + 1):
                    if not row or not "".join(row).strip():
                        continue
                    if path_col >= len(row):
                        raise ValueError(f"{list_file}:{n}: no path column in {row!r}")
                    label = row[label_col].strip() if label_col is not None and \
                        label_col < len(row) and row[label_col].strip() else None
                    rows.append((row[path_col].strip(), label, n))
                return rows
            for n, line in enumerate(f, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                parts = text.rsplit(None, 1)
                if len(parts) == 2:
                    rows.append((parts[0], parts[1], n))
                else:
                    rows.append((parts[0], None, n))
        return rows

    def describe(self) -> Dict[str, Any]:
        return dict(super().describe(), list_file=self.list_file, root=self.root)


# --------------------------------------------------------------------------------------------------
# 20BN (Something-Something, Jester)


def _strip_brackets(text: str) -> str:
    return text.replace("[", "").replace("]", "")


class TwentyBNAdapter(MediaAdapter):
    """The 20BN datasets: Something-Something v1/v2 and Jester.

    Args:
        labels_file: the split's annotations, either
            * JSON (Something-Something v2): a list of objects with ``"id"`` and ``"template"``
              (the class, e.g. ``"Putting [something] on [something]"``; brackets are removed to
              give the class name, as in the dataset's labels file) and/or ``"label"``; test
              files have only ``"id"``. The other fields are kept in the meta, and v2's
              ``"label"`` (the caption with the objects filled in) is kept as ``"caption"``;
            * CSV (Something-Something v1, Jester): ``<id>;<label>`` per line (``,`` also
              accepted), or just ``<id>`` for test splits.
        data_dir: where each id's frames are: a video file ``<data_dir>/<id>.<ext>`` (v2's
            ``.webm``, any format PyAV opens) or a folder of JPEG frames ``<data_dir>/<id>/``
            (v1, Jester; sorted by name, stored as they are unless resized).
        class_file: optional list of all classes fixing ``label2idx``: v2's
            ``something-something-v2-labels.json`` (``{class: "index"}``) or v1/Jester's
            ``*-labels.csv`` (one class per line, index = line number from 0), or a gulp
            directory / ``label2idx.json`` (see :func:`~tf_gulp.gulp.read_class_list`). Without it
            classes are numbered in sorted order.
        options, label2idx: as for :class:`VideoFolderAdapter`.

    id = the dataset's id; label = the class name. Ids with no video and no frame folder are kept
    and reported by :meth:`missing` (ingesting them is an error unless bad inputs are skipped).
    """

    name = "20bn"

    def __init__(self, labels_file: str, data_dir: str, *, class_file: Optional[str] = None,
                 options: Optional[FrameOptions] = None,
                 label2idx: Optional[Dict[str, int]] = None) -> None:
        super().__init__(options, label2idx, class_file or None)
        self.labels_file = _existing_file(labels_file)
        self.data_dir = _existing_folder(data_dir)
        entries = self._read_entries(self.labels_file)
        videos: Dict[str, str] = {}
        folders: Dict[str, str] = {}
        video_exts = set(video_extensions())
        with os.scandir(self.data_dir) as it:
            for entry in it:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir():
                    folders[entry.name] = entry.path
                else:
                    stem, ext = os.path.splitext(entry.name)
                    if ext.lower() in video_exts:
                        videos.setdefault(stem, entry.path)
        for entry in entries:
            id_ = entry["id"]
            label = entry.get("class")
            meta = {k: v for k, v in entry.items() if k not in ("id", "class", "label")}
            if "label" in entry and entry.get("label") != label:
                meta["caption"] = entry["label"]
            if id_ in videos:
                kind, path = "video", videos[id_]
            elif id_ in folders:
                kind, path = "frames", folders[id_]
            else:
                kind, path = "video", None
            self.items.append({"id": id_, "kind": kind, "path": path, "label": label,
                               "meta": meta,
                               "looked_for": os.path.join(self.data_dir, id_ + "[.<ext>|/]")})
        self._finish(labels_file)

    @staticmethod
    def _read_entries(labels_file: str) -> List[Dict[str, Any]]:
        out: List[Dict[str, Any]] = []
        if labels_file.lower().endswith((".json", ".json.gz")):
            if labels_file.lower().endswith(".gz"):
                import gzip
                with gzip.open(labels_file, "rt", encoding="utf-8") as f:
                    data = json.load(f)
            else:
                with open(labels_file, encoding="utf-8") as f:
                    data = json.load(f)
            if not isinstance(data, list):
                raise ValueError(f"{labels_file}: expected a JSON list of {{\"id\": ...}} objects")
            for n, entry in enumerate(data):
                if not isinstance(entry, dict) or "id" not in entry:
                    raise ValueError(f"{labels_file}: entry {n} has no \"id\"")
                e = dict(entry)
                e["id"] = str(entry["id"])
                if entry.get("template") is not None:
                    e["class"] = _strip_brackets(str(entry["template"]))
                elif entry.get("label") is not None:
                    e["class"] = str(entry["label"])
                out.append(e)
            return out
        with open(labels_file, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                text = line.strip()
                if not text:
                    continue
                sep = ";" if ";" in text else ","
                parts = text.split(sep, 1)
                e = {"id": parts[0].strip()}
                if len(parts) == 2 and parts[1].strip():
                    e["class"] = parts[1].strip()
                if not e["id"]:
                    raise ValueError(f"{labels_file}:{n}: no id")
                out.append(e)
        return out

    def describe(self) -> Dict[str, Any]:
        # class_file always (None too), as records of earlier 20bn ingests hold it.
        return dict(super().describe(), labels_file=self.labels_file, data_dir=self.data_dir,
                    class_file=self.class_file)


# --------------------------------------------------------------------------------------------------
# Kinetics


def _seconds_text(value: str, where: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not a number of seconds") from None
    if x < 0:
        raise ValueError(f"{where}: negative time {value!r}")
    return x


def kinetics_clip_name(youtube_id: str, time_start: float, time_end: float) -> str:
    """The usual file name stem of a downloaded Kinetics clip: ``<youtube_id>_<start>_<end>``,
    times as whole seconds padded to 6 digits (``abc_000010_000020``)."""
    return f"{youtube_id}_{int(time_start):06d}_{int(time_end):06d}"


class KineticsAdapter(MediaAdapter):
    """Kinetics-style CSV: one row per clip with ``youtube_id``, ``time_start``, ``time_end`` and
    (except in test splits) ``label`` columns, named in a header row (other columns, e.g.
    ``split``, are kept in the meta). The order of the columns does not matter.

    File naming convention: for each row the adapter looks under ``data_dir`` (recursively, so
    ``<data_dir>/<label>/...`` and ``<data_dir>/<split>/<label>/...`` layouts work) for

    1. a trimmed clip named :func:`kinetics_clip_name` (``<youtube_id>_<start>_<end>.<ext>``,
       whole seconds padded to 6 digits, any video extension): decoded whole;
    2. otherwise the full video ``<youtube_id>.<ext>``: only ``[time_start, time_end)`` is
       decoded (PyAV seeks to the nearest keyframe before ``time_start``).

    Rows with neither are kept and reported by :meth:`missing` (YouTube videos disappear; ingest
    them with bad inputs skipped). id = ``<youtube_id>_<start>_<end>``; meta adds ``youtube_id``,
    ``time_start``, ``time_end`` and the other columns.

    Args:
        csv_file: the annotations.
        data_dir: where the videos are.
        options, label2idx: as for :class:`VideoFolderAdapter`.
        class_file: fixes the classes' numbering, as for :class:`ImageFolderAdapter`.
    """

    name = "kinetics"

    def __init__(self, csv_file: str, data_dir: str, *, options: Optional[FrameOptions] = None,
                 label2idx: Optional[Dict[str, int]] = None,
                 class_file: Optional[Union[str, os.PathLike]] = None) -> None:
        super().__init__(options, label2idx, class_file)
        self.csv_file = _existing_file(csv_file)
        self.data_dir = _existing_folder(data_dir)
        with open(self.csv_file, newline="", encoding="utf-8") as f:
            table = list(csv.reader(f))
        if not table:
            raise ValueError(f"{csv_file}: empty file")
        header = [c.strip().lower() for c in table[0]]
        needed = ("youtube_id", "time_start", "time_end")
        if not all(c in header for c in needed):
            raise ValueError(f"{csv_file}: needs a header row naming the columns youtube_id, "
                             f"time_start, time_end (and label); got {table[0]!r}")
        files: Dict[str, str] = {}
        video_exts = set(video_extensions())
        for rel in _walk_files(self.data_dir):
            stem, ext = os.path.splitext(os.path.basename(rel))
            if ext.lower() in video_exts:
                files.setdefault(stem, os.path.join(self.data_dir, rel))
        col = {name: header.index(name) for name in header}
        for n, row in enumerate(table[1:], 2):
            if not row or not "".join(row).strip():
                continue
            if len(row) < len(header):
                raise ValueError(f"{csv_file}:{n}: {len(row)} columns, the header has "
                                 f"{len(header)}")
            where = f"{csv_file}:{n}"
            youtube_id = row[col["youtube_id"]].strip()
            start = _seconds_text(row[col["time_start"]], where)
            end = _seconds_text(row[col["time_end"]], where)
            if end <= start:
                raise ValueError(f"{where}: time_end {end} is not after time_start {start}")
            label = row[col["label"]].strip() if "label" in col else None
            clip = kinetics_clip_name(youtube_id, start, end)
            meta: Dict[str, Any] = {"youtube_id": youtube_id, "time_start": start,
                                    "time_end": end}
            for name, i in col.items():
                if name not in needed and name != "label":
                    meta[name] = row[i]
            item: Dict[str, Any] = {"id": clip, "kind": "video", "label": label or None,
                                    "meta": meta,
                                    "looked_for": os.path.join(self.data_dir, f"**/{clip}.<ext> "
                                                               f"or {youtube_id}.<ext>")}
            if clip in files:
                item["path"] = files[clip]
            elif youtube_id in files:
                item.update(path=files[youtube_id], start=start, end=end)
            else:
                item["path"] = None
            self.items.append(item)
        self._finish(csv_file)

    def describe(self) -> Dict[str, Any]:
        return dict(super().describe(), csv_file=self.csv_file, data_dir=self.data_dir)


# gulpio2's adapter of the same module (``from gulpio2.adapters import
# Custom20BNJsonVideoAdapter``); lazy, as it imports this module.
__getattr__, __dir__ = lazy_exports(
    __name__, {"Custom20BNJsonVideoAdapter": "tf_gulp.gulp.gulpio2_adapters"})
