"""Pictures as PIL and image viewers show them, exactly (issue 45), on BMPs and GIFs written byte
by byte (picture_bytes_testing.py): top-down and bottom-up rows, 8-bit palettes, a GIF's first
frame at an offset on a larger logical screen. Each goes through the core's decoder as the gulp
readers use it (tf_gulp._core.gulp_decode_jpeg), GulpDataset and decode_jpeg_warped (the whole
picture, unwarped). TIFF and WebP pictures are refused by name; image ingest takes a GIF's first
frame as the readers decode it."""

from __future__ import annotations

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

import tf_gulp
from tf_gulp import _core
from tf_gulp.ops import decode_jpeg_warped
from tf_gulp.transforms import Resize

from picture_bytes_testing import bmp, gif, gif_composite
from picture_kinds_testing import write_gulp

RNG = np.random.default_rng(45)
# Widths 5 and 7: rows padded to 4 bytes at every depth.
RGB = RNG.integers(0, 256, (6, 5, 3), dtype=np.uint8)
RGBA = RNG.integers(0, 256, (4, 7, 4), dtype=np.uint8)
PALETTE = [tuple(int(v) for v in c) for c in RNG.integers(0, 256, (5, 3))]
INDICES = RNG.integers(0, 5, (5, 7), dtype=np.uint8)
GRAYS = [(v, v, v) for v in range(255, -1, -1)]  # a gray palette that is not the index ramp

BMPS = {
    "24bit_bottom_up": lambda: bmp(RGB),
    "24bit_top_down": lambda: bmp(RGB, top_down=True),
    "32bit_top_down": lambda: bmp(RGBA, top_down=True),
    "8bit_palette_bottom_up": lambda: bmp(INDICES, palette=PALETTE),
    "8bit_palette_top_down": lambda: bmp(INDICES, top_down=True, palette=PALETTE),
    "8bit_gray_palette": lambda: bmp(INDICES * 40, palette=GRAYS),
}


