"""The decode bound every gulp benchmark compares against: libjpeg-turbo alone.

libjpeg-turbo (through simplejpeg, which releases the GIL) decodes JPEG frames already in memory,
each clip into one ``[frames, H, W, 3]`` uint8 array, with GulpDataset's default settings (fast
IDCT, smooth chroma upsampling): the work a gulp reader must do and nothing else (no file reads, no
framework). Writing a 3.7 MB clip costs more than overwriting one frame's array, which stays in the
core's cache, so a bound that decodes frame by frame into small arrays would ask for more than any
reader handing over clips can do. One place, so bench_fair_peers.py, bench_gulp_read.py and
profile_gulp_cpu.py measure the same bound."""

from __future__ import annotations

import concurrent.futures
from typing import Callable, List, Sequence

import numpy as np


def decode_clip(frames: Sequence[bytes]) -> np.ndarray:
    """One clip's JPEG frames decoded into one new ``[frames, H, W, 3]`` uint8 array, as
    GulpDataset(dir) decodes them by default (tests/test_bench_scripts.py compares the pixels)."""
    import simplejpeg

    h, w, _, _ = simplejpeg.decode_jpeg_header(frames[0])
    clip = np.empty((len(frames), h, w, 3), np.uint8)
    for k, j in enumerate(frames):
        simplejpeg.decode_jpeg(j, colorspace="RGB", fastdct=True, fastupsample=False,
                               buffer=clip[k])
    return clip


def decode_clips(share: Sequence[Sequence[bytes]]) -> int:
    """The bound's work on one thread: each clip decoded (decode_clip). Returns the frames
    decoded."""
    return sum(len(decode_clip(frames)) for frames in share)


def bound_reader(clips: Sequence[Sequence[bytes]], threads: int,
                 closers: List[Callable[[], None]]) -> Callable[[], int]:
    """A reader decoding every clip on `threads` threads (each its share, clip by clip; one thread:
    the calling one). Returns the frames decoded per call; the thread pool's shutdown is appended
    to `closers`."""
    if threads <= 1:
        return lambda: decode_clips(clips)
    shares = [clips[i::threads] for i in range(threads)]
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    closers.append(pool.shutdown)
    return lambda: sum(pool.map(decode_clips, shares))
