"""Decoding the inputs of an ingest (videos, images, folders of frames) into JPEG frames.

Everything happens in this process, with PyAV (FFmpeg's libraries) for videos and non-JPEG images
and libjpeg-turbo (simplejpeg) for JPEGs: no ffmpeg subprocesses, no temporary frame files.

Frame options (:class:`FrameOptions`):

* ``fps``: resample videos to this frame rate. Output frame ``k`` is the source frame on screen at
  time ``t0 + k / fps`` (``t0`` the first frame's timestamp, or the trim start), computed with exact
  fractions from the stream's timestamps, so a 10 s clip at 30 fps resampled to 10 fps gives exactly
  100 frames, dropping or repeating source frames as needed. Without it every decoded frame is kept.
* ``shorter_side``: resize so that the shorter side is exactly this many pixels and the longer one
  is ``round(longer * shorter_side / shorter)`` with ties rounded up, computed in integers (no
  floating point: 1920x1080 at 256 gives 455x256, 4:3 at 256 gives 341x256). Applied to every
  frame, upscaling small inputs too. Without it frames keep their size.
* ``max_frames``: keep at most this many frames per item (the first ones, after resampling);
  decoding stops there.
* ``jpeg_quality`` / ``jpeg_subsampling``: libjpeg-turbo settings for frames that are (re-)encoded
  (default 90 and 4:4:4, gulpio2's settings).
* ``reencode_jpeg``: JPEG inputs (image files, folders of frames) are stored byte for byte unless a
  resize is asked for or this is set; their header is still parsed, so a file that is not a
  readable JPEG is reported as bad input. Grayscale, YCbCr and RGB JPEGs are stored as they are;
  CMYK ones are converted.
* ``interpolation``: the resampling filter of FFmpeg's swscale for resizes (``"bilinear"``,
  ``"area"``, ``"bicubic"``, ``"lanczos"``).

Videos are converted to RGB (8 bits per channel); grayscale images stay grayscale (one-component
JPEGs), colour images become RGB (alpha is dropped, palettes expanded).

A file that cannot be opened or decoded raises :class:`InputError`, naming the file.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import simplejpeg

from tf_gulp import _args as A

__all__ = ["FrameOptions", "InputError", "resized_size", "parse_rate", "decode_video",
           "load_image", "load_frame_folder", "is_jpeg", "require_av"]

_INTERPOLATIONS = {"bilinear": "BILINEAR", "area": "AREA", "bicubic": "BICUBIC",
                   "lanczos": "LANCZOS"}
_SUBSAMPLINGS = ("444", "422", "420", "440", "411")
# JPEG colour spaces libjpeg-turbo decodes to RGB/gray itself (so GulpDataset reads them).
_PASSTHROUGH_COLORSPACES = ("Gray", "YCbCr", "RGB")
_GRAY_PIX_FMTS = ("gray", "gray10le", "gray12le", "gray16le", "gray16be", "ya8", "ya16le",
                  "ya16be", "monow", "monob", "grayf32le")


class InputError(Exception):
    """An input file (video, image, frame folder) is missing or cannot be decoded.

    Attributes:
        path: the file or folder.
        reason: what went wrong.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> Tuple[Any, ...]:
        return (InputError, (self.path, self.reason))


def _reason(error: BaseException) -> str:
    """An FFmpeg/OS error's message without the errno and file name PyAV adds."""
    text = getattr(error, "strerror", None)
    return str(text) if text else str(error)


def require_av() -> Any:
    """Import PyAV, or raise ImportError saying how to install it."""
    try:
        import av  # noqa: F401
    except ImportError as e:  # pragma: no cover - PyAV is installed in the test environment
        raise ImportError("decoding videos and non-JPEG images needs PyAV: pip install av") from e
    return av


def parse_rate(value: Union[str, int, float, Fraction]) -> Fraction:
    """A frame rate as an exact fraction: ``"25"``, ``"29.97"``, ``"30000/1001"``, 12.5."""
    try:
        rate = Fraction(str(value).strip()) if not isinstance(value, Fraction) else value
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"frame rate {value!r} is not a number like 25, 29.97 or 30000/1001")
    if rate <= 0:
        raise ValueError(f"frame rate must be positive, got {value!r}")
    return rate


