"""Test helpers for gulp datasets (a helper module, not a test file).

``make_gulp_dir`` writes a small synthetic gulp directory with this project's writer, fast enough to
call per test (a few ms for tens of small videos). Frames are deterministic, smooth images that
JPEG keeps almost exactly, so a test can check *which* frame it got:

* RGB frame ``j`` of video ``i``: red channel = ``video_value(i)``, green = ``frame_value(j)``
  (both constant over the image), blue = a left-to-right ramp ``0..255``;
* gray frame: a constant ``gray_value(i, j)``.

After JPEG (quality 90, 4:4:4), measured for sizes 8x8 to 224x224: every red/green pixel decodes
within ±3 of its value and a channel's mean within ±1 (so compare means with tolerance 2); gray
frames decode exactly; the whole frame is within ±8 of :func:`synthetic_frame`, which regenerates
it.

Usage from another test file (the tests folder is on ``sys.path`` under pytest)::

    from gulp_testing import make_gulp_dir
    info = make_gulp_dir(tmp_path / "gulp", num_videos=10, frames_per_video=[3, 5] * 5,
                         height=32, width=48, videos_per_chunk=4)
    info["ids"][0], info["videos"]["vid0000"]["num_frames"], info["label2idx"]
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from tf_gulp.gulp.adapters import AbstractDatasetAdapter
from tf_gulp.gulp.ingest import GulpIngestor

__all__ = ["SyntheticAdapter", "make_gulp_dir", "synthetic_frame", "video_value", "frame_value",
           "gray_value", "video_id"]


def video_id(i: int) -> str:
    """The id of synthetic video ``i``: ``"vid0000"``, ``"vid0001"``, ..."""
    return f"vid{i:04d}"


def video_value(i: int) -> int:
    """The red level of every frame of video ``i`` (in 16..235)."""
    return 16 + (37 * i) % 220


def frame_value(j: int) -> int:
    """The green level of frame ``j`` of any video (in 16..235)."""
    return 16 + (23 * j) % 220


def gray_value(i: int, j: int) -> int:
    """The level of gray frame ``j`` of video ``i`` (in 16..235)."""
    return 16 + (37 * i + 23 * j) % 220


def synthetic_frame(i: int, j: int, height: int, width: int, gray: bool = False) -> np.ndarray:
    """Source frame ``j`` of synthetic video ``i``: (H, W, 3) uint8, or (H, W) if ``gray``."""
    if gray:
        return np.full((height, width), gray_value(i, j), np.uint8)
    frame = np.empty((height, width, 3), np.uint8)
    frame[:, :, 0] = video_value(i)
    frame[:, :, 1] = frame_value(j)
    frame[:, :, 2] = np.linspace(0, 255, width).round().astype(np.uint8)[np.newaxis, :]
    return frame


class SyntheticAdapter(AbstractDatasetAdapter):
    """Picklable adapter producing synthetic videos (see the module docstring).

    Item ``i`` has id ``video_id(i)``, ``frame_counts[i]`` frames, and meta
    ``{"id", "label", "idx" (label index), "num_frames"}``, the keys gulpio2's adapters write
    (``idx`` being the label's index in ``label2idx``).
    """

    def __init__(self, frame_counts: Sequence[int], height: int, width: int, gray: bool = False,
                 labels: Sequence[str] = ("a", "b")) -> None:
        self.frame_counts = [int(n) for n in frame_counts]
        self.height = height
        self.width = width
        self.gray = gray
        self.labels = list(labels)
        self.label2idx = {}
        for label in self.labels:
            self.label2idx.setdefault(label, len(self.label2idx))

    def __len__(self) -> int:
        return len(self.frame_counts)

    def meta(self, i: int) -> Dict[str, Any]:
        label = self.labels[i % len(self.labels)]
        return {"id": video_id(i), "label": label, "idx": self.label2idx[label],
                "num_frames": self.frame_counts[i]}

    def iter_data(self, slice_element: Optional[slice] = None) -> Iterator[Dict[str, Any]]:
        for i in range(len(self))[slice_element or slice(None)]:
            frames = [synthetic_frame(i, j, self.height, self.width, self.gray)
                      for j in range(self.frame_counts[i])]
            yield {"id": video_id(i), "meta": self.meta(i), "frames": frames}


def make_gulp_dir(path: Union[str, os.PathLike], num_videos: int,
                  frames_per_video: Union[int, Sequence[int]], height: int, width: int,
                  videos_per_chunk: int, gray: bool = False,
                  labels: Sequence[str] = ("a", "b")) -> Dict[str, Any]:
    """Write a synthetic gulp directory at ``path`` (created; must hold no chunks yet).

    Args:
        path: output folder.
        num_videos: number of videos; ids ``vid0000``, ``vid0001``, ...
        frames_per_video: an int for all videos, or one int per video.
        height, width: frame size.
        videos_per_chunk: chunk size; chunks are ``data_0.gulp``/``meta_0.gmeta``, ...
        gray: grayscale (one-component JPEG) frames instead of RGB.
        labels: video ``i`` gets label ``labels[i % len(labels)]``; ``label2idx.json`` maps each
            distinct label to its first-appearance index, as gulpio2's adapters do.

    Returns:
        a dict: ``path`` (str), ``ids`` (list, storage order), ``videos`` (id → ``{"index",
        "num_frames", "meta", "chunk"`` (chunk number)``, "label", "label_idx"}``), ``label2idx``,
        ``num_chunks``, ``height``, ``width``, ``gray``.
    """
    if isinstance(frames_per_video, (int, np.integer)):
        counts: List[int] = [int(frames_per_video)] * num_videos
    else:
        counts = [int(n) for n in frames_per_video]
        if len(counts) != num_videos:
            raise ValueError(f"frames_per_video has {len(counts)} entries for {num_videos} videos")
    adapter = SyntheticAdapter(counts, height, width, gray=gray, labels=labels)
    path = os.fspath(path)
    GulpIngestor(adapter, path, videos_per_chunk, num_workers=1, progress=False)()
    with open(os.path.join(path, "label2idx.json"), "w") as f:
        json.dump(adapter.label2idx, f)
    videos = {}
    for i in range(num_videos):
        meta = adapter.meta(i)
        videos[video_id(i)] = {"index": i, "num_frames": counts[i], "meta": meta,
                               "chunk": i // videos_per_chunk, "label": meta["label"],
                               "label_idx": meta["idx"]}
    return {"path": path, "ids": [video_id(i) for i in range(num_videos)], "videos": videos,
            "label2idx": dict(adapter.label2idx),
            "num_chunks": -(-num_videos // videos_per_chunk), "height": height, "width": width,
            "gray": gray}
