"""The augment list's geometry means what torchvision.transforms.v2 means (issue 46 item 2).

torchvision is not installed where the suite runs, so its definitions are written here in numpy,
independently of the kernels: ``RandomResizedCrop.get_params`` (10 tries of a uniform area fraction
and a log-uniform aspect ratio, whole pixels, else the centred crop clamped to the ratio range),
``Resize`` (the shorter side to s, the longer truncated), ``center_crop`` (rounded offset) and
bilinear resampling without antialiasing (``interpolate(..., align_corners=False)``: half-pixel
centres, coordinates clamped at 0 and at the last pixel). Pictures are PNGs, decoded exactly, so
the only difference left is the warp's rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf
from scipy import stats

from tf_gulp.ops import decode_jpeg_warped
from tf_gulp.ops.image.warp_ops import similarity_transform_matrices
from tf_gulp.transforms import (CenterCrop, RandomHorizontalFlip, RandomResizedCrop,
                                RandomVerticalFlip, Resize)


def tv_resize(picture: np.ndarray, height: int, width: int) -> np.ndarray:
    """torchvision's bilinear resize without antialiasing, in float."""

    def axis(size_in: int, size_out: int):
        x = (np.arange(size_out) + 0.5) * (size_in / size_out) - 0.5
        x = np.maximum(x, 0.0)
        lo = np.minimum(np.floor(x).astype(int), size_in - 1)
        hi = np.minimum(lo + 1, size_in - 1)
        return lo, hi, x - lo

    y0, y1, ly = axis(picture.shape[0], height)
    x0, x1, lx = axis(picture.shape[1], width)
    p = picture.astype(np.float64)
    top = p[y0][:, x0] * (1 - lx)[None, :, None] + p[y0][:, x1] * lx[None, :, None]
    bottom = p[y1][:, x0] * (1 - lx)[None, :, None] + p[y1][:, x1] * lx[None, :, None]
    return top * (1 - ly)[:, None, None] + bottom * ly[:, None, None]


def tv_center_crop(picture: np.ndarray, height: int, width: int) -> np.ndarray:
    top = int(round((picture.shape[0] - height) / 2.0))
    left = int(round((picture.shape[1] - width) / 2.0))
    return picture[top:top + height, left:left + width]


def tv_resize_shorter(picture: np.ndarray, size: int) -> np.ndarray:
    h, w = picture.shape[:2]
    if h <= w:
        return tv_resize(picture, size, int(size * w / h))
    return tv_resize(picture, int(size * h / w), size)


def tv_get_params(rng: np.random.Generator, height: int, width: int, scale=(0.08, 1.0),
                  ratio=(3 / 4, 4 / 3)):
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target * aspect)))
        h = int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def crop_of(matrix: np.ndarray, out_h: int, out_w: int):
    """(top, left, height, width, flipped left-right) of a RandomResizedCrop matrix (output ->
    input); a top-bottom flip is ``matrix[1, 1] < 0``."""
    flipped = matrix[0, 0] < 0
    sx, sy = abs(matrix[0, 0]), abs(matrix[1, 1])
    # The input position of the crop's first column and row, wherever the flips put them.
    x_first = matrix[0, 2] + min(0.0, matrix[0, 0] * (out_w - 1))
    y_first = matrix[1, 2] + min(0.0, matrix[1, 1] * (out_h - 1))
    return y_first + 0.5 - 0.5 * sy, x_first + 0.5 - 0.5 * sx, sy * out_h, sx * out_w, flipped


def picture(h: int, w: int, seed: int = 0) -> np.ndarray:
    """Smooth content (so the rounding of a half-pixel sits within a level) plus a gradient
    that tells every position apart."""
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([128 + 100 * np.sin(x / 7.0 + seed), 128 + 100 * np.cos(y / 5.0),
                    (x + 2 * y) % 256], axis=-1)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def decode(pictures, augment, **kwargs) -> np.ndarray:
    png = [tf.io.encode_png(p) for p in pictures]
    return decode_jpeg_warped(tf.stack(png), augment, **kwargs).numpy().astype(np.float64)


def assert_close(got: np.ndarray, want: np.ndarray) -> None:
    # The kernels warp in fixed point and round once; the reference is exact in float.
    diff = np.abs(got - np.round(want))
    assert diff.max() <= 1.0, diff.max()
    assert diff.mean() < 0.15, diff.mean()