def resized_size(width: int, height: int, shorter_side: Optional[int]) -> Tuple[int, int]:
    """``(width, height)`` after resizing the shorter side to ``shorter_side`` (see the module
    docstring for the rounding); unchanged when ``shorter_side`` is None."""
    if not shorter_side:
        return width, height
    s = int(shorter_side)
    if width <= height:
        # round(height * s / width), ties up, in integers.
        return s, max(1, (2 * height * s + width) // (2 * width))
    return max(1, (2 * width * s + height) // (2 * height)), s


@dataclasses.dataclass(frozen=True)
class FrameOptions:
    """How inputs become stored frames (see the module docstring). Picklable and hashable."""

    fps: Optional[Fraction] = None
    shorter_side: Optional[int] = None
    max_frames: Optional[int] = None
    jpeg_quality: int = 90
    jpeg_subsampling: str = "444"
    reencode_jpeg: bool = False
    interpolation: str = "bilinear"
    decode_threads: int = 0  # 0: FFmpeg's choice

    def __post_init__(self) -> None:
        if self.fps is not None:
            object.__setattr__(self, "fps", parse_rate(self.fps))
        what = "FrameOptions: "
        A.optional_integer(self.shorter_side, "shorter_side", minimum=1, what=what)
        A.optional_integer(self.max_frames, "max_frames", minimum=1, what=what)
        A.integer(self.jpeg_quality, "jpeg_quality", minimum=1, maximum=100, what=what)
        A.choice(self.jpeg_subsampling, "jpeg_subsampling", _SUBSAMPLINGS, what=what)
        A.boolean(self.reencode_jpeg, "reencode_jpeg", what=what)
        A.choice(self.interpolation, "interpolation", tuple(_INTERPOLATIONS), what=what)
        A.integer(self.decode_threads, "decode_threads", minimum=0, what=what)

    @property
    def stores_jpeg_as_is(self) -> bool:
        """Whether JPEG inputs are stored byte for byte."""
        return self.shorter_side is None and not self.reencode_jpeg

    def describe(self) -> Dict[str, Any]:
        """The options that change what is stored, as JSON-friendly values (for ingest records;
        ``decode_threads`` is left out)."""
        return {"fps": None if self.fps is None else str(self.fps),
                "shorter_side": self.shorter_side, "max_frames": self.max_frames,
                "jpeg_quality": self.jpeg_quality, "jpeg_subsampling": self.jpeg_subsampling,
                "reencode_jpeg": self.reencode_jpeg, "interpolation": self.interpolation}


# --------------------------------------------------------------------------------------------------
# Encoding


def is_jpeg(data: bytes) -> bool:
    """Whether ``data`` starts with a JPEG start-of-image marker."""
    return data[:3] == b"\xff\xd8\xff"


def encode_rgb(array: np.ndarray, options: FrameOptions) -> bytes:
    """JPEG bytes of an (H, W, 3) RGB or (H, W) / (H, W, 1) gray uint8 array."""
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    array = np.ascontiguousarray(array)
    if array.shape[2] == 1:
        return simplejpeg.encode_jpeg(array, quality=options.jpeg_quality, colorspace="GRAY",
                                      colorsubsampling="Gray")
    return simplejpeg.encode_jpeg(array, quality=options.jpeg_quality, colorspace="RGB",
                                  colorsubsampling=options.jpeg_subsampling)


_local = threading.local()
_SCALERS_KEPT = 32


def _forget_scalers() -> None:
    # A scaler context made before a fork must not be used after it in the child.
    _local.__dict__.pop("scalers", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_scalers)


def _reformat(frame: Any, width: int, height: int, fmt: str, interpolation: str) -> Any:
    """``frame`` converted to ``fmt`` at ``width`` x ``height`` by swscale.

    ``VideoFrame.reformat`` / ``to_ndarray(format=...)`` build a new scaler context on every
    call, which costs more than decoding a small frame. This keeps one ``VideoReformatter`` (one
    scaler context) per conversion (input size and format -> output size and format), the
    ``_SCALERS_KEPT`` most recently used, per thread (and forgotten in a forked child): a video
    reuses one for all its frames, and images of a few common sizes reuse theirs.
    """
    cache = getattr(_local, "scalers", None)
    if cache is None:
        cache = _local.scalers = collections.OrderedDict()
    key = (frame.width, frame.height, frame.format.name, width, height, fmt, interpolation)
    reformatter = cache.get(key)
    if reformatter is None:
        from av.video.reformatter import VideoReformatter
        reformatter = cache[key] = VideoReformatter()
        if len(cache) > _SCALERS_KEPT:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    # One thread: ingest parallelism is one process per worker, and swscale's slice threads
    # would not survive a fork of this process.
    return reformatter.reformat(frame, width=width, height=height, format=fmt,
                                interpolation=interpolation, threads=1)


def _frame_to_array(frame: Any, options: FrameOptions, gray: bool) -> np.ndarray:
    """An av.VideoFrame as an RGB (or gray) array, resized per ``options``."""
    width, height = resized_size(frame.width, frame.height, options.shorter_side)
    fmt = "gray" if gray else "rgb24"
    if (width, height) == (frame.width, frame.height) and frame.format.name == fmt:
        return frame.to_ndarray()
    return _reformat(frame, width, height, fmt,
                     _INTERPOLATIONS[options.interpolation]).to_ndarray()


# --------------------------------------------------------------------------------------------------
# Videos


def _open_video(path: str, options: FrameOptions) -> Tuple[Any, Any]:
    av = require_av()
    try:
        container = av.open(path)
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except (av.FFmpegError, OSError, ValueError) as e:
        raise InputError(path, f"cannot open ({_reason(e)})") from None
    if not container.streams.video:
        container.close()
        raise InputError(path, "has no video stream")
    stream = container.streams.video[0]
    try:
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = int(options.decode_threads)
    except Exception:  # pragma: no cover - a codec that refuses threading still decodes
        pass
    return container, stream


def _seconds(value: Any) -> Fraction:
    """A PyAV time base (a Fraction) as an exact Fraction."""
    return Fraction(value.numerator, value.denominator)


def _exact(seconds: Any) -> Fraction:
    """Seconds as the fraction they were written as: 0.2 is 1/5, not the binary float's
    3602879701896397/18014398509481984 (which would put a frame at exactly 0.2 s outside)."""
    if isinstance(seconds, float):
        return Fraction(repr(seconds))
    return Fraction(seconds)


def decode_video(path: str, options: FrameOptions, start: Optional[float] = None,
                 end: Optional[float] = None) -> Tuple[List[bytes], Dict[str, Any]]:
    """Decode a video file into JPEG frames.

    Args:
        path: any file PyAV (FFmpeg) can open that has a video stream; the first one is used.
        options: see :class:`FrameOptions`.
        start, end: keep only ``[start, end)`` seconds from the beginning of the stream (e.g. a
            Kinetics segment of a full YouTube video); None means from the start / to the end.
            Without ``fps``, the frames whose timestamps fall in the range are kept; with it, the
            clock of the resampled frames starts at ``start``.

    Returns:
        ``(jpegs, info)``: the JPEG bytes of each frame and ``{"num_frames", "fps", "height",
        "width"}`` (``fps`` of the stored frames, a float, or None when unknown).

    Raises:
        InputError: the file cannot be opened, has no video stream, fails to decode, or gives no
            frame in the requested range.
    """
    av = require_av()
    container, stream = _open_video(path, options)
    try:
        rate = stream.average_rate or stream.guessed_rate
        source_step = _seconds(1 / rate) if rate else Fraction(1, 25)
        time_base = _seconds(stream.time_base)
        origin = Fraction(stream.start_time or 0) * time_base
        t_start = None if start is None else origin + _exact(start)
        t_end = None if end is None else origin + _exact(end)
        try:
            if t_start is not None and t_start > origin:
                container.seek(int(t_start / time_base), stream=stream, backward=True)
            jpegs, size = _decode_frames(container, stream, options, source_step, t_start, t_end)
        except (av.FFmpegError, OSError, ValueError, MemoryError) as e:
            raise InputError(path, f"cannot decode ({_reason(e)})") from None
    finally:
        container.close()
    if not jpegs:
        where = "" if start is None and end is None else f" between {start} s and {end} s"
        raise InputError(path, f"no video frame{where}")
    if options.fps is not None:
        fps: Optional[float] = float(options.fps)
    else:
        fps = float(1 / source_step) if rate else None
    return jpegs, {"num_frames": len(jpegs), "fps": fps, "height": int(size[0]),
                   "width": int(size[1])}


def _decode_frames(container: Any, stream: Any, options: FrameOptions, source_step: Fraction,
                   t_start: Optional[Fraction], t_end: Optional[Fraction]
                   ) -> Tuple[List[bytes], Tuple[int, int]]:
    limit = options.max_frames
    out: List[bytes] = []
    size = (0, 0)

    def encode(frame: Any) -> bytes:
        nonlocal size
        array = _frame_to_array(frame, options, gray=False)
        size = array.shape[:2]
        return encode_rgb(array, options)

    def frame_time(frame: Any, previous: Optional[Fraction]) -> Fraction:
        if frame.pts is None:
            return Fraction(0) if previous is None else previous + source_step
        return Fraction(frame.pts) * _seconds(frame.time_base or stream.time_base)

    previous: Optional[Fraction] = None
    if options.fps is None:
        for frame in container.decode(stream):
            t = previous = frame_time(frame, previous)
            if t_start is not None and t < t_start:
                continue
            if t_end is not None and t >= t_end:
                break
            out.append(encode(frame))
            if limit is not None and len(out) >= limit:
                break
        return out, size

    # Resampling. Source frame i is on screen during [t_i, t_i+1); output frame k is the one on
    # screen at t0 + k / fps, t0 being the trim start or else the first frame's time.
    step = 1 / options.fps
    t0 = t_start
    k = 0
    held: Any = None
    held_time = Fraction(0)
    held_jpeg: Optional[bytes] = None

    def emit_before(until: Fraction) -> bool:
        """Output ``held`` for each target time before ``until``; False when finished."""
        nonlocal k, held_jpeg
        while True:
            target = t0 + k * step
            if t_end is not None and target >= t_end:
                return False
            if target >= until:
                return True
            if held_jpeg is None:
                held_jpeg = encode(held)
            out.append(held_jpeg)
            k += 1
            if limit is not None and len(out) >= limit:
                return False

    for frame in container.decode(stream):
        t = previous = frame_time(frame, previous)
        if held is None:
            if t0 is None:
                t0 = t
        elif t <= held_time:
            continue  # a timestamp going backwards: keep the frame already on screen
        elif not emit_before(t):
            return out, size
        held, held_time, held_jpeg = frame, t, None
    if held is not None:
        duration = source_step
        if held.duration:
            duration = Fraction(held.duration) * _seconds(held.time_base or stream.time_base)
        emit_before(held_time + duration)
    return out, size


# --------------------------------------------------------------------------------------------------
# Images


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not an image file") from None
    except OSError as e:
        raise InputError(path, f"cannot read ({e.strerror or e})") from None


def _jpeg_header(path: str, data: bytes) -> Tuple[int, int, str]:
    try:
        height, width, colorspace, _sub = simplejpeg.decode_jpeg_header(data)
    except ValueError as e:
        raise InputError(path, f"not a readable JPEG ({e})") from None
    if height < 1 or width < 1:
        raise InputError(path, f"JPEG header says {width}x{height}")
    return height, width, colorspace


def _reencode_jpeg(path: str, data: bytes, colorspace: str, height: int, width: int,
                   options: FrameOptions) -> Tuple[bytes, Tuple[int, int]]:
    out_w, out_h = resized_size(width, height, options.shorter_side)
    gray = colorspace == "Gray"
    try:
        # Decode at the smallest libjpeg-turbo scale (1/2, 1/4, 1/8) still >= the target size.
        array = simplejpeg.decode_jpeg(data, colorspace="GRAY" if gray else "RGB",
                                       min_height=out_h, min_width=out_w)
    except ValueError as e:
        raise InputError(path, f"cannot decode JPEG ({e})") from None
    if array.shape[:2] != (out_h, out_w):
        av = require_av()
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(array if not gray else
                                                                array[:, :, 0]),
                                           format="gray" if gray else "rgb24")
        array = _reformat(frame, out_w, out_h, frame.format.name,
                          _INTERPOLATIONS[options.interpolation]).to_ndarray()
    return encode_rgb(array, options), (out_h, out_w)


def _decode_image_with_av(path: str, options: FrameOptions) -> Tuple[bytes, Tuple[int, int]]:
    av = require_av()
    try:
        with av.open(path) as container:
            if not container.streams.video:
                raise InputError(path, "is not an image (no picture stream)")
            frame = next(container.decode(container.streams.video[0]), None)
            if frame is None:
                raise InputError(path, "no picture could be decoded")
            gray = frame.format.name in _GRAY_PIX_FMTS
            array = _frame_to_array(frame, options, gray=gray)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except (av.FFmpegError, OSError, ValueError) as e:
        raise InputError(path, f"cannot decode image ({_reason(e)})") from None
    return encode_rgb(array, options), array.shape[:2]


def _decode_gif(path: str, data: bytes, options: FrameOptions) -> Tuple[bytes, Tuple[int, int]]:
    """A GIF's first frame by the readers' own decoder (cc/codec/gif_decoder.h: on its logical
    screen, the rest and transparent pixels black), so an ingested GIF holds the pixels the
    readers and decode_jpeg_warped give for the GIF itself; FFmpeg would fill the screen with the
    background colour instead."""
    from tf_gulp.gulp.index import _core  # pylint: disable=import-outside-toplevel

    try:
        array = _core().gulp_decode_jpeg(data)
    except ValueError as e:
        raise InputError(path, f"cannot decode GIF ({e})") from None
    av = require_av()
    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(array), format="rgb24")
    array = _frame_to_array(frame, options, gray=False)
    return encode_rgb(array, options), array.shape[:2]


