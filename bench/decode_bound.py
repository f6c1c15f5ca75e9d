"""The decode bound every gulp benchmark compares against: libjpeg-turbo alone.

libjpeg-turbo (through simplejpeg, which releases the GIL) decodes JPEG frames already in memory,
each clip into one ``[frames, H, W, 3]`` uint8 array, with GulpDataset's default settings (fast
IDCT, smooth chroma upsampling): the work a gulp reader must do and nothing else (no file reads, no
framework). Writing a 3.7 MB clip costs more than overwriting one frame's array, which stays in the
core's cache, so a bound that decodes frame by frame into small arrays would ask for more than any
reader handing over clips can do. One place, so bench_fair_peers.py, bench_gulp_read.py and
profile_gulp_cpu.py measure the same bound.

simplejpeg carries its own build of libjpeg-turbo, which need not be the build tf_gulp's op library
links (a system package, built by another compiler with other flags). `OpTurboJpeg` does the same
work through the TurboJPEG library the op library itself loaded, so a benchmark can tell the
reader's own cost (against this second bound) from the cost of its libjpeg-turbo build (between
the two bounds)."""

from __future__ import annotations

import concurrent.futures
import ctypes
import threading
from typing import Callable, List, Sequence, Tuple

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


def op_turbojpeg_path() -> str:
    """The path of the TurboJPEG library that tf_gulp's op library loaded into this process (it
    loads the op library first)."""
    from tf_gulp.ops.library import load_ops

    load_ops()
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libturbojpeg" in line}
    if len(paths) != 1:
        raise RuntimeError(f"expected the op library to load one libturbojpeg, found {sorted(paths)}")
    return paths.pop()


class OpTurboJpeg:
    """decode_clip's work through the TurboJPEG library tf_gulp's op library links, called with
    ctypes (which releases the GIL for the call) as the op calls it: per frame a header read, then
    `tjDecompress2` into the clip's array, fast IDCT, smooth upsampling."""

    _TJPF_RGB = 0
    _TJFLAG_FASTDCT = 2048

    def __init__(self, path: str):
        self.path = path
        lib = ctypes.CDLL(path)
        lib.tjInitDecompress.restype = ctypes.c_void_p
        lib.tjInitDecompress.argtypes = []
        lib.tjDestroy.argtypes = [ctypes.c_void_p]
        lib.tjGetErrorStr2.restype = ctypes.c_char_p
        lib.tjGetErrorStr2.argtypes = [ctypes.c_void_p]
        lib.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + [
            ctypes.POINTER(ctypes.c_int)] * 4
        lib.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong,
                                      ctypes.c_void_p] + [ctypes.c_int] * 5
        self._lib = lib
        self._local = threading.local()
        self._handles: List[int] = []
        self._handles_lock = threading.Lock()

    def close(self) -> None:
        """Destroys every thread's handle (after the threads that decode are done)."""
        with self._handles_lock:
            for handle in self._handles:
                self._lib.tjDestroy(handle)
            self._handles.clear()

    def _check(self, handle: int, rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what}: {self._lib.tjGetErrorStr2(handle).decode()}")

    def _header(self, handle: int, jpeg: bytes) -> Tuple[int, int]:
        w, h, subsampling, colorspace = (ctypes.c_int() for _ in range(4))
        self._check(handle, self._lib.tjDecompressHeader3(
            handle, jpeg, len(jpeg), ctypes.byref(w), ctypes.byref(h), ctypes.byref(subsampling),
            ctypes.byref(colorspace)), "tjDecompressHeader3")
        return h.value, w.value

    def decode_clip(self, frames: Sequence[bytes]) -> np.ndarray:
        """As decode_clip, through the op's library; one TurboJPEG handle per thread, as the op
        keeps one."""
        handle = getattr(self._local, "handle", None)
        if handle is None:
            handle = self._local.handle = self._lib.tjInitDecompress()
            if not handle:
                raise RuntimeError(f"tjInitDecompress failed ({self.path})")
            with self._handles_lock:
                self._handles.append(handle)
        h, w = self._header(handle, frames[0])
        clip = np.empty((len(frames), h, w, 3), np.uint8)
        for k, jpeg in enumerate(frames):
            self._header(handle, jpeg)
            self._check(handle, self._lib.tjDecompress2(
                handle, jpeg, len(jpeg), clip[k].ctypes.data, w, 0, h, self._TJPF_RGB,
                self._TJFLAG_FASTDCT), "tjDecompress2")
        return clip


def decode_clips(share: Sequence[Sequence[bytes]],
                 decode: Callable[[Sequence[bytes]], np.ndarray] = decode_clip) -> int:
    """The bound's work on one thread: each clip decoded (by `decode`). Returns the frames
    decoded."""
    return sum(len(decode(frames)) for frames in share)


def bound_reader(clips: Sequence[Sequence[bytes]], threads: int,
                 closers: List[Callable[[], None]],
                 decode: Callable[[Sequence[bytes]], np.ndarray] = decode_clip
                 ) -> Callable[[], int]:
    """A reader decoding every clip with `decode` on `threads` threads (each its share, clip by
    clip; one thread: the calling one). Returns the frames decoded per call; the thread pool's
    shutdown is appended to `closers`."""
    if threads <= 1:
        return lambda: decode_clips(clips, decode)
    shares = [clips[i::threads] for i in range(threads)]
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    closers.append(pool.shutdown)
    return lambda: sum(pool.map(lambda share: decode_clips(share, decode), shares))
