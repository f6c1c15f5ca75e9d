"""Every picture tf.io.decode_image reads (JPEG, PNG, BMP, a GIF's first frame) decodes through
every fused path (decode_jpeg_warped, GulpDataset's frames, the FFRecord recipe) to what
tf.io.decode_image(channels=3, expand_animations=False) + the same warp gives, within 2 levels
(a lossless picture decoded unwarped: exactly; a BMP: PIL's pixels, see picture_kinds_testing); a
damaged picture's error names it (issue 34)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

import tf_gulp
from tf_gulp import transforms as T
from tf_gulp.ffrecord import FileWriter
from tf_gulp.ops import decode_jpeg_warped, similarity_warp

from picture_kinds_testing import HEIGHT, KINDS, WIDTH, lossless, reference, write_gulp
from warp_testing import affine_matrix, constant_warp

OUT = (24, 32)
# A crop, flipped and rotated a little: output (x, y) -> input pixels.
MATRIX = affine_matrix((HEIGHT, WIDTH), OUT, crop_hw=(30, 41), crop_center=(-3, 4), degrees=7,
                       flip_h=True)
WARP = constant_warp(MATRIX, OUT)
RESIZE = [T.Resize(OUT)]


def warped_reference(data: bytes) -> np.ndarray:
    image = reference(data)
    return similarity_warp(image[np.newaxis], MATRIX[np.newaxis], OUT)[0].numpy()


def assert_close(got: np.ndarray, want: np.ndarray, what: str, exact: bool = False) -> None:
    """Within 2 levels, or `exact`ly (a lossless picture's decode, no warp)."""
    assert got.shape == want.shape, what
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32)).max()
    assert diff <= (0 if exact else 2), f"{what}: differs by {diff} levels"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_decode_jpeg_warped_equals_decode_image_then_warp(kind):
    data = KINDS[kind](1)
    got = decode_jpeg_warped(data, WARP, dct_scaling=False).numpy()
    assert_close(got, warped_reference(data), kind)
    # The whole picture, unwarped: the pixels themselves.
    whole = decode_jpeg_warped(data, [T.Resize((HEIGHT, WIDTH))], dct_scaling=False).numpy()
    assert_close(whole, reference(data), kind + " (whole)", exact=lossless(kind))


def test_gulp_frames_of_every_kind(tmp_path):
    pictures = {kind: make(2) for kind, make in KINDS.items()}
    write_gulp(tmp_path / "g", pictures)
    fused = tf_gulp.GulpDataset(str(tmp_path / "g"), augment=WARP, dct_scaling=False)
    plain = tf_gulp.GulpDataset(str(tmp_path / "g"))
    seen = 0
    for f, p in zip(fused, plain):
        kind = f["id"].numpy().decode()
        assert_close(f["frames"][0].numpy(), warped_reference(pictures[kind]), kind)
        frame = p["frames"][0].numpy()
        want = reference(pictures[kind])
        # The unwarped reader keeps a gray picture gray (one channel), as gulpio2 does.
        if frame.shape[-1] == 1:
            assert kind in ("jpeg_gray", "png_gray", "png_gray_alpha", "bmp_gray"), kind
            want = want[..., :1]
        assert_close(frame, want, kind + " (plain)", exact=lossless(kind))
        seen += 1
    assert seen == len(KINDS)


def test_ffrecord_recipe_reads_every_kind(tmp_path):
    kinds = sorted(KINDS)
    path = str(tmp_path / "pictures.ffr")
    with FileWriter(path, len(kinds)) as w:
        for kind in kinds:
            w.write_one(KINDS[kind](3))
    ds = tf_gulp.FFRecordDataset(path, batch_size=len(kinds))
    ds = ds.map(lambda batch: decode_jpeg_warped(batch, WARP, dct_scaling=False))
    got = next(iter(ds)).numpy()
    for i, kind in enumerate(kinds):
        assert_close(got[i], warped_reference(KINDS[kind](3)), kind)


def test_a_picture_of_another_format_is_refused_naming_its_place():
    buf = io.BytesIO()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(buf, "TIFF")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"picture 1 \(element 1\): x.tif: a TIFF picture: not supported"):
        decode_jpeg_warped([KINDS["png_rgb"](1), buf.getvalue()], RESIZE, names=["a.png", "x.tif"])


def test_errors_name_the_picture():
    damaged = KINDS["png_rgb"](4)[:-40]
    with pytest.raises(tf.errors.DataLossError,
                       match=r"picture 1 \(element 1\): train.ffr record 17: corrupt PNG"):
        decode_jpeg_warped([KINDS["png_rgb"](4), damaged], RESIZE,
                           names=["train.ffr record 16", "train.ffr record 17"])
    jpeg = KINDS["jpeg_cmyk_adobe"](4)
    with pytest.raises(tf.errors.DataLossError, match=r"picture 0 \(element 0\): corrupt JPEG"):
        decode_jpeg_warped(jpeg[:len(jpeg) // 2], RESIZE)


def test_gulp_frame_errors_name_item_and_frame(tmp_path):
    write_gulp(tmp_path / "g", {"ok": KINDS["png_rgb"](5), "bad": KINDS["png_rgb"](5)[:-40]})
    with pytest.raises(tf.errors.DataLossError, match=r"id 'bad' frame 0 .*corrupt PNG"):
        list(tf_gulp.GulpDataset(str(tmp_path / "g")))


def test_ffrecord_errors_name_the_file_and_the_record(tmp_path):
    path = str(tmp_path / "pictures.ffr")
    good = KINDS["jpeg_rgb_420"](6)
    with FileWriter(path, 3) as w:
        for record in (good, good[:len(good) // 2], good):
            w.write_one(record)
    ds = tf_gulp.FFRecordDataset(path, batch_size=3).decode_jpeg_warped(RESIZE)
    with pytest.raises(tf.errors.DataLossError, match=rf"{path} record 1: corrupt JPEG"):
        next(iter(ds))