def load_image(path: str, options: FrameOptions) -> Tuple[bytes, Tuple[int, int]]:
    """One image file as JPEG bytes and its stored ``(height, width)``.

    A JPEG is returned byte for byte when ``options.stores_jpeg_as_is`` (after checking that its
    header parses); otherwise it is decoded with libjpeg-turbo, resized and re-encoded. A GIF's
    first frame is decoded as the readers decode a GIF (:func:`_decode_gif`). Other formats (PNG,
    BMP, TIFF, WebP, ...) are decoded with PyAV and encoded.
    """
    data = _read_file(path)
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return _decode_gif(path, data, options)
    if is_jpeg(data):
        height, width, colorspace = _jpeg_header(path, data)
        if options.stores_jpeg_as_is and colorspace in _PASSTHROUGH_COLORSPACES:
            return data, (height, width)
        if colorspace in _PASSTHROUGH_COLORSPACES:
            return _reencode_jpeg(path, data, colorspace, height, width, options)
    return _decode_image_with_av(path, options)


_JPEG_SUFFIXES = (".jpg", ".jpeg", ".jpe", ".jfif")


def list_frame_files(folder: str) -> List[str]:
    """The JPEG frame files of a folder (``*.jpg``, ``*.jpeg``, any case), sorted by name with
    numbers compared as numbers (``2.jpg`` before ``10.jpg``)."""
    try:
        names = [n for n in os.listdir(folder)
                 if n.lower().endswith(_JPEG_SUFFIXES) and not n.startswith(".")]
    except FileNotFoundError:
        raise InputError(folder, "folder not found") from None
    except OSError as e:
        raise InputError(folder, f"cannot list ({e.strerror or e})") from None
    return [os.path.join(folder, n) for n in sorted(names, key=natural_key)]


