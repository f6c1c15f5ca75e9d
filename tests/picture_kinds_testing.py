"""Pictures of every kind tf.io.decode_image reads, made here (PIL, simplejpeg,
TensorFlow's PNG encoder): what real image datasets hold among their RGB JPEGs (CMYK and YCCK
JPEGs, grayscale, progressive, restart markers, every chroma subsampling, PNG of every colour type
and bit depth, uncompressed BMPs, GIFs: interlaced, transparent, animated). Odd sizes, so no picture is a whole number of iMCUs."""

from __future__ import annotations

import io
import json
import os
from typing import Callable, Dict

import numpy as np
import simplejpeg
import tensorflow as tf
from PIL import Image

HEIGHT, WIDTH = 45, 61


def smooth_rgb(seed: int, height: int = HEIGHT, width: int = WIDTH, channels: int = 3) -> np.ndarray:
    """Gradients plus a little noise: JPEG-friendly content that still differs per pixel."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    planes = [(x * (3 + c) + y * (5 - c) + 40 * c) % 256 for c in range(channels)]
    out = np.stack(planes, axis=-1).astype(np.int32) + rng.integers(-6, 7, (height, width, channels))
    return np.clip(out, 0, 255).astype(np.uint8)


def _pil(array: np.ndarray, mode: str, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array, mode).save(buf, fmt, **kwargs)
    return buf.getvalue()


def _strip_adobe(jpeg: bytes) -> bytes:
    """A CMYK JPEG without its APP14 Adobe segment: plain (not inverted) CMYK."""
    i = jpeg.index(b"\xff\xee")
    length = int.from_bytes(jpeg[i + 2:i + 4], "big")
    return jpeg[:i] + jpeg[i + 2 + length:]


def _png16(seed: int, channels: int) -> bytes:
    pixels = smooth_rgb(seed, channels=channels).astype(np.uint16) * 257 + 100
    return tf.io.encode_png(tf.constant(pixels)).numpy()


KINDS: Dict[str, Callable[[int], bytes]] = {
    "jpeg_rgb_420": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s), 90, colorsubsampling="420"),
    "jpeg_rgb_444": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s), 90, colorsubsampling="444"),
    "jpeg_rgb_422": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s), 90, colorsubsampling="422"),
    "jpeg_rgb_411": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s), 90, colorsubsampling="411"),
    "jpeg_rgb_440": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s), 90, colorsubsampling="440"),
    "jpeg_gray": lambda s: _pil(smooth_rgb(s)[..., 0], "L", "JPEG", quality=90),
    "jpeg_progressive": lambda s: _pil(smooth_rgb(s), "RGB", "JPEG", quality=90, progressive=True),
    "jpeg_restart_markers": lambda s: _pil(smooth_rgb(s), "RGB", "JPEG", quality=90,
                                           restart_marker_blocks=3),
    "jpeg_cmyk_adobe": lambda s: _pil(smooth_rgb(s, channels=4), "CMYK", "JPEG", quality=90),
    "jpeg_cmyk_plain": lambda s: _strip_adobe(_pil(smooth_rgb(s, channels=4), "CMYK", "JPEG",
                                                   quality=90)),
    "jpeg_ycck": lambda s: simplejpeg.encode_jpeg(smooth_rgb(s, channels=4), 90, colorspace="CMYK"),
    "png_rgb": lambda s: _pil(smooth_rgb(s), "RGB", "PNG"),
    "png_rgba": lambda s: _pil(smooth_rgb(s, channels=4), "RGBA", "PNG"),
    "png_gray": lambda s: _pil(smooth_rgb(s)[..., 0], "L", "PNG"),
    "png_gray_alpha": lambda s: _pil(smooth_rgb(s, channels=2), "LA", "PNG"),
    "png_palette": lambda s: _palette(s, "PNG"),
    "png_16bit_rgb": lambda s: _png16(s, 3),
    "png_16bit_rgba": lambda s: _png16(s, 4),
    "png_interlaced": lambda s: _interlaced_png(s),
    "bmp_rgb": lambda s: _pil(smooth_rgb(s), "RGB", "BMP"),
    "bmp_rgba": lambda s: _pil(smooth_rgb(s, channels=4), "RGBA", "BMP"),
    "bmp_gray": lambda s: _pil(smooth_rgb(s)[..., 0], "L", "BMP"),
    "bmp_palette": lambda s: _palette(s, "BMP"),  # 8-bit, colours in its palette
    "gif_interlaced": lambda s: _pil(smooth_rgb(s), "RGB", "GIF"),  # PIL interlaces by default
    "gif_plain": lambda s: _pil(smooth_rgb(s), "RGB", "GIF", interlace=False),
    "gif_transparent": lambda s: _gif(s, transparency=3),
    "gif_animated": lambda s: _gif(s, save_all=True, append_images=[
        Image.fromarray(smooth_rgb(s + 1))]),
}


def _gif(seed: int, **kwargs) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(smooth_rgb(seed)).quantize(16).save(buf, "GIF", **kwargs)
    return buf.getvalue()


def _palette(seed: int, fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(smooth_rgb(seed)).quantize(64).save(buf, fmt)
    return buf.getvalue()


def _interlaced_png(seed: int) -> bytes:
    """An Adam7-interlaced RGB PNG, built by hand (PIL does not write interlaced PNGs)."""
    import struct
    import zlib

    pixels = smooth_rgb(seed)
    h, w, _ = pixels.shape
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
              (0, 1, 1, 2)]
    raw = b""
    for x0, y0, dx, dy in passes:
        sub = pixels[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        for row in sub:
            raw += b"\x00" + row.tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) +
            chunk(b"IEND", b""))


def reference(data: bytes) -> np.ndarray:
    """What TensorFlow decodes: tf.io.decode_image(channels=3), uint8 (a GIF's first frame);
    for a BMP what PIL decodes, as TensorFlow gives an 8-bit BMP's palette indices as gray."""
    if data[:2] == b"BM":
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return tf.io.decode_image(data, channels=3, expand_animations=False).numpy()


def lossless(kind: str) -> bool:
    """Whether `kind` decodes to exactly one answer (not a JPEG: IDCT and upsampling vary)."""
    return not kind.startswith("jpeg")


def write_gulp(path, pictures: dict) -> None:
    """One chunk, one item per picture (gulp's layout: frames padded to 4 bytes)."""
    os.makedirs(path)
    data, meta = b"", {}
    for name, picture in pictures.items():
        pad = (4 - len(picture) % 4) % 4
        meta[name] = {"frame_info": [[len(data), pad, len(picture) + pad]],
                      "meta_data": [{"id": name, "label": 0}]}
        data += picture + b"\0" * pad
    with open(os.path.join(path, "data_0.gulp"), "wb") as f:
        f.write(data)
    with open(os.path.join(path, "meta_0.gmeta"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