def pil_rgb(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def decodes(data: bytes, tmp_path) -> dict:
    """The picture decoded by the core (as the Python readers), GulpDataset and
    decode_jpeg_warped (unwarped, the whole picture): {path: array}."""
    core = _core.gulp_decode_jpeg(data)
    write_gulp(tmp_path / "g", {"p": data})
    plain = next(iter(tf_gulp.GulpDataset(str(tmp_path / "g"))))["frames"][0].numpy()
    warped = decode_jpeg_warped(data, [Resize(core.shape[:2])], dct_scaling=False).numpy()
    return {"core": core, "GulpDataset": plain, "decode_jpeg_warped": warped}


@pytest.mark.parametrize("kind", sorted(BMPS))
def test_bmp_pixels_equal_pils_exactly(kind, tmp_path):
    data = BMPS[kind]()
    want = pil_rgb(data)
    for path, got in decodes(data, tmp_path).items():
        if path == "core":  # the Python readers keep a gray picture one-channel
            assert (got.ndim == 2) == (kind == "8bit_gray_palette"), (kind, got.shape)
        if got.ndim == 2 or got.shape[-1] == 1:
            assert kind == "8bit_gray_palette" and (want == want[..., :1]).all(), (kind, path)
            got, want_here = got.reshape(got.shape[:2]), want[..., 0]
        else:
            want_here = want
        np.testing.assert_array_equal(got, want_here, err_msg=f"{kind} through {path}")


def test_a_palette_bmps_colours_are_not_its_indices():
    """tf.io.decode_bmp gives an 8-bit BMP's indices as gray; the palette is the picture."""
    data = bmp(INDICES, palette=PALETTE)
    np.testing.assert_array_equal(_core.gulp_decode_jpeg(data), np.asarray(PALETTE)[INDICES])
    assert (tf.io.decode_bmp(data).numpy()[..., 0] == INDICES).all()  # what this fixes


def test_a_damaged_palette_bmp_is_refused_naming_the_index():
    with pytest.raises(ValueError, match=r"colour index 7 at pixel \(2, 0\) outside its "
                                         r"palette of 5"):
        indices = INDICES.copy()
        indices[0, 2] = 7
        _core.gulp_decode_jpeg(bmp(indices, top_down=True, palette=PALETTE))
    data = bmp(INDICES, palette=PALETTE)
    with pytest.raises(ValueError, match="truncated BMP: a palette of 5 colours"):
        _core.gulp_decode_jpeg(data[:54 + 12])


# A 4x4 frame at (left 2, top 1) on a 7x6 screen, and variations.
FRAME = RNG.integers(0, 4, (4, 4), dtype=np.uint8)
COLOURS = [(200, 10, 10), (10, 200, 10), (10, 10, 200), (250, 250, 0)]
TALL = RNG.integers(0, 4, (11, 3), dtype=np.uint8)  # 11 rows: every interlace pass
GIFS = {
    "offset_on_a_larger_screen": ((7, 6), (2, 1), FRAME, {}),
    "local_colour_table": ((7, 6), (2, 1), FRAME, {"local": True}),
    "transparent_index": ((7, 6), (2, 1), FRAME, {"transparent": 1}),
    "background_index_unused": ((7, 6), (2, 1), FRAME, {"background": 3}),
    "interlaced_at_an_offset": ((6, 13), (1, 2), TALL, {"interlaced": True}),
    "cut_at_the_screens_edge": ((5, 4), (3, 2), FRAME, {}),
}


@pytest.mark.parametrize("kind", sorted(GIFS))
def test_gif_first_frame_on_its_screen(kind, tmp_path):
    """Screen-sized, as PIL (Image.open(f).size) and viewers size it; the frame's pixels at its
    offset equal PIL's exactly; the screen around it and transparent pixels are black."""
    screen, offset, indices, options = GIFS[kind]
    data = gif(screen, offset, indices, COLOURS, **options)
    want = gif_composite(screen, offset, indices, COLOURS, options.get("transparent"))
    pil = Image.open(io.BytesIO(data))
    # A frame reaching past the screen (the format says it lies within) is cut at its edge;
    # PIL grows the picture to hold it instead.
    assert pil.size == screen or kind == "cut_at_the_screens_edge"
    left, top = offset
    fh, fw = min(indices.shape[0], screen[1] - top), min(indices.shape[1], screen[0] - left)
    box = (slice(top, top + fh), slice(left, left + fw))
    shown = np.asarray(pil.convert("RGBA"))[box]
    opaque = shown[..., 3] > 0
    np.testing.assert_array_equal(want[box][opaque], shown[..., :3][opaque])  # PIL's pixels
    assert (want[box][~opaque] == 0).all()
    for path, got in decodes(data, tmp_path).items():
        np.testing.assert_array_equal(got, want, err_msg=f"{kind} through {path}")


@pytest.mark.parametrize("fmt,name", [("TIFF", "TIFF"), ("WEBP", "WebP")])
def test_tiff_and_webp_are_refused_by_name(fmt, name, tmp_path):
    buf = io.BytesIO()
    Image.fromarray(RGB).save(buf, fmt)
    data = buf.getvalue()
    message = rf"a {name} picture: not supported .* convert it first"
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"picture 0 \(element 0\): " + message):
        decode_jpeg_warped(data, [Resize((4, 4))])
    write_gulp(tmp_path / "g", {"p": data})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"id 'p' frame 0.*" + message):
        next(iter(tf_gulp.GulpDataset(str(tmp_path / "g"))))
    with pytest.raises(ValueError, match=message):
        _core.gulp_decode_jpeg(data)


def test_image_ingest_takes_a_gifs_first_frame_as_the_readers_decode_it(tmp_path):
    """A GIF in an image folder is ingested (as Keras's image_dataset_from_directory takes it):
    its first frame on its screen, the pixels GulpDataset gives for the GIF itself, JPEG-encoded
    (FFmpeg would fill the screen around the frame with the background colour)."""
    pytest.importorskip("av")
    from tf_gulp.gulp import FrameOptions, GulpIngestor, ImageFolderAdapter

    # Colours constant over the JPEG's 8x8 blocks (the frame at a block corner): the JPEG holds
    # them to a level or two, so the test sees the frame's place and the black around it.
    blocks = np.kron(RNG.integers(0, 4, (3, 2), dtype=np.uint8), np.ones((8, 8), np.uint8))
    data = gif((40, 32), (8, 8), blocks, COLOURS, interlaced=True)
    (tmp_path / "in" / "cls").mkdir(parents=True)
    (tmp_path / "in" / "cls" / "a.gif").write_bytes(data)
    (tmp_path / "in" / "cls" / "b.jpg").write_bytes(
        tf.io.encode_jpeg(RGB).numpy())
    adapter = ImageFolderAdapter(str(tmp_path / "in"), options=FrameOptions(jpeg_quality=95))
    GulpIngestor(adapter, str(tmp_path / "out"), videos_per_chunk=10, num_workers=1,
                 progress=False, write_label2idx=True)()
    items = {e["id"].numpy().decode(): e["frames"][0].numpy()
             for e in tf_gulp.GulpDataset(str(tmp_path / "out"), dct_method="accurate")}
    assert sorted(items) == ["cls/a.gif", "cls/b.jpg"]
    want = gif_composite((40, 32), (8, 8), blocks, COLOURS)
    assert items["cls/a.gif"].shape == want.shape
    assert np.abs(items["cls/a.gif"].astype(int) - want).max() <= 2
