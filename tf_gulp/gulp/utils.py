"""gulpio2's ``utils`` helpers, for code that imports them (``from gulpio2.utils import ...``
becomes ``from tf_gulp.gulp.utils import ...``). See docs/compat.md.

They behave as gulpio2's, with these differences: frames are decoded as GulpDataset decodes them
(libjpeg-turbo's fast integer IDCT, smooth chroma upsampling; :func:`jpeg_bytes_to_img`); :func:`resize_by_short_edge` rounds the longer side to the nearest
pixel (gulpio2 truncates, which can fall a pixel short; this is also what ``tf-gulp ingest
--shorter-side`` does); ffmpeg is run as a subprocess (no ``sh`` dependency); argument errors that
gulpio2 raised with ``assert`` raise :class:`AssertionValueError`, which is both an AssertionError
(as gulpio2's) and a ValueError, and is raised under ``python -O`` too. PIL (Pillow) is needed only
by the resize helpers.
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import shutil
import subprocess
import sys
import types
from typing import Any, Dict, Iterable, Iterator, List, Sequence, Union

import numpy as np

from tf_gulp.gulp import chunk as _chunk
from tf_gulp.gulp.chunk import decode_jpeg, encode_frame
from tf_gulp.gulp.video import resized_size

__all__ = ["AssertionValueError", "DuplicateIdException", "FFMPEGNotFound", "ImageNotFound",
           "burst_frames_to_shm", "burst_video_into_frames", "check_ffmpeg_exists",
           "find_images_in_folder", "get_single_video_path", "img_to_jpeg_bytes",
           "jpeg_bytes_to_img", "remove_entries_with_duplicate_ids", "resize_by_short_edge",
           "resize_images", "temp_dir_for_bursting"]



class _UtilsModule(types.ModuleType):
    """This module, with gulpio2's setting ``_JPEG_WRITE_QUALITY`` (the JPEG quality of frames
    written by :func:`img_to_jpeg_bytes` and, when none is given, by GulpChunk / GulpIngestor; its
    tests set it to 100) kept where the readers and writers read it (tf_gulp.gulp.chunk), so that
    they need not import this compatibility module."""

    @property
    def _JPEG_WRITE_QUALITY(self) -> int:  # pylint: disable=invalid-name
        return _chunk.default_jpeg_quality()

    @_JPEG_WRITE_QUALITY.setter
    def _JPEG_WRITE_QUALITY(self, quality: int) -> None:  # pylint: disable=invalid-name
        _chunk.set_default_jpeg_quality(quality)


sys.modules[__name__].__class__ = _UtilsModule


class AssertionValueError(ValueError, AssertionError):
    """A bad argument that gulpio2 refused with ``assert``: catchable as either."""


class FFMPEGNotFound(Exception):
    """No ``ffmpeg`` program on the PATH."""


class ImageNotFound(Exception):
    """An image could not be opened."""


class DuplicateIdException(Exception):
    """Every item to add is already in the gulp directory."""


def check_ffmpeg_exists() -> bool:
    """Whether ``ffmpeg -version`` runs (as gulpio2: through ``os.system``)."""
    return os.system("ffmpeg -version > /dev/null 2>&1") == 0


@contextlib.contextmanager
def temp_dir_for_bursting(shm_dir_path: str = "/dev/shm") -> Iterator[str]:
    """A fresh directory under ``shm_dir_path`` (random name), removed afterwards."""
    path = os.path.join(shm_dir_path, str(random.getrandbits(128)))
    os.makedirs(path)  # fails rather than share a directory with another burst
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def img_to_jpeg_bytes(img: np.ndarray) -> bytes:
    """JPEG bytes of a uint8 image ((H, W) gray or (H, W, 3) RGB) at ``_JPEG_WRITE_QUALITY``."""
    img = np.asarray(img)
    if img.ndim not in (2, 3):
        raise ValueError(f"Unsupported img shape: {img.shape}")
    return encode_frame(img, quality=_chunk.default_jpeg_quality())


def jpeg_bytes_to_img(jpeg_bytes: bytes) -> np.ndarray:
    """Decode a JPEG: (H, W, 3) RGB, or (H, W) for a grayscale one."""
    return decode_jpeg(jpeg_bytes)


def burst_frames_to_shm(vid_path: str, temp_burst_dir: str,
                        frame_rate: Union[None, int, str] = None) -> None:
    """Write the frames of ``vid_path`` as ``temp_burst_dir/%010d.jpg`` with ffmpeg (``-q:v 1``;
    ``frame_rate`` frames per second when given). Raises :class:`FFMPEGNotFound` without ffmpeg.
    As in gulpio2, a video ffmpeg cannot read is reported (on stderr) and gives no frames."""
    if not check_ffmpeg_exists():
        raise FFMPEGNotFound()
    args = ["ffmpeg", "-nostdin", "-loglevel", "error", "-i", vid_path]
    if frame_rate:
        args += ["-r", str(frame_rate)]
    args += ["-q:v", "1", "-f", "image2", os.path.join(temp_burst_dir, "%010d.jpg")]
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        print(f"{vid_path}: ffmpeg failed (exit {done.returncode}): "
              f"{lines[-1] if lines else 'no message'}", file=sys.stderr)


def burst_video_into_frames(vid_path: str, temp_burst_dir: str,
                            frame_rate: Union[None, int, str] = None) -> List[str]:
    """Burst ``vid_path`` into ``temp_burst_dir`` and return the frame files, in order."""
    burst_frames_to_shm(vid_path, temp_burst_dir, frame_rate=frame_rate)
    return find_images_in_folder(temp_burst_dir, formats=["jpg"])


def _pil_image() -> Any:
    try:
        import PIL.Image
    except ImportError as e:  # pragma: no cover - Pillow is installed with the test extras
        raise ImportError("the resize helpers need Pillow: pip install pillow") from e
    return PIL.Image


def resize_images(imgs: Iterable[str], img_size: int = -1) -> Iterator[np.ndarray]:
    """Open each image file and yield it as an array, resized so that its shorter side is
    ``img_size`` when ``img_size > 0``."""
    pil = _pil_image()
    for path in imgs:
        img = pil.open(path)
        if img is None:
            raise ImageNotFound(f"Image is None from path: {path}")
        yield resize_by_short_edge(img, img_size) if img_size > 0 else np.asarray(img)


def resize_by_short_edge(img: Any, size: int) -> np.ndarray:
    """``img`` (a path, a PIL image or an array) resized (bilinear) so that its shorter side is
    ``size``; unchanged when ``size < 1``."""
    pil = _pil_image()
    if isinstance(img, np.ndarray):
        img = pil.fromarray(img)
    elif isinstance(img, (str, os.PathLike)):
        path = img
        img = pil.open(path)
        if img is None:
            raise ImageNotFound(f"Image read None from path {path}")
    if size < 1:
        return np.asarray(img)
    width, height = resized_size(img.width, img.height, size)
    return np.asarray(img.resize((width, height), pil.BILINEAR))


def _remove_duplicates_in_metadict(meta_dict: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """``meta_dict`` (a list of items with an ``"id"``) keeping the first item of each id; the
    others are reported on stdout, as gulpio2 does."""
    seen = set()
    kept = []
    for item in meta_dict:
        if item["id"] in seen:
            print(f"Id {item['id']} more than once in json file, I skip it!")
            continue
        seen.add(item["id"])
        kept.append(item)
    return kept if len(kept) != len(meta_dict) else list(meta_dict)


def remove_entries_with_duplicate_ids(output_directory: str,
                                      meta_dict: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The items of ``meta_dict`` whose id is neither repeated in it nor already in the gulp
    directory ``output_directory``. Raises :class:`DuplicateIdException` when none is left."""
    from tf_gulp.gulp.directory import GulpDirectory  # directory imports this module's peers
    items = _remove_duplicates_in_metadict(meta_dict)
    # A folder that does not exist yet, or holds no chunks yet, holds no ids (as gulpio2, which
    # globs it).
    present = (GulpDirectory(output_directory, require_chunks=False).merged_meta_dict
               if os.path.isdir(output_directory) else {})
    kept = []
    for item in items:
        if str(item["id"]) in present:
            print(f"Id {item['id']} already in GulpDirectory, I skip it!")
        else:
            kept.append(item)
    if not kept:
        print("no items to add... Abort")
        raise DuplicateIdException(f"every id to add is already in {output_directory}")
    return kept


def find_images_in_folder(folder: str, formats: Sequence[str] = ("jpg",)) -> List[str]:
    """The files ``folder/*.<format>`` for each of ``formats``, sorted."""
    found: List[str] = []
    for fmt in formats:
        found.extend(glob.glob(os.path.join(glob.escape(folder), f"*.{fmt}")))
    return sorted(found)


def get_single_video_path(folder_name: str, format_: str = "mp4") -> str:
    """The one ``*.<format_>`` file in ``folder_name``; :class:`AssertionValueError` when there
    is none or more than one."""
    found = glob.glob(os.path.join(glob.escape(folder_name), f"*.{format_}"))
    if len(found) != 1:
        raise AssertionValueError(f"{folder_name}: expected one *.{format_} file, found "
                                  f"{len(found)}")
    return found[0]