@pytest.mark.parametrize("hw", [(375, 500), (500, 375), (240, 320)])
def test_resize_then_center_crop_is_torchvisions(hw):
    image = picture(*hw)
    got = decode([image], [Resize(256), CenterCrop(224)])[0]
    assert_close(got, tv_center_crop(tv_resize_shorter(image, 256), 224, 224))


def test_resize_to_a_size_and_center_crop_alone():
    image = picture(120, 160)
    assert_close(decode([image], [Resize((60, 90))])[0], tv_resize(image, 60, 90))
    assert_close(decode([image], [CenterCrop((100, 64))])[0],
                 tv_center_crop(image.astype(np.float64), 100, 64))


def test_a_center_crop_larger_than_the_picture_pads_with_zeros():
    image = picture(20, 30)
    got = decode([image], [CenterCrop(40)])[0]
    # torchvision pads (40 - 20) // 2 = 10 rows on top, (40 - 30) // 2 = 5 columns on the left.
    assert np.all(got[:10] == 0) and np.all(got[:, :5] == 0)
    assert np.all(got[30:] == 0) and np.all(got[:, 35:] == 0)
    np.testing.assert_array_equal(got[10:30, 5:35], image)


def test_random_resized_crops_are_torchvisions_crop_resize_and_flip():
    image = picture(240, 320, seed=3)
    augment = [RandomResizedCrop((96, 112)), RandomHorizontalFlip(), RandomVerticalFlip(0.3)]
    elements = np.arange(24)
    got = decode([image] * len(elements), augment, seed=5, elements=elements)
    matrices = similarity_transform_matrices(np.tile([[240, 320]], (len(elements), 1)), augment,
                                             seed=5, elements=elements).numpy()
    flips = 0
    for out, matrix in zip(got, matrices):
        top, left, h, w, flipped = crop_of(matrix.astype(np.float64), 96, 112)
        for v in (top, left, h, w):
            assert abs(v - round(v)) < 1e-3, (top, left, h, w)
        top, left, h, w = (int(round(v)) for v in (top, left, h, w))
        assert 0 <= top and top + h <= 240 and 0 <= left and left + w <= 320
        want = tv_resize(image[top:top + h, left:left + w], 96, 112)
        if flipped:
            want = want[:, ::-1]
        if matrix[1, 1] < 0:
            want = want[::-1]
        flips += flipped
        # An enlarged crop's outermost output pixels sample half a pixel past its edge: there
        # the kernel reads the picture's next pixel where torchvision repeats the crop's edge
        # (docs/images.md). Inside, the grids are the same.
        my = int(math.ceil(0.5 / min(1.0, h / 96))) if h < 96 else 0
        mx = int(math.ceil(0.5 / min(1.0, w / 112))) if w < 112 else 0
        assert_close(out[my:96 - my, mx:112 - mx], want[my:96 - my, mx:112 - mx])
    assert 3 <= flips <= 21


def test_random_resized_crop_draws_torchvisions_distribution():
    # The C++ draws against get_params on numpy's generator: crop area fraction, aspect ratio and
    # the horizontal place, by two-sample Kolmogorov-Smirnov tests.
    n, (h, w) = 3000, (240, 320)
    augment = [RandomResizedCrop(64, scale=(0.2, 1.0), ratio=(0.5, 2.0))]
    matrices = similarity_transform_matrices(np.tile([[h, w]], (n, 1)), augment, seed=11).numpy()
    ours = np.array([crop_of(m.astype(np.float64), 64, 64)[:4] for m in matrices])
    rng = np.random.default_rng(0)
    theirs = np.array([tv_get_params(rng, h, w, (0.2, 1.0), (0.5, 2.0)) for _ in range(n)],
                      np.float64)
    for name, a, b in (("area", ours[:, 2] * ours[:, 3], theirs[:, 2] * theirs[:, 3]),
                       ("ratio", ours[:, 3] / ours[:, 2], theirs[:, 3] / theirs[:, 2]),
                       ("left", ours[:, 1], theirs[:, 1])):
        assert stats.ks_2samp(a, b).pvalue > 1e-3, name
