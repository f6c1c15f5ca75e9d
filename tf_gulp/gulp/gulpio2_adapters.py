"""gulpio2's adapters whose names tf_gulp's own adapters do not use, with gulpio2's signatures and
output: :class:`Custom20BNJsonVideoAdapter` (what ``gulp2_20bn_json_videos`` runs).

Frames are decoded in-process with PyAV (gulpio2 bursts each video into JPEG files with an
``ffmpeg`` process and decodes those again), at ``frame_rate`` frames per second, resized so the
shorter side is ``frame_size`` when it is positive, and stored as JPEG at gulpio2's quality.
gulpio2's adapters with the names of tf_gulp's own (``ImageFolderAdapter``, ``ImageListAdapter``,
``VideoFolderAdapter``, ``KineticsAdapter``) keep tf_gulp's signatures; docs/compat.md says which
``tf-gulp ingest`` command replaces each gulpio2 script.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
from typing import Any, Dict, Iterator, List, Optional

from tf_gulp._durable import write_atomically
from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.chunk import default_jpeg_quality
from tf_gulp.gulp.utils import get_single_video_path, remove_entries_with_duplicate_ids
from tf_gulp.gulp.video import FrameOptions, InputError, decode_video

__all__ = ["Custom20BNJsonVideoAdapter"]

LABEL2IDX = "label2idx.json"


def _read_json_list(path: str) -> List[Dict[str, Any]]:
    if path.endswith(".json.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    elif path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    else:
        raise ValueError(f"{path}: expected a .json or .json.gz file (gulpio2's formats)")
    if not isinstance(data, list) or not all(isinstance(e, dict) and "id" in e for e in data):
        raise ValueError(f"{path}: expected a JSON list of objects with an \"id\"")
    return data


class Custom20BNJsonVideoAdapter(AbstractDatasetAdapter):
    """gulpio2's adapter for 20BN datasets listed in a JSON file, one MP4 per id in
    ``folder/<id>/``.

    Each item's meta is ``{"id", "label", "idx"}`` (``label`` the entry's ``label_name`` field,
    ``idx`` its index); ``label2idx.json`` in ``output_folder`` keeps the indices of an earlier
    ingest and numbers new labels after them (sorted), and is written when the items have been
    read. A video that cannot be decoded gives no frames: the ingest leaves it out with gulpio2's
    ``Failed to write video with id`` message (the reason is printed on stderr).

    Args (gulpio2's): ``json_file`` (``.json`` or ``.json.gz``: a list of ``{"id", <label_name>,
    ...}``), ``folder``, ``output_folder``, ``shuffle``, ``frame_size`` (shorter side; -1 keeps the
    size), ``frame_rate`` (frames per second), ``shm_dir_path`` (unused: nothing is burst to
    files), ``label_name``, ``remove_duplicate_ids`` (leave out ids repeated in the list or already
    in ``output_folder``).
    """

    def __init__(self, json_file: str, folder: str, output_folder: str, shuffle: bool = False,
                 frame_size: int = -1, frame_rate: int = 8, shm_dir_path: str = "/dev/shm",
                 label_name: str = "template", remove_duplicate_ids: bool = False) -> None:
        self.json_file = json_file
        self.data = _read_json_list(json_file)
        self.label_name = label_name
        self.output_folder = output_folder
        self.folder = folder
        self.shuffle = bool(shuffle)
        self.frame_size = int(frame_size)
        self.frame_rate = int(frame_rate)
        self.shm_dir_path = shm_dir_path
        self.labels2idx = self._label_indices()
        self.options = FrameOptions(fps=self.frame_rate if self.frame_rate > 0 else None,
                                    shorter_side=self.frame_size if self.frame_size > 0 else None,
                                    jpeg_quality=default_jpeg_quality())
        self.all_meta = [{"id": e["id"], "label": e[label_name],
                          "idx": self.labels2idx[e[label_name]]} for e in self.data]
        if remove_duplicate_ids:
            self.all_meta = remove_entries_with_duplicate_ids(output_folder, self.all_meta)
        if self.shuffle:
            random.shuffle(self.all_meta)

    def _label_indices(self) -> Dict[str, int]:
        for i, entry in enumerate(self.data):
            if self.label_name not in entry:
                raise ValueError(f"{self.json_file}: entry {i} (id {entry['id']!r}) has no "
                                 f"{self.label_name!r} field (--label_name)")
        path = os.path.join(self.output_folder, LABEL2IDX)
        indices: Dict[str, int] = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                indices = json.load(f)
        for label in sorted({e[self.label_name] for e in self.data}):
            if label not in indices:
                indices[label] = len(indices)
        return indices

    def __len__(self) -> int:
        return len(self.all_meta)

    def item_source(self, index: int) -> Optional[str]:
        """The folder item ``index`` is read from."""
        return os.path.join(self.folder, str(self.all_meta[index]["id"]))

    def _frames(self, meta: Dict[str, Any]) -> List[bytes]:
        path = get_single_video_path(os.path.join(self.folder, str(meta["id"])), format_="mp4")
        try:
            return decode_video(path, self.options)[0]
        except InputError as e:
            print(f"{e.path}: {e.reason}", file=sys.stderr)
            return []

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        for meta in self.all_meta[slice_element or slice(None)]:
            yield {"meta": meta, "frames": self._frames(meta), "id": meta["id"]}
        self.write_label2idx_dict()

    def write_label2idx_dict(self) -> None:
        """Write ``label2idx.json`` as gulpio2 does (``json.dump`` defaults), atomically: every
        worker writes the same content."""
        os.makedirs(self.output_folder, exist_ok=True)
        path = os.path.join(self.output_folder, LABEL2IDX)
        write_atomically(path, json.dumps(self.labels2idx).encode("utf-8"),
                         tmp=f"{path}.{os.getpid()}.tmp")