def natural_key(name: str) -> Tuple[Any, ...]:
    """Sort key comparing digit runs as numbers: ``frame2`` < ``frame10``."""
    parts: List[Any] = []
    digits = ""
    text = ""
    for ch in name:
        if ch.isdigit():
            if text:
                parts.append((1, text))
                text = ""
            digits += ch
        else:
            if digits:
                parts.append((0, int(digits), digits))
                digits = ""
            text += ch
    if digits:
        parts.append((0, int(digits), digits))
    if text:
        parts.append((1, text))
    return tuple(parts)


def load_frame_folder(folder: str, options: FrameOptions) -> Tuple[List[bytes], Dict[str, Any]]:
    """A folder of JPEG frames (one video, e.g. 20BN Jester) as JPEG bytes, in name order.

    ``options.fps`` does not apply (frame files carry no timestamps); ``max_frames`` keeps the
    first ones.
    """
    paths = list_frame_files(folder)
    if options.max_frames is not None:
        paths = paths[:options.max_frames]
    if not paths:
        raise InputError(folder, "no JPEG frames (*.jpg) in the folder")
    frames = []
    size: Sequence[int] = (0, 0)
    for p in paths:
        jpeg, size = load_image(p, options)
        frames.append(jpeg)
    return frames, {"num_frames": len(frames), "height": int(size[0]), "width": int(size[1])}
